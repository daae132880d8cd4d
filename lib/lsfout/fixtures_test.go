package lsfout

import (
	"time"

	"xce/lib/api"
)

// testZone is deliberately not UTC, so a test fails if a time is printed in
// the machine's zone instead of the one passed in.
var testZone = time.FixedZone("XST", -5*3600)

// testNow is the "current time" of every test.
var testNow = time.Date(2026, time.October, 22, 12, 0, 0, 0, testZone)

// at is a unix-nanosecond time in testZone.
func at(month time.Month, day, h, m, s int) int64 {
	return time.Date(2026, month, day, h, m, s, 0, testZone).UnixNano()
}

func testJobsOptions() JobsOptions {
	return JobsOptions{Now: testNow, Location: testZone}
}

// Fixture jobs, one per situation the formats treat differently.

// jobRunning is a plain one-slot running job with usage.
func jobRunning() *api.Job {
	spec := &api.JobSpec{
		Command: "sleep 100", User: "user1", Home: "/home/user1",
		SubmitHost: "hostA", SubmitCwd: "/home/user1/work", Queue: "normal",
	}
	eff := &api.JobSpec{
		Command: "sleep 100", User: "user1", Queue: "normal", Project: "default",
		RunLimitSec: 3600, ResReq: []string{"select[type == local] order[r15s:pg]"},
	}
	return &api.Job{
		JobId: 1234, Spec: spec, Effective: eff, State: api.JobState_RUN,
		SubmitTime: at(10, 22, 9, 22, 5), StartTime: at(10, 22, 9, 22, 8),
		ExecHosts: []*api.HostSlots{{Host: "hostB", Slots: 1}}, AllocSlots: 1,
		ExecHome: "/home/user1", ExecCwd: "/home/user1/work",
		SpoolOutput: "/var/spool/xce/hostB/1234.out", Pid: 6395,
		Usage: &api.ResourceUsage{
			CpuTimeMs: 62400, MemKb: 120 * 1024, MaxMemKb: 130 * 1024, AvgMemKb: 110 * 1024,
			SwapKb: 300 * 1024, Nthreads: 9, Pgid: 6395, Pids: []int32{6395, 6397, 6399},
			CollectedTime: at(10, 22, 10, 12, 20),
		},
	}
}

// jobPending has a long -J name and two pending reasons.
func jobPending() *api.Job {
	spec := &api.JobSpec{
		Command: "./build.sh", JobName: "verylongjobname_abc", User: "user1",
		Home: "/home/user1", SubmitHost: "hostA", SubmitCwd: "/home/user1",
		OutputFile: "out.%J", ErrorFile: "err.%J", ErrorOverwrite: true,
		MinTasks: 4, MaxTasks: 4, ResReq: []string{"span[hosts=1]"},
	}
	eff := &api.JobSpec{Queue: "normal", Project: "proj1", ResReq: []string{"select[mem>100] span[hosts=1]"}}
	return &api.Job{
		JobId: 1235, Spec: spec, Effective: eff, State: api.JobState_PEND,
		SubmitTime: at(10, 22, 9, 23, 0),
		PendReason: "Job's resource requirements not satisfied: 2 hosts;\nClosed by LSF administrator: 1 host",
	}
}

// jobParallel runs on two hosts with four slots each; its user, queue and
// host names are longer than the default columns.
func jobParallel() *api.Job {
	spec := &api.JobSpec{
		Command: "mpirun ./solver -i input.dat -o output.dat --iterations 1000", JobName: "myjob",
		User: "alongusername", Home: "/home/alongusername", SubmitHost: "submithost01",
		SubmitCwd: "/scratch/alongusername/run42", MinTasks: 8, MaxTasks: 8,
		ResReq: []string{"span[ptile=4]"}, MailUser: "al@example.com", NotifyEnd: true,
		Exclusive: true, Hosts: []string{"hostC", "hostD"}, UserPriority: 50,
	}
	eff := &api.JobSpec{
		Queue: "night_long_q", Project: "physics", App: "mpi", UserPriority: 50,
		MemLimitKb: 4 * 1024 * 1024, CpuLimitSec: 600, RunLimitSec: 7200, ResReq: []string{"span[ptile=4]"},
		Exclusive: true,
	}
	return &api.Job{
		JobId: 1236, Spec: spec, Effective: eff, State: api.JobState_RUN,
		SubmitTime: at(10, 2, 10, 5, 0), StartTime: at(10, 2, 10, 6, 30),
		ExecHosts:  []*api.HostSlots{{Host: "hostC", Slots: 4}, {Host: "hostD", Slots: 4}},
		AllocSlots: 8, ExecHome: "/home/alongusername", ExecCwd: "/scratch/alongusername/run42",
		Pid: 21001,
		Usage: &api.ResourceUsage{
			CpuTimeMs: 3_600_000, MemKb: 2_500_000, MaxMemKb: 5_452_595, AvgMemKb: 3_000_000,
			Nthreads: 40, Pgid: 21001,
			Pids: []int32{21001, 21002, 21003, 21004, 21005, 21006, 21007, 21008, 21009, 21010, 21011, 21012},
		},
	}
}

