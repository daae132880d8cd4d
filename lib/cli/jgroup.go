package cli

import (
	"fmt"
	"strings"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// bjgroup shows the job groups, those bgadd made and those the
// controller's jobs name (bsub -g makes them implicitly, and one lasts
// while a job in it or below it is known), with each group's jobs, its
// subgroups' included, by state, and its limit; -l adds each group's
// gang size and -gang_fail after the owner. -s lists each group followed by its subgroups; a group named
// after -s shows that group and its subgroups, or, with a trailing "/",
// that group alone.
func bjgroup(args []string) int {
	var hier, long bool
	var names []string
	cmd, code := newCommand("bjgroup [-l] [-s [job_group]]", "Show job groups", func(a []string) int {
		names = a
		return 0
	})
	cmd.Flags().BoolVar(&hier, "s", false, "sort by hierarchy: each group followed by its subgroups")
	cmd.Flags().BoolVar(&long, "l", false, "add the gang columns (GANG, GANG_FAIL) after OWNER")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(names) > 1 {
		fmt.Fprintln(sys.stderr, "bjgroup: one job group at most")
		return 255
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	res, err := c.JobGroups(cx, &api.JobGroupRequest{Op: api.JobGroupRequest_LIST})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	groups := lsfout.JobGroupRows(res.Groups)
	if hier {
		lsfout.HierarchyOrder(groups)
	}
	if len(names) == 1 {
		want := api.JobGroupPath(names[0])
		only := strings.HasSuffix(names[0], "/") && want != "/"
		kept := groups[:0]
		for _, g := range groups {
			if g.Name == want || !only && (want == "/" || strings.HasPrefix(g.Name, want+"/")) {
				kept = append(kept, g)
			}
		}
		groups = kept
		if len(groups) == 0 {
			fmt.Fprintf(sys.stderr, "%s: Job group does not exist\n", names[0])
			return 255
		}
	}
	if len(groups) == 0 {
		fmt.Fprintln(sys.stderr, "No job group found")
		return 0
	}
	write := lsfout.WriteJobGroups
	if long {
		write = lsfout.WriteJobGroupsLong
	}
	if err := write(sys.stdout, groups); err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return 0
}
