package lsfout

import (
	"strings"
	"testing"

	"xce/lib/api"
)

func TestCountJobGroups(t *testing.T) {
	job := func(group, user string, st api.JobState, submit int64) *api.Job {
		return &api.Job{State: st, SubmitTime: submit,
			Spec: &api.JobSpec{User: user, JobGroup: group}, Effective: &api.JobSpec{JobGroup: group}}
	}
	jobs := []*api.Job{
		job("/X/Y", "user2", api.JobState_RUN, 5),
		job("/X/Y", "user1", api.JobState_PEND, 1),
		job("/X/Z", "user2", api.JobState_DONE, 3),
		job("/A", "user1", api.JobState_USUSP, 2),
		job("", "user3", api.JobState_RUN, 0),
		job("/A/B", "user1", api.JobState_PSUSP, 4),
	}
	groups := CountJobGroups(jobs)
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
