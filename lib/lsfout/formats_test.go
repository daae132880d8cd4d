package lsfout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

// bhist cuts a long job name from the left, to "*" and its end, as bjobs
// does; -w keeps it whole.
func TestHistoryCutsNameFromLeft(t *testing.T) {
	j := &api.Job{JobId: 7, State: api.JobState_PEND, SubmitTime: 1,
		Spec: &api.JobSpec{User: "u", JobName: "averylongjobname_42", Command: "true"}}
	opt := JobsOptions{Now: time.Unix(10, 0)}
	var b bytes.Buffer
	if err := WriteHistory(&b, []*api.Job{j}, nil, opt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n7       u       *bname_42 ") {
		t.Errorf("bhist:\n%s", b.String())
	}
	b.Reset()
	opt.Wide = true
	WriteHistory(&b, []*api.Job{j}, nil, opt)
	if !strings.Contains(b.String(), " averylongjobname_42 ") {
		t.Errorf("bhist -w:\n%s", b.String())
	}
}

// bacct's throughput is T = N/(ET-BT) in jobs per hour, the times in
// whole seconds as LSF keeps them: two jobs between 10.9 s and 12.1 s are
// two jobs in 2 seconds (3600 an hour), not in 1.2 (6000).
func TestAcctThroughputWholeSeconds(t *testing.T) {
	sec := func(s float64) int64 { return int64(s * float64(time.Second)) }
	var jobs []*api.Job
	for i, end := range []float64{11.5, 12.1} {
		jobs = append(jobs, &api.Job{JobId: int64(i + 1), State: api.JobState_DONE,
			SubmitTime: sec(10.9), StartTime: sec(10.9), EndTime: sec(end),
			Spec: &api.JobSpec{User: "u", Command: "true"}})
	}
	var b bytes.Buffer
	if err := WriteAcct(&b, jobs, AcctFilter{}, false, JobsOptions{Location: time.UTC}); err != nil {
		t.Fatal(err)
	}
	if want := " Total throughput:          3600.00 (jobs/hour)  during    0.00 hours\n"; !strings.Contains(b.String(), want) {
		t.Errorf("want %q in\n%s", want, b.String())
	}
}
