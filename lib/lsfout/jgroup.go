package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"xce/lib/api"
)

// JobGroup is one line of bjgroup: a job group's jobs by state, counting
// the jobs of its subgroups too (IBM's example: /X's 25 jobs are its
// subgroups' 20 and 5).
type JobGroup struct {
	Name                                   string
	NJobs, Pend, Run, Ssusp, Ususp, Finish int
	Started                                int    // RUN, SSUSP and USUSP jobs: JLIMIT's first half
	Owner                                  string // who made the group, or submitted its earliest job
	Limit                                  int    // -L: JLIMIT's second half; -1: none
	Gang                                   int    // bgadd -gang: jobs per gang; 0: not a gang
	GangFail                               string // -gang_fail: requeue (also "") or kill
}

func groupDepth(g string) int { return strings.Count(g, "/") }

// HierarchyOrder sorts groups as bjgroup -s does: each group followed by
// its subgroups.
func HierarchyOrder(groups []JobGroup) {
	slices.SortFunc(groups, func(a, b JobGroup) int {
		return slices.Compare(strings.Split(a.Name, "/"), strings.Split(b.Name, "/"))
	})
}

// WriteJobGroups prints bjgroup's table with the columns of IBM's example:
// GROUP_NAME NJOBS PEND RUN SSUSP USUSP FINISH SLA JLIMIT OWNER. SLA is
// "()" (no service classes) and JLIMIT "started/limit", "started/-" for a
// group without a limit. The column widths are XCE's (IBM's examples
// differ between themselves).
func WriteJobGroups(w io.Writer, groups []JobGroup) error {
	return writeJobGroups(w, groups, false)
}

// WriteJobGroupsLong is bjgroup -l (XCE's): the same table with two
// columns after OWNER, GANG (jobs per gang, "-" for a group that is not
// a gang) and GANG_FAIL (requeue or kill), so that a parser of the
// default columns reads the same fields.
func WriteJobGroupsLong(w io.Writer, groups []JobGroup) error {
	return writeJobGroups(w, groups, true)
}

func writeJobGroups(w io.Writer, groups []JobGroup, long bool) error {
	var b bytes.Buffer
	owner := 0
	if long {
		owner = 8
		for _, g := range groups {
			owner = max(owner, len(g.Owner))
		}
	}
	fmt.Fprintf(&b, "%-18s %-7s %-7s %-6s %-6s %-6s %-7s %-5s %7s  %-*s",
		"GROUP_NAME", "NJOBS", "PEND", "RUN", "SSUSP", "USUSP", "FINISH", "SLA", "JLIMIT", owner, "OWNER")
	if long {
		fmt.Fprintf(&b, " %-5s %s", "GANG", "GANG_FAIL")
	}
	b.WriteByte('\n')
	for _, g := range groups {
		limit := "-"
		if g.Limit >= 0 {
			limit = fmt.Sprint(g.Limit)
		}
		fmt.Fprintf(&b, "%-18s %-7d %-7d %-6d %-6d %-6d %-7d %-5s %7s  %-*s",
			g.Name, g.NJobs, g.Pend, g.Run, g.Ssusp, g.Ususp, g.Finish, "()", fmt.Sprintf("%d/%s", g.Started, limit), owner, g.Owner)
		if long {
			gang, fail := "-", "-"
			if g.Gang > 1 {
				gang, fail = fmt.Sprint(g.Gang), g.GangFail
				if fail == "" {
					fail = "requeue"
				}
			}
			fmt.Fprintf(&b, " %-5s %s", gang, fail)
		}
		b.WriteByte('\n')
	}
	return flush(w, &b)
}

// JobGroupRows turns the controller's job groups (bjgroup's request) into
// bjgroup's lines, in its default order.
func JobGroupRows(groups []*api.JobGroupInfo) []JobGroup {
	out := make([]JobGroup, 0, len(groups))
	for _, g := range groups {
		row := JobGroup{Name: g.GetPath(), NJobs: int(g.GetNjobs()), Pend: int(g.GetPend()), Run: int(g.GetRun()),
			Ssusp: int(g.GetSsusp()), Ususp: int(g.GetUsusp()), Finish: int(g.GetFinish()), Owner: g.GetOwner(), Limit: -1}
		row.Started = row.Run + row.Ssusp + row.Ususp
		if g.GetLimited() {
			row.Limit = int(g.GetLimit())
		}
		row.Gang, row.GangFail = int(g.GetGang()), g.GetGangFail()
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b JobGroup) int {
		if d := groupDepth(a.Name) - groupDepth(b.Name); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
