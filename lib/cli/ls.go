package cli

import (
	"context"
	"fmt"
	"io"

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
	return listHosts("lshosts", "lshosts [-w] [host_name ...]", "Show static host information", lsfout.WriteLSHosts, args)
}

// lsload shows the hosts' load indices.
func lsload(args []string) int {
	return listHosts("lsload", "lsload [-w] [host_name ...]", "Show host load indices", lsfout.WriteLSLoad, args)
}

func listHosts(name, use, short string, write func(w io.Writer, hosts []*api.Host, wide bool) error, args []string) int {
	var wide bool
	var names []string
	cmd, code := newCommand(use, short, func(a []string) int {
		names = a
		return 0
	})
	cmd.Flags().BoolVar(&wide, "w", false, "wide format: nothing cut")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	return fetch(func(c *client.Client, cx context.Context) (*api.ListHostsReply, error) {
		return c.ListHosts(cx, &api.ListHostsRequest{Names: names})
	}, func(reply *api.ListHostsReply) error { return write(sys.stdout, reply.Hosts, wide) })
}
