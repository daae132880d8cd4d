package policy

import (
	"xce/lib/config"
	"xce/lib/resreq"
	"xce/lib/sched"
)

// ComputeUnits is the configuration's compute units as lib/sched places
// jobs in them (nil: none), each with all its hosts, in file order.
func ComputeUnits(conf *config.Config) *sched.ComputeUnits {
	types, def := conf.CUTypes()
	if len(types) == 0 {
		return nil
	}
	out := &sched.ComputeUnits{Types: types, Default: def}
	for _, u := range conf.ComputeUnits {
		out.Units = append(out.Units, sched.ComputeUnit{Name: u.Name, Type: u.Type, Hosts: conf.CUHosts(u.Name)})
	}
	return out
}

// CUExcl is the compute unit type a job with requirement req uses
// exclusively (cu[excl]; the default type when it names none), or "".
func CUExcl(conf *config.Config, req *resreq.ResReq) string {
	for _, cu := range config.CUSections(req) {
		if cu.Excl {
			if cu.Type != "" {
				return cu.Type
			}
			_, def := conf.CUTypes()
			return def
		}
	}
	return ""
}
