package lsfout

import (
	"bytes"
	"testing"
	"time"

	"xce/lib/api"
)

// The summary reproduces IBM's bjobs -psum example from jobs whose reasons
// add up to its counts.
func TestWritePendSummaryIBMExample(t *testing.T) {
	var jobs []*api.Job
	add := func(n int, state api.JobState, reasons string) {
		for i := 0; i < n; i++ {
			jobs = append(jobs, &api.Job{JobId: int64(len(jobs) + 1), State: state, PendReason: reasons})
		}
	}
	add(40, api.JobState_PEND, "Load information unavailable: 2 hosts\nClosed by LSF administrator: 2 hosts\n"+
		"Not specified in job submission: 1 host\nJob requirements for reserving resource (mem) not satisfied: 1 host")
	add(20, api.JobState_PEND, "Load information unavailable: 3 hosts")
	add(10, api.JobState_PEND, "Load information unavailable: 2 hosts")
	add(20, api.JobState_PEND, "Job's requirements for reserving resource (lic1) not satisfied")
	add(10, api.JobState_PEND, "New job is waiting for scheduling")
	add(3, api.JobState_RUN, "") // not pending: not counted
	var b bytes.Buffer
	at := time.Date(2016, 3, 24, 15, 11, 50, 0, time.Local)
	if err := WritePendSummary(&b, jobs, "cluster1", at); err != nil {
		t.Fatal(err)
	}
	want := `Pending reason summary: published Thu Mar 24 15:11:50 2016
Summarizing 100 pending jobs in cluster (cluster1):
    Individual host based reasons:                                   70 jobs
    Job's requirements for reserving resource (lic1) not satisfied:  20 jobs
    New job is waiting for scheduling:                               10 jobs

Individual host based reasons
    Load information unavailable:                                    160 occurrences
    Closed by LSF administrator:                                      80 occurrences
    Not specified in job submission:                                  40 occurrences
    Job requirements for reserving resource (mem) not satisfied:      40 occurrences
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWritePendSummaryEmptyAndHeld(t *testing.T) {
	var b bytes.Buffer
	at := time.Date(2026, 1, 5, 9, 3, 4, 0, time.Local)
	WritePendSummary(&b, nil, "xce", at)
	if want := "Pending reason summary: published Mon Jan  5 09:03:04 2026\nSummarizing 0 pending jobs in cluster (xce):\n"; b.String() != want {
		t.Errorf("no jobs: %q", b.String())
	}
	b.Reset()
	long := "A reason that is much longer than the sixty-five columns of the summary"
	WritePendSummary(&b, []*api.Job{
		{State: api.JobState_PSUSP, PendReason: "The job was suspended by the user while pending"},
		{State: api.JobState_PEND, PendReason: long + "\n" + long},
	}, "xce", at)
	want := "Pending reason summary: published Mon Jan  5 09:03:04 2026\n" +
		"Summarizing 2 pending jobs in cluster (xce):\n" +
		"    The job was suspended by the user while pending:                 1 jobs\n" +
		"    " + long + ":  1 jobs\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
