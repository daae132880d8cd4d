package lsfout

import (
	"bytes"
	"strings"
	"testing"

	"xce/lib/api"
)

// lsHosts are testHosts with the static and load information lshosts and
// lsload print.
func lsHosts() []*api.Host {
	hs := testHosts()
	hs[0].Type, hs[0].Model, hs[0].CpuFactor, hs[0].Ncpus = "X86_64", "Intel_EM", 60, 16
	hs[0].MaxmemKb, hs[0].MaxswpKb, hs[0].Resources = 64000*1024, 4000*1024, []string{"mg"}
	hs[0].R15S, hs[0].R1M, hs[0].R15M, hs[0].Ut = 0.04, 1.26, 2.5, 0.123
	hs[0].TmpKb, hs[0].SwpKb, hs[0].MemKb = 43*1024*1024, 3500*1024, 900*1024
	hs[1].Type, hs[1].Model, hs[1].CpuFactor, hs[1].Ncpus = "X86_64", "AMD_EPYC_7763", 100, 256
	hs[1].MaxmemKb, hs[1].MaxswpKb, hs[1].Resources = 1031*1024*1024, 0, []string{"gpu", "fs", "linux"}
	hs[1].R15S, hs[1].R1M, hs[1].R15M, hs[1].Ut, hs[1].MemKb = 250, 248.7, 200.1, 1, 1500*1024*1024
	hs[3].StatusDetail = "closed_Excl"
	return hs
}

// The lshosts example of output-formats.md section 9, byte for byte.
func TestWriteLSHostsSpecExample(t *testing.T) {
	var b bytes.Buffer
	if err := WriteLSHosts(&b, lsHosts()[:1], false); err != nil {
		t.Fatal(err)
	}
	want := "HOST_NAME      type    model  cpuf ncpus maxmem maxswp server RESOURCES\n" +
		"hostA        X86_64 Intel_EM  60.0    16 64000M  4000M    Yes (mg)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteLSHostsAndLoadGolden(t *testing.T) {
	for name, f := range map[string]func(*bytes.Buffer) error{
		"lshosts":      func(b *bytes.Buffer) error { return WriteLSHosts(b, lsHosts(), false) },
		"lshosts_wide": func(b *bytes.Buffer) error { return WriteLSHosts(b, lsHosts(), true) },
		"lsload":       func(b *bytes.Buffer) error { return WriteLSLoad(b, lsHosts(), LoadOptions{}) },
		"lsload_wide":  func(b *bytes.Buffer) error { return WriteLSLoad(b, lsHosts(), LoadOptions{Wide: true}) },
	} {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, name, b.String())
	}
}

