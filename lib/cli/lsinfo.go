package cli

import (
	"fmt"
	"slices"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// lsinfo shows the cluster's resources, host types and host models. XCE
// knows the models of the hosts it has, so -M (every model LSF knows)
// shows the same as -m.
func lsinfo(args []string) int {
	var long, wide, models, allModels, resources, types bool
	var names []string
	cmd, code := newCommand("lsinfo [-l | -w] [-m | -M] [-r] [-t] [resource_name ...]",
		"Show the cluster's resources, host types and host models", func(a []string) int {
			names = a
			return 0
		})
	f := cmd.Flags()
	f.BoolVar(&long, "l", false, "long format: each resource with its update interval and whether it is built in and dynamic")
	f.BoolVar(&wide, "w", false, "wide format: resource names not cut")
	f.BoolVar(&models, "m", false, "the host models in use, with their CPU factors")
	f.BoolVar(&allModels, "M", false, "every host model (XCE knows those in use: as -m)")
	f.BoolVar(&resources, "r", false, "the resources only")
	f.BoolVar(&types, "t", false, "the host types in use")
	if rc, done := execute(cmd, code, args, false); done {
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
	hosts, err := c.ListHosts(cx, &api.ListHostsRequest{})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	interval := 0
	if len(hosts.Hosts) > 0 {
		interval = int(hosts.Hosts[0].GetLoadIntervalSec())
	}
	res := lsfout.LSResources(info, interval)
	rc := 0
	if len(names) > 0 {
		var picked []lsfout.LSResource
		for _, n := range names {
			i := slices.IndexFunc(res, func(r lsfout.LSResource) bool { return r.Name == n })
			if i < 0 {
				fmt.Fprintf(sys.stderr, "%s: Resource name not found\n", n)
				rc = 255
				continue
			}
			picked = append(picked, res[i])
		}
		if len(picked) == 0 {
			return rc
		}
		res = picked
		resources = resources || !models && !allModels && !types
	}
	if long {
		err = lsfout.WriteLSInfoLong(sys.stdout, res)
	} else {
		err = lsfout.WriteLSInfo(sys.stdout, res, hosts.Hosts, lsfout.LSInfoOptions{
			Resources: resources, Types: types, Models: models || allModels, Wide: wide})
	}
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return rc
}
