package cli

import (
	"fmt"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// bmgroup lists the configured host groups, or with -cu the compute
// units (-r: every unit with all its hosts).
func bmgroup(args []string) int {
	var cu, recursive bool
	var names []string
	cmd, code := newCommand("bmgroup [-r] [-cu] [group_name ... | cu_name ...]", "Show the configured host groups and compute units", func(a []string) int {
		names = a
		return 0
	})
	cmd.Flags().BoolVar(&cu, "cu", false, "the compute units: name, type and hosts")
	cmd.Flags().BoolVar(&recursive, "r", false, "with -cu: every unit's hosts, nested units expanded")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if !cu {
		return listHostGroups(names)
	}
	return withInfo(func(info *api.ClusterInfo) error {
		all := info.GetComputeUnits()
		if len(all) == 0 {
			return fmt.Errorf("compute unit: No compute unit defined in the system")
		}
		units := all
		if len(names) > 0 {
			byName := map[string]*api.ComputeUnit{}
			for _, u := range all {
				byName[u.GetName()] = u
			}
			units = nil
			for _, n := range names {
				u := byName[n]
				if u == nil {
					return fmt.Errorf("%s: No such compute unit", n)
				}
				units = append(units, u)
			}
		}
		return lsfout.WriteComputeUnits(sys.stdout, units, recursive)
	})
}
