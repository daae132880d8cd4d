package lsfout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

func writeLong(t *testing.T, jobs []*api.Job, opt JobsOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJobsLong(&b, jobs, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Wrap on the three wrapped paragraphs of the bjobs -l example in
// output-formats.md section 3.
func TestWrapSpecExample(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{
			"Job <1234>, Job Name <myjob>, User <user1>, Project <default>, Status <RUN>, Queue <normal>, Command <./run_simulation.sh input.dat>",
			"Job <1234>, Job Name <myjob>, User <user1>, Project <default>, Status <RUN>, Qu\n" +
				"                     eue <normal>, Command <./run_simulation.sh input.dat>",
		},
		{
			// the space at the wrap point is dropped
			"Mon Oct 22 10:11:12: Submitted from host <hostA>, CWD <$HOME/work>, Output File <out.%J>, 4 Task(s), Requested Resources <span[hosts=1]>;",
			"Mon Oct 22 10:11:12: Submitted from host <hostA>, CWD <$HOME/work>, Output File\n" +
				"                     <out.%J>, 4 Task(s), Requested Resources <span[hosts=1]>;",
		},
		{
			"Mon Oct 22 10:11:15: Started 4 Task(s) on Host(s) <4*hostB>, Allocated 4 Slot(s) on Host(s) <4*hostB>, Execution Home </home/user1>, Execution CWD </home/user1/work>;",
			"Mon Oct 22 10:11:15: Started 4 Task(s) on Host(s) <4*hostB>, Allocated 4 Slot(s\n" +
				"                     ) on Host(s) <4*hostB>, Execution Home </home/user1>, Exec\n" +
				"                     ution CWD </home/user1/work>;",
		},
	} {
		if got := Wrap(tc.in); got != tc.want {
			t.Errorf("Wrap(%q)\n got:\n%s\nwant:\n%s", tc.in, got, tc.want)
		}
	}
}

// Wrap checked character by character against the rule: 79 characters, then
// 21 spaces and 58 characters per line; the character at a break is dropped
// only when it is a space.
func TestWrapRuleCharByChar(t *testing.T) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var in []byte
	for i := 0; i < 300; i++ {
		in = append(in, alphabet[i%len(alphabet)])
	}
	in[79] = ' '      // at the first break: dropped
	in[79+1+57] = ' ' // last character of the second line: kept
	out := Wrap(string(in))

	// Build the expected output independently of Wrap's own loop.
	var want strings.Builder
	rest := string(in)
	want.WriteString(rest[:79])
	rest = rest[79:]
	for rest != "" {
		if rest[0] == ' ' {
			rest = rest[1:]
		}
		n := min(58, len(rest))
		want.WriteString("\n" + strings.Repeat(" ", 21) + rest[:n])
		rest = rest[n:]
	}
	if out != want.String() {
		t.Fatalf("Wrap:\n got:\n%s\nwant:\n%s", out, want.String())
	}
	lines := strings.Split(out, "\n")
	if len(lines[0]) != 79 {
		t.Errorf("first line has %d characters, want 79", len(lines[0]))
	}
	for i, l := range lines[1:] {
		if !strings.HasPrefix(l, strings.Repeat(" ", 21)) || len(l) > 79 {
			t.Errorf("continuation %d = %q: want 21 spaces and at most 58 characters", i+1, l)
		}
		if i < len(lines)-2 && len(l) != 79 {
			t.Errorf("continuation %d has %d characters, want 79", i+1, len(l))
		}
	}
	if lines[1][21] != alphabet[80%len(alphabet)] {
		t.Errorf("continuation starts with %q, want the character after the dropped space", lines[1][21])
	}
	if !strings.HasSuffix(lines[1], " ") {
		t.Errorf("a space that ends a line must be kept: %q", lines[1])
	}
}

