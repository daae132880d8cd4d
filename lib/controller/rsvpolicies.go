package controller

import (
	"fmt"
	"slices"

	"xce/lib/api"
)

// listRsvPolicies is brsvs -c: the reservation policies named ("all":
// every one), in the configuration's order.
func (c *Controller) listRsvPolicies(names []string) *api.ReservationReply {
	reply := &api.ReservationReply{}
	all := slices.Contains(names, "all")
	found := map[string]bool{}
	for _, p := range c.config().RsvPolicies {
		if !all && !slices.Contains(names, p.Name) {
			continue
		}
		found[p.Name] = true
		reply.Policies = append(reply.Policies, &api.RsvPolicy{
			Name: p.Name, Users: slices.Clone(p.Users), Hosts: slices.Clone(p.Hosts), TimeWindows: slices.Clone(p.TimeWindows),
		})
	}
	if !all {
		for _, n := range names {
			if !found[n] {
				reply.Errors = append(reply.Errors, fmt.Sprintf("%s: Advance reservation policy does not exist", n))
			}
		}
	}
	return reply
}
