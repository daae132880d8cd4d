package lsfout

import (
	"strings"
	"testing"

	"xce/lib/api"
)

// The controller's groups (the JobGroups RPC) as bjgroup prints them.
func TestJobGroupRows(t *testing.T) {
	info := func(path, owner string, pend, run, ususp, finish int32) *api.JobGroupInfo {
		return &api.JobGroupInfo{Path: path, Owner: owner, Njobs: pend + run + ususp + finish,
			Pend: pend, Run: run, Ususp: ususp, Finish: finish}
	}
	groups := JobGroupRows([]*api.JobGroupInfo{
		info("/X/Y", "user1", 1, 1, 0, 0),
		info("/X/Z", "user2", 0, 0, 0, 1),
		info("/A", "user1", 1, 0, 1, 0),
		info("/A/B", "user1", 1, 0, 0, 0),
		info("/X", "user1", 1, 1, 0, 1),
	})
	var b strings.Builder
	if err := WriteJobGroups(&b, groups); err != nil {
		t.Fatal(err)
	}
	want := `GROUP_NAME         NJOBS   PEND    RUN    SSUSP  USUSP  FINISH  SLA    JLIMIT  OWNER
/A                 2       1       0      0      1      0       ()        1/-  user1
/X                 3       1       1      0      0      1       ()        1/-  user1
/A/B               1       1       0      0      0      0       ()        0/-  user1
/X/Y               2       1       1      0      0      0       ()        1/-  user1
/X/Z               1       0       0      0      0      1       ()        0/-  user2
`
	if b.String() != want {
		t.Errorf("bjgroup:\n%s\nwant:\n%s", b.String(), want)
	}
	HierarchyOrder(groups)
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	if got := strings.Join(names, " "); got != "/A /A/B /X /X/Y /X/Z" {
		t.Errorf("hierarchy order: %s", got)
	}
}
