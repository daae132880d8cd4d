package cli

import (
	"context"
	"fmt"
	"slices"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
)

// showValues prints lshosts -s or lsload -s: the shared resources and
// the resources hosts report (their elims), each with its value and
// location; names, when given, are the resources to show. left: lsload's
// figures, what is left after running jobs' reservations.
func showValues(names []string, left bool, none string) int {
	return fetch(func(c *client.Client, cx context.Context) (*api.ListHostsReply, error) {
		return c.ListHosts(cx, &api.ListHostsRequest{})
	}, func(reply *api.ListHostsReply) error {
		shared := reply.Shared
		rows := lsfout.ReportedRows(reply.Hosts, names, left)
		if len(names) > 0 {
			shared = nil
			for _, n := range names {
				i := slices.IndexFunc(reply.Shared, func(s *api.SharedResource) bool { return s.Name == n })
				if i >= 0 {
					shared = append(shared, reply.Shared[i])
					continue
				}
				if !slices.ContainsFunc(rows, func(r lsfout.ValueRow) bool { return r.Name == n }) {
					return fmt.Errorf("%s: Bad resource name", n)
				}
			}
		}
		value := (*api.SharedResource).GetTotal
		if left {
			value = func(s *api.SharedResource) float64 { return max(0, s.GetTotal()-s.GetReserved()) }
		}
		return lsfout.WriteResourceValues(sys.stdout, shared, value, rows, none)
	})
}
