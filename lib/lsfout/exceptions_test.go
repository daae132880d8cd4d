package lsfout

import (
	"bytes"
	"strings"
	"testing"

	"xce/lib/api"
)

// A job with exceptions: EXCEPTION STATUS before the scheduling
// parameters, IDLE_FACTOR under the CPU time of an idle job, the job group
// in the header, and the exception_status field.
func TestJobExceptionsShown(t *testing.T) {
	j := specExampleJob()
	j.Effective.JobGroup = "/risk_group/sub"
	j.Exceptions = api.ExceptionOverrun | api.ExceptionIdle
	got := writeLong(t, []*api.Job{j}, testJobsOptions())
	for _, want := range []string{
		"Project <default>, Job Group </risk_group/sub>, Status <RUN>",
		"                     The CPU time used is 62 seconds.\n" +
			"                     IDLE_FACTOR(cputime/runtime):   0.95\n" +
			"                     MEM: 120 Mbytes;",
		" MAX MEM: 130 Mbytes;  AVG MEM: 110 Mbytes\n\n EXCEPTION STATUS:  overrun  idle\n\n SCHEDULING PARAMETERS:\n",
	} {
		if !strings.Contains(got, want) && !strings.Contains(unwrap(got), want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	plain := specExampleJob()
	if out := writeLong(t, []*api.Job{plain}, testJobsOptions()); strings.Contains(out, "EXCEPTION") || strings.Contains(out, "IDLE_FACTOR") || strings.Contains(out, "Job Group") {
		t.Errorf("a job without exceptions or group:\n%s", out)
	}
	f, err := ParseFormat("jobid exception_status except_stat:8")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	f.Write(&b, []*api.Job{j, plain}, false)
	want := "JOBID EXCEPTION_STATUS EXCEPTIO\n1234 overrun idle overrun \n1234 - -       \n"
	if b.String() != want {
		t.Errorf("-o exception_status:\n%q\nwant\n%q", b.String(), want)
	}
}

// unwrap joins the continuation lines of a -l paragraph.
func unwrap(s string) string { return strings.ReplaceAll(s, "\n                     ", "") }