func TestWrapEdges(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{strings.Repeat("x", 79), strings.Repeat("x", 79)},
		{strings.Repeat("x", 80), strings.Repeat("x", 79) + "\n" + strings.Repeat(" ", 21) + "x"},
		// a newline starts the count again
		{"ab\n" + long, "ab\n" + long[:79] + "\n" + strings.Repeat(" ", 21) + long[79:]},
		// a space at the break that ends the text leaves no empty line
		{strings.Repeat("x", 79) + " ", strings.Repeat("x", 79)},
		// columns are runes
		{strings.Repeat("é", 80), strings.Repeat("é", 79) + "\n" + strings.Repeat(" ", 21) + "é"},
	} {
		if got := Wrap(tc.in); got != tc.want {
			t.Errorf("Wrap(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// specExampleJob is the job of the bjobs -l example in output-formats.md.
func specExampleJob() *api.Job {
	loc := testZone
	t := func(h, m, s int) int64 { return time.Date(2018, time.October, 22, h, m, s, 0, loc).UnixNano() }
	return &api.Job{
		JobId: 1234,
		Spec: &api.JobSpec{
			Command: "./run_simulation.sh input.dat", JobName: "myjob", User: "user1",
			Home: "/home/user1", SubmitHost: "hostA", SubmitCwd: "/home/user1/work",
			OutputFile: "out.%J", MinTasks: 4, MaxTasks: 4, ResReq: []string{"span[hosts=1]"},
		},
		Effective: &api.JobSpec{
			Queue: "normal", Project: "default",
			ResReq: []string{"select[type == local] order[r15s:pg] span[hosts=1]"},
		},
		State:      api.JobState_RUN,
		SubmitTime: t(10, 11, 12), StartTime: t(10, 11, 15),
		ExecHosts: []*api.HostSlots{{Host: "hostB", Slots: 4}}, AllocSlots: 4,
		ExecHome: "/home/user1", ExecCwd: "/home/user1/work",
		SpoolOutput: "/not/shown/because/of/-o",
		Usage: &api.ResourceUsage{
			CpuTimeMs: 62_000, MemKb: 120 * 1024, SwapKb: 300 * 1024, Nthreads: 9,
			Pgid: 6395, Pids: []int32{6395, 6397, 6399}, MaxMemKb: 130 * 1024, AvgMemKb: 110 * 1024,
			CollectedTime: t(10, 12, 20),
		},
	}
}

// The whole bjobs -l example of output-formats.md section 3. The spec's
// table rows lose their trailing blanks in Markdown, so lines are compared
// without them; TestWriteJobsLongThresholdRows checks those exactly.
func TestWriteJobsLongSpecExample(t *testing.T) {
	want := `
Job <1234>, Job Name <myjob>, User <user1>, Project <default>, Status <RUN>, Qu
                     eue <normal>, Command <./run_simulation.sh input.dat>
Mon Oct 22 10:11:12: Submitted from host <hostA>, CWD <$HOME/work>, Output File
                     <out.%J>, 4 Task(s), Requested Resources <span[hosts=1]>;
Mon Oct 22 10:11:15: Started 4 Task(s) on Host(s) <4*hostB>, Allocated 4 Slot(s
                     ) on Host(s) <4*hostB>, Execution Home </home/user1>, Exec
                     ution CWD </home/user1/work>;
Mon Oct 22 10:12:20: Resource usage collected.
                     The CPU time used is 62 seconds.
                     MEM: 120 Mbytes;  SWAP: 300 Mbytes;  NTHREAD: 9
                     PGID: 6395;  PIDs: 6395 6397 6399

 MEMORY USAGE:
 MAX MEM: 130 Mbytes;  AVG MEM: 110 Mbytes

 SCHEDULING PARAMETERS:
           r15s   r1m  r15m   ut      pg    io   ls    it    tmp    swp    mem
 loadSched   -     -     -     -       -     -    -     -     -      -      -
 loadStop    -     -     -     -       -     -    -     -     -      -      -

 RESOURCE REQUIREMENT DETAILS:
 Combined: select[type == local] order[r15s:pg] span[hosts=1]
 Effective: select[type == local] order[r15s:pg] span[hosts=1]
`
	got := writeLong(t, []*api.Job{specExampleJob()}, testJobsOptions())
	trim := func(s string) []string {
		lines := strings.Split(s, "\n")
		for i := range lines {
			lines[i] = strings.TrimRight(lines[i], " ")
		}
		return lines
	}
	g, w := trim(got), trim(want)
	if len(g) != len(w) {
		t.Errorf("got %d lines, want %d:\n%s", len(g), len(w), got)
	}
	for i := 0; i < min(len(g), len(w)); i++ {
		if g[i] != w[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, g[i], w[i])
		}
	}
}

// The load threshold rows keep OpenLava's trailing blanks.
func TestWriteJobsLongThresholdRows(t *testing.T) {
	got := writeLong(t, []*api.Job{specExampleJob()}, testJobsOptions())
	for _, row := range []string{
		"\n loadSched   -     -     -     -       -     -    -     -     -      -      -  \n",
		"\n loadStop    -     -     -     -       -     -    -     -     -      -      -  \n",
	} {
		if !strings.Contains(got, row) {
			t.Errorf("missing row %q", row)
		}
	}
}

// -UF: no folding; the day of month is not padded.
func TestWriteJobsLongUnformatted(t *testing.T) {
	j := specExampleJob()
	j.SubmitTime = time.Date(2014, time.May, 6, 15, 45, 10, 0, testZone).UnixNano()
	opt := testJobsOptions()
	opt.Unformatted = true
	lines := strings.Split(writeLong(t, []*api.Job{j}, opt), "\n")
	want := []string{
		"",
		"Job <1234>, Job Name <myjob>, User <user1>, Project <default>, Status <RUN>, Queue <normal>, Command <./run_simulation.sh input.dat>",
		"Tue May  6 15:45:10: Submitted from host <hostA>, CWD <$HOME/work>, Output File <out.%J>, 4 Task(s), Requested Resources <span[hosts=1]>;",
		"Mon Oct 22 10:11:15: Started 4 Task(s) on Host(s) <4*hostB>, Allocated 4 Slot(s) on Host(s) <4*hostB>, Execution Home </home/user1>, Execution CWD </home/user1/work>;",
		"Mon Oct 22 10:12:20: Resource usage collected. The CPU time used is 62 seconds. MEM: 120 Mbytes;  SWAP: 300 Mbytes;  NTHREAD: 9; PGID: 6395;  PIDs: 6395 6397 6399;",
	}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, lines[min(i, len(lines)-1)], w)
		}
	}
}