// jobArrayElement is element 3 of an array, done successfully.
func jobArrayElement() *api.Job {
	spec := &api.JobSpec{
		Command: "./process.sh in.$LSB_JOBINDEX", JobName: "arr", ArraySpec: "[1-10]",
		User: "user2", Home: "/home/user2", SubmitHost: "hostA", SubmitCwd: "/data/user2",
		OutputFile: "/data/user2/logs/out.%J.%I",
	}
	return &api.Job{
		JobId: 1240, ArrayIndex: 3, Spec: spec, Effective: &api.JobSpec{Queue: "short", Project: "default"},
		State: api.JobState_DONE, SubmitTime: at(10, 22, 8, 0, 0), StartTime: at(10, 22, 8, 0, 2),
		EndTime: at(10, 22, 8, 1, 2), ExecHosts: []*api.HostSlots{{Host: "hostE", Slots: 1}},
		ExecHome: "/home/user2", ExecCwd: "/data/user2", ArraySize: 10, ArrayEnd: 10, ArrayStep: 1,
		Usage: &api.ResourceUsage{CpuTimeMs: 58_100, MaxMemKb: 800, AvgMemKb: 600},
	}
}

// jobKilled was killed by its run limit.
func jobKilled() *api.Job {
	spec := &api.JobSpec{
		Command: "./long_simulation --steps 100000", User: "user1", Home: "/home/user1",
		SubmitHost: "hostA", SubmitCwd: "/home/user1/sim", RunLimitSec: 600,
	}
	eff := &api.JobSpec{Queue: "normal", Project: "default", RunLimitSec: 600}
	return &api.Job{
		JobId: 1237, Spec: spec, Effective: eff, State: api.JobState_EXIT,
		SubmitTime: at(10, 22, 9, 0, 0), StartTime: at(10, 22, 9, 0, 1), EndTime: at(10, 22, 9, 10, 2),
		ExecHosts: []*api.HostSlots{{Host: "hostB", Slots: 1}}, ExitStatus: 140,
		TermReason: api.TermReason_TERM_RUNLIMIT, TermReasonSet: true,
		ExecHome: "/home/user1", ExecCwd: "/home/user1/sim",
		SpoolOutput: "/var/spool/xce/hostB/1237.out",
		Usage:       &api.ResourceUsage{CpuTimeMs: 599_900, MaxMemKb: 10 * 1024 * 1024, AvgMemKb: 9 * 1024 * 1024},
	}
}

// jobHeld is a script read from stdin, submitted on hold.
func jobHeld() *api.Job {
	spec := &api.JobSpec{
		Command:         "#!/bin/sh\n#BSUB -q night\n\n# prepare\ncd /tmp\n./nightly.sh\n",
		CommandIsScript: true, User: "user3", Home: "/home/user3", SubmitHost: "hostF",
		SubmitCwd: "/home/user3", Hold: true, Dependency: "done(1234)",
		BeginTime: at(10, 23, 1, 0, 0) / int64(time.Second),
	}
	return &api.Job{
		JobId: 1238, Spec: spec, Effective: &api.JobSpec{Queue: "night", Project: "default"},
		State: api.JobState_PSUSP, SubmitTime: at(10, 22, 11, 30, 0),
		PendReason: "The job was suspended by the user while pending",
	}
}

// jobStopped was stopped by its owner while running; it has no effective
// spec, so the formats fall back to the submission.
func jobStopped() *api.Job {
	spec := &api.JobSpec{
		Command: "python train.py --epochs 50", User: "user4", Home: "/home/user4",
		SubmitHost: "hostG", SubmitCwd: "/home/user4/ml", Queue: "gpu",
		OutputFile: "train.log", OutputOverwrite: true,
	}
	return &api.Job{
		JobId: 1239, Spec: spec, State: api.JobState_USUSP,
		SubmitTime: at(10, 21, 23, 59, 59), StartTime: at(10, 22, 0, 0, 5),
		ExecHosts: []*api.HostSlots{{Host: "gpuhost1", Slots: 2}}, ExecHome: "/home/user4",
		ExecCwd: "/home/user4/ml", Pid: 777,
		Usage: &api.ResourceUsage{CpuTimeMs: 500, MemKb: 900, Nthreads: 1, CollectedTime: at(10, 22, 0, 1, 0)},
	}
}

// allJobs is every fixture in a typical bjobs -a order.
func allJobs() []*api.Job {
	return []*api.Job{jobRunning(), jobParallel(), jobStopped(), jobPending(), jobHeld(), jobArrayElement(), jobKilled()}
}

func testQueues() []*api.Queue {
	return []*api.Queue{
		{Name: "owners", Priority: 43, Open: true, Active: true, UserSlotLimit: 6, Njobs: 1, Run: 1},
		{Name: "night", Priority: 40, Open: true, MaxSlots: 4, UserSlotLimit: 2, HostSlotLimit: 1, Njobs: 4, Pend: 4},
		{Name: "normal", Priority: 30, Open: true, Active: true, UserSlotLimit: 2},
		{Name: "a_queue_name_longer_than_15", Priority: 1, Active: true, MaxSlots: 12000, ProcLimit: 8,
			Njobs: 123456, Pend: 100000, Run: 23000, Ssusp: 400, Ususp: 56},
		{Name: "closed", Priority: 5},
	}
}

func testHosts() []*api.Host {
	return []*api.Host{
		{Name: "hostA", State: api.HostState_HOST_OK, MaxSlots: 55, Njobs: 2, Run: 2},
		{Name: "hostB", State: api.HostState_HOST_CLOSED, StatusDetail: "closed_Full", MaxSlots: 8, Njobs: 8, Run: 8},
		{Name: "verylonghostname.example.com", State: api.HostState_HOST_UNAVAIL},
		{Name: "hostC", State: api.HostState_HOST_CLOSED, StatusDetail: "closed_Adm", MaxSlots: 16, Njobs: 3, Run: 1, Ssusp: 1, Ususp: 1, Rsv: 0},
		{Name: "hostD", State: api.HostState_HOST_UNREACH, MaxSlots: 4, Njobs: 4, Run: 4},
	}
}
