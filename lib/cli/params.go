package cli

import (
	"context"
	"fmt"
	"time"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
)

// bparams shows the cluster's parameters: the default summary, -l (each
// parameter with its description) or -a (every parameter as NAME =
// value).
func bparams(args []string) int {
	var long, all bool
	cmd, code := newCommand("bparams [-a] [-l]", "Show the cluster's batch parameters", func(a []string) int {
		if len(a) > 0 {
			return -1
		}
		return 0
	})
	cmd.Flags().BoolVar(&all, "a", false, "every parameter in force, as NAME = value")
	cmd.Flags().BoolVar(&long, "l", false, "long format: each parameter with its description")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	} else if rc < 0 {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	return withInfo(func(info *api.ClusterInfo) error {
		switch {
		case all:
			return lsfout.WriteParamsAll(sys.stdout, info, time.Now())
		case long:
			return lsfout.WriteParamsLong(sys.stdout, info)
		}
		return lsfout.WriteParams(sys.stdout, info)
	})
}

// bugroup lists the configured user groups (bmgroup, in bmgroup.go, the
// host groups).
func bugroup(args []string) int { return listGroups("bugroup", "USERS", false, args) }

func listGroups(name, title string, hosts bool, args []string) int {
	var names []string
	cmd, code := newCommand(name+" [group_name ...]", "Show the configured "+map[bool]string{false: "user", true: "host"}[hosts]+" groups", func(a []string) int {
		names = a
		return 0
	})
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	return showGroups(title, hosts, names)
}

// listHostGroups is bmgroup without -cu (bmgroup.go).
func listHostGroups(names []string) int { return showGroups("HOSTS", true, names) }

func showGroups(title string, hosts bool, names []string) int {
	kind := map[bool]string{false: "user", true: "host"}[hosts]
	return withInfo(func(info *api.ClusterInfo) error {
		all := info.UserGroups
		if hosts {
			all = info.HostGroups
		}
		if len(all) == 0 {
			return fmt.Errorf("%s group: No %s group defined in the system", kind, kind)
		}
		groups := all
		if len(names) > 0 {
			byName := map[string]*api.Group{}
			for _, g := range all {
				byName[g.Name] = g
			}
			groups = nil
			for _, n := range names {
				g := byName[n]
				if g == nil {
					return fmt.Errorf("%s: No such user/host group", n)
				}
				groups = append(groups, g)
			}
		}
		return lsfout.WriteGroups(sys.stdout, groups, title)
	})
}

// withInfo asks the controller about the cluster and hands the answer to
// write; an error is printed and gives exit status 255.
func withInfo(write func(*api.ClusterInfo) error) int {
	return fetch(func(c *client.Client, cx context.Context) (*api.ClusterInfo, error) {
		return c.Info(cx, &api.ClusterInfoRequest{})
	}, write)
}

// fetch makes one call to the controller and shows its answer: the
// listing commands' common shape. A failed call prints the controller's
// refusal (or where nothing answered), a failed show its error; both give
// exit status 255.
func fetch[T any](call func(*client.Client, context.Context) (T, error), show func(T) error) int {
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	reply, err := call(c, cx)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	if err := show(reply); err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return 0
}