// Records are separated by 78 dashes, and each starts with a blank line.
func TestWriteJobsLongSeparator(t *testing.T) {
	got := writeLong(t, []*api.Job{jobRunning(), jobPending()}, testJobsOptions())
	sep := "\n" + strings.Repeat("-", 78) + "\n\nJob <1235>"
	if strings.Count(got, strings.Repeat("-", 78)) != 1 || !strings.Contains(got, sep) {
		t.Errorf("want one separator line followed by a blank line:\n%s", got)
	}
	if !strings.HasPrefix(got, "\nJob <1234>") {
		t.Errorf("want a blank line before the first record:\n%s", got)
	}
}

// A job without -o names its spool file, once it has started.
func TestWriteJobsLongSpool(t *testing.T) {
	got := writeLong(t, []*api.Job{jobRunning()}, JobsOptions{Now: testNow, Location: testZone, Unformatted: true})
	if !strings.Contains(got, ", Output spooled to </var/spool/xce/hostB/1234.out>;\n") {
		t.Errorf("no spool item at the end of the Started paragraph:\n%s", got)
	}
	if strings.Contains(writeLong(t, []*api.Job{specExampleJob()}, testJobsOptions()), "spooled") {
		t.Errorf("a job with -o must not show a spool file")
	}
}

func TestWriteJobsLongGolden(t *testing.T) {
	checkGolden(t, "long", writeLong(t, allJobs(), testJobsOptions()))
	opt := testJobsOptions()
	opt.Unformatted = true
	checkGolden(t, "long_unformatted", writeLong(t, allJobs(), opt))
}
