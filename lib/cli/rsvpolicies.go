package cli

import (
	"fmt"
	"strings"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// brsvsPolicies is brsvs -c: the advance reservation policies named, or
// all of them.
func brsvsPolicies(names string, other bool) int {
	list := strings.Fields(names)
	if other || len(list) == 0 {
		fmt.Fprintln(sys.stderr, `-c takes "all" or policy names and no other option or reservation ID`)
		return 255
	}
	return fetchRsv(&api.ReservationRequest{Op: api.ReservationRequest_LIST, Policies: list}, func(reply *api.ReservationReply) int {
		for _, e := range reply.Errors {
			fmt.Fprintln(sys.stderr, e)
		}
		if len(reply.Policies) == 0 && len(reply.Errors) > 0 {
			return 255
		}
		if err := lsfout.WriteRsvPolicies(sys.stdout, reply.Policies); err != nil {
			fmt.Fprintln(sys.stderr, err)
			return 255
		}
		if len(reply.Errors) > 0 {
			return 255
		}
		return 0
	})
}