// The lsload header of output-formats.md section 9, byte for byte.
func TestWriteLSLoadHeader(t *testing.T) {
	var b bytes.Buffer
	if err := WriteLSLoad(&b, nil, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "HOST_NAME       status  r15s   r1m  r15m   ut    pg  ls    it   tmp   swp   mem\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
}

func TestLoadMemUnits(t *testing.T) {
	for kb, want := range map[int64]string{0: "-", 900 * 1024: "900M", 3500 * 1024: "3.4G", 43 * 1024 * 1024: "43G", 2048 * 1024 * 1024: "2.0T"} {
		if got := loadMem(kb); got != want {
			t.Errorf("loadMem(%d) = %q, want %q", kb, got, want)
		}
	}
	for kb, want := range map[int64]string{0: "-", 64000 * 1024: "64000M", 261939 * 1024: "255.8G", 99999 * 1024: "99999M"} {
		if got := lsMem(kb); got != want {
			t.Errorf("lsMem(%d) = %q, want %q", kb, got, want)
		}
	}
}

func TestWriteClusterID(t *testing.T) {
	var b bytes.Buffer
	if err := WriteClusterID(&b, "XCE 0.1, LSF-compatible batch system\n", &api.ClusterInfo{ClusterName: "xce", MasterHost: "hostA"}); err != nil {
		t.Fatal(err)
	}
	want := "XCE 0.1, LSF-compatible batch system\n\nMy cluster name is xce\nMy master name is hostA\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// busers -w as a real LSF prints it (its PRIO column left out), byte for
// byte.
func TestWriteUsersWideExample(t *testing.T) {
	var b bytes.Buffer
	if err := WriteUsers(&b, []UserSlots{{User: "liayu"}}, true); err != nil {
		t.Fatal(err)
	}
	want := "USER/GROUP          JL/P    MAX  NJOBS   PEND    RUN  SSUSP  USUSP    RSV  MPEND  PJOBS MPJOBS \n" +
		"liayu                  -      -      0      0      0      0      0      0      -      0      -\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// The busers example of output-formats.md section 8, byte for byte.
func TestWriteUsersSpecExample(t *testing.T) {
	var b bytes.Buffer
	if err := WriteUsers(&b, []UserSlots{{User: "user1", NJobs: 3, Pend: 1, Run: 2}}, false); err != nil {
		t.Fatal(err)
	}
	want := "USER/GROUP          JL/P    MAX  NJOBS   PEND    RUN  SSUSP  USUSP    RSV \n" +
		"user1                  -      -      3      1      2      0      0      0\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestCountUserSlotsGolden(t *testing.T) {
	users := CountUserSlots(allJobs())
	var b bytes.Buffer
	if err := WriteUsers(&b, users, false); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "busers", b.String())
	b.Reset()
	if err := WriteUsers(&b, users, true); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "busers_wide", b.String())
	if !strings.Contains(b.String(), "\nalongusername ") {
		t.Errorf("-w cuts the user name:\n%s", b.String())
	}
	// user1: 1 running slot, 4 pending; the finished job counts nothing.
	for _, u := range users {
		if u.User == "user1" && (u.Run != 1 || u.Pend != 4 || u.NJobs != 5) {
			t.Errorf("user1: %+v", u)
		}
	}
}

// The bjobs -sum example of output-formats.md section 2.5, byte for byte.
func TestWriteJobsSumSpecExample(t *testing.T) {
	var jobs []*api.Job
	add := func(s api.JobState, slots int32) {
		jobs = append(jobs, &api.Job{State: s, AllocSlots: slots, Effective: &api.JobSpec{MinTasks: slots}})
	}
	add(api.JobState_RUN, 123)
	add(api.JobState_SSUSP, 456)
	add(api.JobState_USUSP, 789)
	add(api.JobState_UNKWN, 5)
	add(api.JobState_PEND, 5)
	add(api.JobState_PSUSP, 3)
	add(api.JobState_DONE, 7)
	var b bytes.Buffer
	if err := WriteJobsSum(&b, jobs, false); err != nil {
		t.Fatal(err)
	}
	want := "RUN        SSUSP       USUSP      UNKNOWN    PEND       FWD_PEND  PSUSP    \n" +
		"123        456         789        5          5          0         3        \n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func testArray() []*api.Job {
	var jobs []*api.Job
	states := []api.JobState{api.JobState_DONE, api.JobState_DONE, api.JobState_EXIT, api.JobState_RUN, api.JobState_RUN,
		api.JobState_SSUSP, api.JobState_USUSP, api.JobState_PSUSP, api.JobState_PEND, api.JobState_PEND}
	for i, s := range states {
		j := jobArrayElement()
		j.JobId, j.ArrayIndex, j.State = 1300, int32(i+1), s
		j.Spec.JobName, j.Spec.ArraySpec = "sweep", "[1-10]"
		jobs = append(jobs, j)
	}
	return jobs
}

func TestWriteArraysGolden(t *testing.T) {
	jobs := append(testArray(), jobRunning(), jobArrayElement())
	arrays := CountArrays(jobs)
	if len(arrays) != 2 {
		t.Fatalf("%d arrays, want 2 (plain jobs are left out)", len(arrays))
	}
	var b bytes.Buffer
	if err := WriteArrays(&b, arrays, false, false); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "jobs_arrays", b.String())
	if !strings.HasPrefix(b.String(), arraysHeader+"1300     sweep[1- ") {
		t.Errorf("got\n%s", b.String())
	}
	b.Reset()
	WriteArrays(&b, arrays, true, true)
	if !strings.HasPrefix(b.String(), "1300     sweep[1-10]    user2      10    2    2    2    1     1     1     1\n") {
		t.Errorf("-w -noheader: got\n%q", b.String())
	}
}

func TestWriteJobsStatsGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJobsStats(&b, allJobs(), testJobsOptions()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "jobs_stats", b.String())
	// Every row splits into the header's columns when the name has no blank.
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	header := strings.Fields(lines[0])
	for i, j := range allJobs() {
		l := lines[i+1]
		if f := strings.Fields(l); !strings.Contains(DisplayName(j), " ") && len(f) != len(header) {
			t.Errorf("%d columns, want %d: %q", len(f), len(header), l)
		}
	}
}

func acctJobs() []*api.Job {
	done := jobArrayElement() // 2 s wait, 60 s run, 58.1 s CPU
	killed := jobKilled()     // 1 s wait, 601 s run, 599.9 s CPU, TERM_RUNLIMIT
	never := jobPending()     // killed while pending after 60 s
	never.State, never.EndTime = api.JobState_EXIT, never.SubmitTime+60e9
	never.TermReason, never.TermReasonSet = api.TermReason_TERM_OWNER, true
	return []*api.Job{done, killed, never, jobRunning()}
}

func TestWriteAcctGolden(t *testing.T) {
	for name, c := range map[string]struct {
		filter AcctFilter
		long   bool
	}{
		"bacct":      {AcctFilter{Users: []string{"user1"}}, false},
		"bacct_long": {AcctFilter{Queues: []string{"normal", "short"}}, true},
	} {
		var b bytes.Buffer
		if err := WriteAcct(&b, acctJobs(), c.filter, c.long, testJobsOptions()); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, name, b.String())
	}
}

// The SUMMARY of a real LSF bacct, rebuilt from its numbers: every line
// that XCE prints the same way, byte for byte.
func TestAcctSummaryLayout(t *testing.T) {
	s := acctStats{n: 10, done: 8, exited: 2, cpu: 7.8, cpuMax: 1.9, wait: 8, waitMax: 2,
		turn: 5000, turnMax: 2513, turnMin: 7, hog: 0.3, hogMax: 0.09, nExp: 1, exp: 13.81, expMax: 114, expMin: 1,
		run: 4873, runMax: 2513}
	var b strings.Builder
	s.write(&b, testZone)
	for _, want := range []string{
		"SUMMARY:      ( time unit: second ) \n",
		" Total number of done jobs:       8      Total number of exited jobs:     2\n",
		" Total CPU time consumed:       7.8      Average CPU time consumed:     0.8\n",
		" Maximum CPU time of a job:     1.9      Minimum CPU time of a job:     0.0\n",
		" Total wait time in queues:     8.0\n",
		" Average wait time in queue:    0.8\n",
		" Maximum wait time in queue:    2.0      Minimum wait time in queue:    0.0\n",
		" Average turnaround time:       500 (seconds/job)\n",
		" Maximum turnaround time:      2513      Minimum turnaround time:         7\n",
		" Average hog factor of a job:  0.03 ( cpu time / turnaround time )\n",
		" Maximum hog factor of a job:  0.09      Minimum hog factor of a job:  0.00\n",
		" Average expansion factor of a job:  13.81 ( turnaround time / run time )\n",
		" Maximum expansion factor of a job:  114.00\n",
		" Minimum expansion factor of a job:  1.00\n",
		" Total Run time consumed:      4873      Average Run time consumed:     487\n",
		" Maximum Run time of a job:    2513      Minimum Run time of a job:       0\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
