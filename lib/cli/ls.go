package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
)

// lsid prints the product banner, the cluster's name and its master host.
func lsid(args []string) int {
	cmd, code := newCommand("lsid [-h] [-V]", "Show the cluster name and the master host", func(a []string) int {
		if len(a) > 0 {
			fmt.Fprintf(sys.stderr, "lsid: extra operand %s\n", a[0])
			fmt.Fprintln(sys.stderr, "Usage: lsid [-h] [-V]")
			return 255
		}
		return 0
	})
	if rc, done := execute(cmd, code, args, false); done || rc != 0 {
		return rc
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	info, err := c.Info(cx, &api.ClusterInfoRequest{})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	if err := lsfout.WriteClusterID(sys.stdout, Version, info); err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return 0
}

// lshosts shows the hosts' static information.
func lshosts(args []string) int {
	var wide, long, shared, gpus bool
	var resReq string
	var names []string
	cmd, code := newCommand(`lshosts [-w | -l | -gpu [-w]] [-R "res_req"] [host_name ...] | -s [static_resource_name ...]`,
		"Show static host information", func(a []string) int {
			names = a
			return 0
		})
	f := cmd.Flags()
	f.BoolVar(&wide, "w", false, "wide format: nothing cut")
	f.BoolVar(&long, "l", false, "long format: the host's description, resources, run windows and load thresholds")
	f.StringVar(&resReq, "R", "", "only the hosts that satisfy this resource requirement's select")
	f.BoolVar(&shared, "s", false, "the shared resources and those hosts report (the arguments are resource names): value and location")
	f.BoolVar(&gpus, "gpu", false, "the hosts' GPUs: one row per device (model, driver, vendor)")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if gpus && (long || shared) {
		fmt.Fprintln(sys.stderr, "lshosts: -gpu cannot be used with -l or -s")
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.UseLine())
		return 255
	}
	if shared {
		if long || wide || resReq != "" {
			return sharedUsage(cmd, "-l, -w or -R")
		}
		return showValues(names, false, "No static shared resources defined.")
	}
	return listHosts("lshosts", names, resReq, func(hosts []*api.Host) error {
		if long {
			return lsfout.WriteLSHostsLong(sys.stdout, hosts)
		}
		if gpus {
			return lsfout.WriteLSHostsGPU(sys.stdout, hosts, wide)
		}
		return lsfout.WriteLSHosts(sys.stdout, hosts, wide)
	})
}

// lsload shows the hosts' load indices.
func lsload(args []string) int {
	var wide, long, shared bool
	var resReq, indexList string
	var number int
	var names []string
	var gpus bool
	cmd, code := newCommand(`lsload [-gpu] [-l | -w] [-I index_list] [-n num_hosts] [-R "res_req"] [host_name ...] | -s [shared_resource_name ...]`,
		"Show host load indices", func(a []string) int {
			names = a
			return 0
		})
	f := cmd.Flags()
	f.BoolVar(&wide, "w", false, "wide format: nothing cut")
	f.BoolVar(&long, "l", false, "long format: every load index, io included; host names not cut")
	f.StringVar(&indexList, "I", "", "only these load indices, in this order: r15s:r1m:mem")
	f.IntVar(&number, "n", 0, "at most this many hosts, the best first")
	f.StringVar(&resReq, "R", "", "only the hosts that satisfy this resource requirement's select, in the order of its order[]")
	f.BoolVar(&shared, "s", false, "the shared resources and those hosts report (the arguments are resource names): what is left of each and where")
	f.BoolVar(&gpus, "gpu", false, "the GPU hosts: number of GPUs and the average use of the shared ones")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if gpus && (shared || long || indexList != "") {
		fmt.Fprintln(sys.stderr, "lsload: -gpu cannot be used with -s, -l or -I")
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.UseLine())
		return 255
	}
	if shared {
		if long || wide || resReq != "" || indexList != "" || cmd.Flags().Changed("n") {
			return sharedUsage(cmd, "-l, -w, -I, -n or -R")
		}
		return showValues(names, true, "No dynamic shared resources defined.")
	}
	if cmd.Flags().Changed("n") && number <= 0 {
		fmt.Fprintf(sys.stderr, "lsload: %d: the number of hosts must be positive\n", number)
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.UseLine())
		return 255
	}
	opt := lsfout.LoadOptions{Wide: wide, Long: long}
	if indexList != "" {
		var err error
		if opt.Indices, err = lsfout.ParseLoadIndices(indexList); err != nil {
			fmt.Fprintln(sys.stderr, "lsload: "+err.Error())
			return 255
		}
	}
	return listHosts("lsload", names, resReq, func(hosts []*api.Host) error {
		if number > 0 && len(hosts) > number {
			hosts = hosts[:number]
		}
		if gpus {
			return lsfout.WriteLSLoadGPU(sys.stdout, hosts, wide)
		}
		return lsfout.WriteLSLoad(sys.stdout, hosts, opt)
	})
}

// listHosts fetches the hosts named (all when none) that satisfy resReq
// and shows them; none satisfying it is LIM's "No host is eligible".
func listHosts(name string, names []string, resReq string, show func([]*api.Host) error) int {
	return fetch(func(c *client.Client, cx context.Context) (*api.ListHostsReply, error) {
		return c.ListHosts(cx, &api.ListHostsRequest{Names: names, ResReq: resReq})
	}, func(reply *api.ListHostsReply) error {
		if len(reply.Hosts) == 0 {
			return fmt.Errorf("%s: No host is eligible", name)
		}
		return show(reply.Hosts)
	})
}

// sharedUsage refuses -s with the options that select hosts.
func sharedUsage(cmd *cobra.Command, others string) int {
	fmt.Fprintf(sys.stderr, "%s: -s cannot be used with %s\n", cmd.Name(), others)
	fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.UseLine())
	return 255
}
