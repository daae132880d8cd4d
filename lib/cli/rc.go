package cli

import (
	"context"
	"fmt"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
)

// rcCmd is badmin rc view (the templates, instances, requests and demand)
// and badmin rc error (the providers' recent errors).
func rcCmd(words []string) int {
	if len(words) != 1 || (words[0] != "view" && words[0] != "error") {
		fmt.Fprintln(sys.stderr, "Usage: badmin rc view | rc error")
		return 255
	}
	return fetch(func(c *client.Client, cx context.Context) (*api.ListHostsReply, error) {
		return c.ListHosts(cx, &api.ListHostsRequest{Supply: true})
	}, func(reply *api.ListHostsReply) error {
		if reply.Supply == nil {
			return fmt.Errorf("the cluster has no providers ([providers] in its configuration)")
		}
		if words[0] == "error" {
			return lsfout.WriteSupplyErrors(sys.stdout, reply.Supply)
		}
		return lsfout.WriteSupply(sys.stdout, reply.Supply)
	})
}

// writeHostsRC is bhosts -rc and -rconly (only the provisioned hosts).
func writeHostsRC(hosts []*api.Host, only bool, opt lsfout.HostsOptions) error {
	if only {
		var keep []*api.Host
		for _, h := range hosts {
			if h.RcStatus != "" {
				keep = append(keep, h)
			}
		}
		if len(keep) == 0 {
			return fmt.Errorf("No host is eligible")
		}
		hosts = keep
	}
	return lsfout.WriteHostsRC(sys.stdout, hosts, opt)
}
