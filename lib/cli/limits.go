package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
)

// blimits shows the resource allocation limits ([[limits]], LSF's
// lsb.resources Limit sections) and what running and suspended jobs hold
// of each: one row per limit, or per member of its per lists, that jobs
// use (LSF shows only those; "No resource usage found." when none). -c
// prints the configuration as lsb.resources Limit sections (bresources).
// -n, -u, -q, -m, -P and -A keep the rows of those limits, users, queues,
// hosts, projects and profiles: a row whose column names the value (or a
// group holding it, as configured) or that does not restrict that
// consumer ("-").
func blimits(args []string) int {
	var conf, wide bool
	var names, users, queues, hosts, projects, apps []string
	cmd, code := newCommand("blimits [-c] [-w] [-n limit_name ...] [-u user_name ...] [-q queue_name ...] [-m host_name ...] [-P project_name ...] [-A application_name ...]",
		"Show resource allocation limits and their use", func(a []string) int {
			if len(a) > 0 {
				fmt.Fprintf(sys.stderr, "blimits: unexpected argument %s\n", a[0])
				return 255
			}
			return 0
		})
	cmd.Flags().BoolVar(&conf, "c", false, "the configured limits, as lsb.resources Limit sections")
	cmd.Flags().BoolVar(&wide, "w", false, "wide format: names not cut")
	cmd.Flags().StringArrayVar(&names, "n", nil, "only these limits")
	cmd.Flags().StringArrayVar(&users, "u", nil, "only limits on these users or user groups")
	cmd.Flags().StringArrayVar(&queues, "q", nil, "only limits on these queues")
	cmd.Flags().StringArrayVar(&hosts, "m", nil, "only limits on these hosts or host groups")
	cmd.Flags().StringArrayVar(&projects, "P", nil, "only limits on these projects")
	cmd.Flags().StringArrayVar(&apps, "A", nil, "only limits on these application profiles")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	return fetch(func(c *client.Client, cx context.Context) (*api.LimitsReply, error) {
		return c.Limits(cx, &api.LimitsRequest{})
	}, func(reply *api.LimitsReply) error {
		if conf {
			var out []*api.LimitConfig
			for _, l := range reply.Configs {
				if len(names) == 0 || slices.Contains(words(names), l.Name) {
					out = append(out, l)
				}
			}
			return lsfout.WriteLimitConfig(sys.stdout, out)
		}
		var rows []*api.LimitUsage
		for _, r := range reply.Usage {
			if keep(r.Name, words(names), true) && keep(r.Users, words(users), false) && keep(r.Queues, words(queues), false) &&
				keep(r.Hosts, words(hosts), false) && keep(r.Projects, words(projects), false) && keep(r.Apps, words(apps), false) {
				rows = append(rows, r)
			}
		}
		return lsfout.WriteLimits(sys.stdout, rows, wide)
	})
}

// words splits each option value on blanks: -u "alice bob" and -u alice
// -u bob say the same.
func words(vals []string) []string {
	var out []string
	for _, v := range vals {
		out = append(out, strings.Fields(v)...)
	}
	return out
}

// keep says whether a blimits row's column passes a filter: no filter,
// a column that names one of the values (or "all"), or, unless exact, a
// column that restricts nothing.
func keep(col string, want []string, exact bool) bool {
	if len(want) == 0 {
		return true
	}
	if col == "" {
		return !exact
	}
	for _, w := range strings.Fields(col) {
		if w == "all" && !exact || slices.Contains(want, w) {
			return true
		}
	}
	return false
}
