package controller

import (
	"xce/lib/api"
	"xce/lib/config"
)

// computeUnits are the configured compute units as bmgroup -cu shows
// them, in configuration order.
func computeUnits(conf *config.Config) []*api.ComputeUnit {
	var out []*api.ComputeUnit
	for _, u := range conf.ComputeUnits {
		out = append(out, &api.ComputeUnit{Name: u.Name, Type: u.Type, Members: u.Members, Hosts: conf.CUHosts(u.Name), Condense: u.Condense})
	}
	return out
}
