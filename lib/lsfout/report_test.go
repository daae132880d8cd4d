package lsfout_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// -update-report rewrites testdata/report_*.golden from the current output.
var updateReport = flag.Bool("update-report", false, "rewrite the job report golden files")

// reportAt is a time on 5 October 2026 in the local zone, so that the golden
// files do not depend on the zone the test runs in.
func reportAt(h, m, s int) int64 {
	return time.Date(2026, time.October, 5, h, m, s, 0, time.Local).UnixNano()
}

func TestReportGolden(t *testing.T) {
	cases := []struct {
		name string
		job  *api.Job
		end  *api.Event
	}{
		{
			name: "done",
			job: &api.Job{
				JobId: 748,
				Spec: &api.JobSpec{
					Command: "./run.sh input.dat", User: "alice", Home: "/home/alice",
					SubmitHost: "hostB", OutputFile: "out.%J", ResReq: []string{"select[mem>100] rusage[mem=4GB:duration=10]"},
				},
				Effective:  &api.JobSpec{Queue: "normal"},
				SubmitTime: reportAt(10, 0, 0),
				StartTime:  reportAt(10, 0, 5),
				ExecHosts:  []*api.HostSlots{{Host: "hostA", Slots: 1}},
			},
			end: &api.Event{
				Type: api.EventType_FINISH, State: api.JobState_DONE, Time: reportAt(10, 2, 5),
				ExecHome: "/home/alice", ExecCwd: "/proj/work", CpuTimeMs: 12340,
				Usage: &api.ResourceUsage{MaxMemKb: 3000, AvgMemKb: 2048, Nprocs: 3, Nthreads: 5},
			},
		},
		{
			name: "runlimit",
			job: &api.Job{
				JobId: 1234,
				Spec: &api.JobSpec{
					Command: "mpirun ./solver", JobName: "solve", User: "bob", Home: "/home/bob",
					SubmitHost: "login1", OutputFile: "out.%J", ErrorFile: "err.%J", Queue: "long",
				},
				SubmitTime: reportAt(9, 59, 0),
				StartTime:  reportAt(10, 0, 5),
				ExecHosts:  []*api.HostSlots{{Host: "hostA", Slots: 4}, {Host: "hostB", Slots: 1}, {Host: "hostC", Slots: 2}},
			},
			end: &api.Event{
				Type: api.EventType_FINISH, State: api.JobState_EXIT, Time: reportAt(11, 0, 5),
				ExitStatus: 140, Signal: 12, TermReason: api.TermReason_TERM_RUNLIMIT,
				ExecHome: "/home/bob", ExecCwd: "/scratch/bob", CpuTimeMs: 7200000,
				Usage: &api.ResourceUsage{MaxMemKb: 4 << 20, AvgMemKb: 2048000, Nprocs: 9, Nthreads: 40},
			},
		},
		{
			name: "array_memlimit",
			job: &api.Job{
				JobId:      1234,
				ArrayIndex: 3,
				Spec: &api.JobSpec{
					Command:         "#!/bin/sh\n#BSUB -J myarray[1-5]%2\n#BSUB -o logs/\n./run.sh $LSB_JOBINDEX\n",
					CommandIsScript: true, JobName: "myarray", ArraySpec: "[1-5]", ArrayLimit: 2,
					User: "alice", Home: "/home/alice", SubmitHost: "hostB",
					OutputFile: "logs/", ErrorFile: "logs/", ResReq: []string{"rusage[mem=1000]"},
				},
				Effective:  &api.JobSpec{Queue: "normal"},
				SubmitTime: reportAt(10, 0, 0),
				StartTime:  reportAt(10, 0, 5),
			},
			end: &api.Event{
				Type: api.EventType_FINISH, State: api.JobState_EXIT, Time: reportAt(10, 0, 7),
				ExitStatus: 137, TermReason: api.TermReason_TERM_MEMLIMIT,
				ExecHome: "/home/alice", ExecCwd: "/proj/work", CpuTimeMs: 10,
			},
		},
		{
			name: "exit",
			job: &api.Job{
				JobId: 77,
				Spec: &api.JobSpec{
					Command: "false", User: "carol", Home: "/home/carol", SubmitHost: "hostB",
					OutputFile: "both.txt", ErrorFile: "both.txt",
				},
				Effective:  &api.JobSpec{Queue: "short"},
				SubmitTime: reportAt(23, 59, 58),
				StartTime:  reportAt(23, 59, 59),
			},
			end: &api.Event{
				Type: api.EventType_FINISH, State: api.JobState_EXIT, Time: reportAt(23, 59, 59) + int64(1500*time.Millisecond),
				ExitStatus: 1, ExecHome: "/home/carol", ExecCwd: "/tmp",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := lsfout.JobReport(c.job, c.end, "cluster1", "", "hostA")
			path := filepath.Join("testdata", "report_"+c.name+".golden")
			if *updateReport {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-report to create it)", err)
			}
			if got != string(want) {
				t.Errorf("report differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

// TestReportColumns checks the layout rules that the golden files only show
// by example: every usage value starts at column 49, and the second and
// later execution hosts are indented under the first.
func TestReportColumns(t *testing.T) {
	job := &api.Job{
		JobId:     5,
		Spec:      &api.JobSpec{Command: "true", User: "u"},
		ExecHosts: []*api.HostSlots{{Host: "a", Slots: 2}, {Host: "b", Slots: 1}},
	}
	end := &api.Event{State: api.JobState_DONE, Time: reportAt(12, 0, 0)}
	r := lsfout.JobReport(job, end, "c", "", "a")
	if !strings.Contains(r, "Job was executed on host(s) <2*a>\n                            <b>, in queue") {
		t.Errorf("host continuation line wrong:\n%s", r)
	}
	inSummary := false
	for _, line := range strings.Split(r, "\n") {
		switch {
		case line == "Resource usage summary:":
			inSummary = true
		case inSummary && strings.HasPrefix(line, "    "):
			if len(line) < 50 || line[48] != ' ' || line[49] == ' ' {
				t.Errorf("value not at column 49: %q", line)
			}
		case inSummary && strings.HasPrefix(line, "The output"):
			inSummary = false
		}
	}
	if !strings.HasPrefix(r, "Sender: LSF System <lsfadmin@a>\nSubject: Job 5: <true> in cluster <c> Done\n") {
		t.Errorf("header wrong:\n%s", r)
	}
	if strings.Contains(r, "PS:") {
		t.Errorf("PS note without an -e file:\n%s", r)
	}
}
