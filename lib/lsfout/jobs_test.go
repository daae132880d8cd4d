package lsfout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

func writeJobs(t *testing.T, jobs []*api.Job, opt JobsOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJobs(&b, jobs, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The example table of output-formats.md section 2, byte for byte.
func TestWriteJobsSpecExample(t *testing.T) {
	got := writeJobs(t, []*api.Job{jobRunning(), jobPending(), jobParallel()}, testJobsOptions())
	want := "" +
		"JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n" +
		"1234    user1   RUN   normal     hostA       hostB       sleep 100  Oct 22 09:22\n" +
		"1235    user1   PEND  normal     hostA                   *bname_abc Oct 22 09:23\n" +
		"1236    alongus RUN   night_long submithost0 4*hostC     myjob      Oct  2 10:05\n" +
		"                                             4*hostD\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The -w example of output-formats.md section 2.1.
func TestWriteJobsWideSpecExample(t *testing.T) {
	opt := testJobsOptions()
	opt.Wide, opt.NoHeader = true, true
	got := writeJobs(t, []*api.Job{jobPending(), jobParallel()}, opt)
	want := "" +
		"1235    user1   PEND  normal     hostA          -        verylongjobname_abc Oct 22 09:23\n" +
		"1236    alongusername RUN   night_long_q submithost01 4*hostC:4*hostD myjob      Oct  2 10:05\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// -p: each reason on its own line, " <reason>;", a trailing ";" in the
// reason not doubled; running jobs show no reasons.
func TestWriteJobsPendReasons(t *testing.T) {
	opt := testJobsOptions()
	opt.PendReasons, opt.NoHeader = true, true
	run := jobRunning()
	run.PendReason = "stale reason"
	got := writeJobs(t, []*api.Job{run, jobPending()}, opt)
	want := "" +
		"1234    user1   RUN   normal     hostA       hostB       sleep 100  Oct 22 09:22\n" +
		"1235    user1   PEND  normal     hostA                   *bname_abc Oct 22 09:23\n" +
		" Job's resource requirements not satisfied: 2 hosts;\n" +
		" Closed by LSF administrator: 1 host;\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWriteJobsGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  func(*JobsOptions)
	}{
		{"jobs_default", func(*JobsOptions) {}},
		{"jobs_wide", func(o *JobsOptions) { o.Wide = true }},
		{"jobs_pending_reasons", func(o *JobsOptions) { o.PendReasons = true }},
		{"jobs_noheader", func(o *JobsOptions) { o.NoHeader = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := testJobsOptions()
			tc.opt(&opt)
			checkGolden(t, tc.name, writeJobs(t, allJobs(), opt))
		})
	}
}

func TestWriteJobsEmpty(t *testing.T) {
	opt := testJobsOptions()
	if got := writeJobs(t, nil, opt); got != jobsHeader {
		t.Errorf("no jobs: got %q, want the header alone", got)
	}
	opt.NoHeader = true
	if got := writeJobs(t, nil, opt); got != "" {
		t.Errorf("no jobs, -noheader: got %q, want nothing", got)
	}
}

func TestDisplayName(t *testing.T) {
	for _, tc := range []struct {
		job  *api.Job
		want string
	}{
		{&api.Job{Spec: &api.JobSpec{Command: "sleep 100"}}, "sleep 100"},
		{&api.Job{Spec: &api.JobSpec{Command: "sleep 100", JobName: "nap"}}, "nap"},
		{&api.Job{ArrayIndex: 7, Spec: &api.JobSpec{Command: "x", JobName: "arr"}}, "arr[7]"},
		{&api.Job{Spec: &api.JobSpec{Command: "#!/bin/bash\n#BSUB -n 2\n\n  echo hi  \nls\n", CommandIsScript: true}}, "echo hi"},
		{&api.Job{Spec: &api.JobSpec{Command: "#!/bin/bash\n# only comments\n", CommandIsScript: true}}, "#!/bin/bash"},
		{&api.Job{Effective: &api.JobSpec{Command: "from effective"}}, "from effective"},
		{&api.Job{}, ""},
	} {
		if got := DisplayName(tc.job); got != tc.want {
			t.Errorf("DisplayName(%v) = %q, want %q", tc.job, got, tc.want)
		}
	}
}

func TestJobIDString(t *testing.T) {
	if got := JobIDString(&api.Job{JobId: 123}); got != "123" {
		t.Errorf("got %q", got)
	}
	if got := JobIDString(&api.Job{JobId: 123, ArrayIndex: 4}); got != "123[4]" {
		t.Errorf("got %q", got)
	}
}

func TestDisplayCWD(t *testing.T) {
	for _, tc := range []struct{ dir, home, want string }{
		{"/home/u/work", "/home/u", "$HOME/work"},
		{"/home/u", "/home/u", "$HOME"},
		{"/home/u/", "/home/u/", "$HOME"},
		{"/home/user2/x", "/home/u", "/home/user2/x"},
		{"/tmp", "/home/u", "/tmp"},
		{"/tmp", "", "/tmp"},
	} {
		if got := DisplayCWD(tc.dir, tc.home); got != tc.want {
			t.Errorf("DisplayCWD(%q, %q) = %q, want %q", tc.dir, tc.home, got, tc.want)
		}
	}
}

func TestTimeFormats(t *testing.T) {
	ns := time.Date(2026, time.October, 2, 7, 5, 9, 0, time.UTC).UnixNano()
	if got := FormatSubmitTime(ns, testZone); got != "Oct  2 02:05" {
		t.Errorf("FormatSubmitTime = %q", got)
	}
	if got := FormatEventTime(ns, testZone); got != "Fri Oct  2 02:05:09" {
		t.Errorf("FormatEventTime = %q", got)
	}
	if got := FormatSubmitTime(0, testZone); got != "" {
		t.Errorf("FormatSubmitTime(0) = %q, want empty", got)
	}
}

func TestTermReasonText(t *testing.T) {
	if got := TermReasonText(api.TermReason_TERM_OWNER); got != "TERM_OWNER: job killed by owner" {
		t.Errorf("got %q", got)
	}
	if got := TermReasonText(api.TermReason_TERM_RUNLIMIT); got != "TERM_RUNLIMIT: job killed after reaching LSF run time limit" {
		t.Errorf("got %q", got)
	}
	if got := TermReasonText(api.TermReason(77)); got != "TERM_77: job exited, reason unknown" {
		t.Errorf("unknown code: got %q", got)
	}
	for n, name := range api.TermReason_name {
		got := TermReasonText(api.TermReason(n))
		if !strings.HasPrefix(got, name+": ") || len(got) <= len(name)+2 || strings.HasSuffix(got, ".") {
			t.Errorf("TermReasonText(%s) = %q: want %q, a message and no final period", name, got, name+": ")
		}
	}
}

// The listing reads no JobSpec field besides ListingSpecFields: with
// specs cut to them, as the controller sends them for a listing, every
// form of the table is the same. The numbers name the fields they say.
func TestListingSpecFields(t *testing.T) {
	names := map[string]bool{}
	fields := (&api.JobSpec{}).ProtoReflect().Descriptor().Fields()
	for _, n := range ListingSpecFields {
		names[string(fields.ByNumber(protowire.Number(n)).Name())] = true
	}
	for _, want := range []string{"command", "command_is_script", "queue", "job_name", "submit_host", "user"} {
		if !names[want] {
			t.Errorf("ListingSpecFields lacks %s: %v", want, names)
		}
	}
	jobs := []*api.Job{jobRunning(), jobPending(), jobParallel(), jobArrayElement(), jobKilled(), jobHeld(), jobStopped()}
	noName := jobRunning()
	noName.Spec.JobName, noName.Effective.JobName = "", ""
	script := jobHeld()
	script.Spec.JobName = ""
	jobs = append(jobs, noName, script)
	var cutJobs []*api.Job
	for _, j := range jobs {
		c := proto.Clone(j).(*api.Job)
		// As lib/client gives them: without submitted specs the
		// effective one stands for both.
		eff := effective(j)
		raw, err := proto.Marshal(eff)
		if err != nil {
			t.Fatal(err)
		}
		c.Effective = &api.JobSpec{}
		if err := proto.Unmarshal(api.KeepFields(raw, ListingSpecFields), c.Effective); err != nil {
			t.Fatal(err)
		}
		c.Spec = c.Effective
		cutJobs = append(cutJobs, c)
		// The reference: whole effective specs, as sent without the cut.
		j.Spec = j.Effective
		if j.Spec == nil {
			j.Spec, j.Effective = eff, eff
		}
	}
	now := time.Date(2026, 10, 22, 12, 0, 0, 0, time.UTC)
	for _, opt := range []JobsOptions{{Now: now}, {Now: now, Wide: true}, {Now: now, PendReasons: true}, {Now: now, NoHeader: true, Wide: true, PendReasons: true}} {
		opt.Location = time.UTC
		if got, want := writeJobs(t, cutJobs, opt), writeJobs(t, jobs, opt); got != want {
			t.Errorf("%+v: with specs cut to ListingSpecFields\n%s\nwant\n%s", opt, got, want)
		}
	}
}
