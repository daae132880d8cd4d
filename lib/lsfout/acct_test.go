package lsfout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

// acctRecords are acctJobs as accounting records: the killed job showed
// an overrun, and one job ran on two hosts with a long name.
func acctRecords() []*api.Job {
	jobs := acctJobs()
	jobs[1].Exceptions = api.ExceptionOverrun
	wide := jobArrayElement()
	wide.JobId, wide.ArrayIndex = 1250, 0
	wide.Spec.JobName = "a_rather_long_job_name"
	wide.Spec.User = "averylongusername"
	wide.Effective.Queue = "a_long_queue_name"
	wide.ExecHosts = []*api.HostSlots{{Host: "execution-host-1", Slots: 2}, {Host: "hostF", Slots: 1}}
	return append(jobs, wide)
}

func writeAcct(t *testing.T, filter AcctFilter, opt AcctOptions) string {
	t.Helper()
	opt.JobsOptions = testJobsOptions()
	var b bytes.Buffer
	aw := NewAcctWriter(&b, filter, opt)
	for _, j := range acctRecords() {
		if err := aw.Add(j); err != nil {
			t.Fatal(err)
		}
	}
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteAcctFormatsGolden(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, time.October, d, 0, 0, 0, 0, testZone) }
	for name, c := range map[string]struct {
		filter AcctFilter
		opt    AcctOptions
	}{
		"bacct_brief":      {AcctFilter{Users: []string{"user1", "user2"}}, AcctOptions{Format: AcctBrief}},
		"bacct_brief_wide": {AcctFilter{}, AcctOptions{Format: AcctBrief, Wide: true}},
		"bacct_long_exceptions": {AcctFilter{Exited: true, Exceptions: true},
			AcctOptions{Format: AcctLong, Exceptions: true}},
		"bacct_filters": {AcctFilter{
			Users: []string{"user1"}, Done: true, App: "fluent", Name: "sim*", UserGroup: "chem", JobGroup: "/proj/a",
			Submitted:  TimeSpan{day(1), day(22).Add(-time.Second)},
			Dispatched: TimeSpan{day(20), day(21)},
			Completed:  TimeSpan{day(21), testNow},
		}, AcctOptions{}},
	} {
		checkGolden(t, name, writeAcct(t, c.filter, c.opt))
	}
}

// -b lines up with its header; without -w the columns are cut as bjobs
// cuts them.
func TestAcctBriefColumns(t *testing.T) {
	out := writeAcct(t, AcctFilter{}, AcctOptions{Format: AcctBrief})
	lines := strings.Split(out, "\n")
	head := -1
	for i, l := range lines {
		if l+"\n" == acctBriefHeader {
			head = i
		}
	}
	if head < 0 {
		t.Fatalf("no -b header:\n%s", out)
	}
	rows := lines[head+1 : head+5]
	for _, want := range []string{
		"1240    DONE  user2   short      Oct 22 08:00      58.10        2         62 hostA       hostE       arr[3]",
		"1250    DONE  avery",
	} {
		found := false
		for _, r := range rows {
			found = found || strings.HasPrefix(r, want)
		}
		if !found {
			t.Errorf("no row starts %q:\n%s", want, strings.Join(rows, "\n"))
		}
	}
	// Every column starts under its title.
	for _, col := range []string{"STAT", "U/UID", "QUEUE", "SUBMIT_TIME", "FROM", "EXEC_ON", "JOB_NAME"} {
		at := strings.Index(acctBriefHeader, col)
		for _, r := range rows {
			if len(r) <= at || r[at-1] != ' ' || r[at] == ' ' {
				t.Errorf("%s is not at column %d: %q", col, at, r)
			}
		}
	}
	if !strings.Contains(out, "averylo a_long_que") || !strings.Contains(out, "2*execution *_job_name") {
		t.Errorf("-b does not cut:\n%s", out)
	}
	wide := writeAcct(t, AcctFilter{}, AcctOptions{Format: AcctBrief, Wide: true})
	if !strings.Contains(wide, "averylongusername a_long_queue_name") || !strings.Contains(wide, "2*execution-host-1:hostF a_rather_long_job_name") {
		t.Errorf("-b -w cuts:\n%s", wide)
	}
}

// -x -l shows the exception status of the jobs that have one, and only
// with -x.
func TestAcctLongExceptions(t *testing.T) {
	with := writeAcct(t, AcctFilter{}, AcctOptions{Format: AcctLong, Exceptions: true})
	if n := strings.Count(with, " EXCEPTION STATUS:  overrun\n"); n != 1 {
		t.Errorf("%d EXCEPTION STATUS lines:\n%s", n, with)
	}
	if without := writeAcct(t, AcctFilter{}, AcctOptions{Format: AcctLong}); strings.Contains(without, "EXCEPTION") {
		t.Errorf("-l without -x shows exceptions:\n%s", without)
	}
}

// The streamed writer prints what WriteAcct prints, and nothing before
// the first job.
func TestAcctWriterStreams(t *testing.T) {
	var b bytes.Buffer
	aw := NewAcctWriter(&b, AcctFilter{}, AcctOptions{JobsOptions: testJobsOptions()})
	if b.Len() != 0 || aw.Count() != 0 {
		t.Fatal("output before the first job")
	}
	for _, j := range acctJobs() {
		aw.Add(j)
	}
	aw.Close()
	if aw.Count() != 3 {
		t.Errorf("counted %d jobs, want 3 (the running one is not)", aw.Count())
	}
	var whole bytes.Buffer
	WriteAcct(&whole, acctJobs(), AcctFilter{}, false, testJobsOptions())
	if b.String() != whole.String() {
		t.Errorf("streamed:\n%s\nwhole:\n%s", b.String(), whole.String())
	}
}
