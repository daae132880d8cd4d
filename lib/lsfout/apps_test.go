package lsfout

import (
	"bytes"
	"strings"
	"testing"

	"xce/lib/api"
)

// Configured queues: a default queue with limits, defaults and fairshare, a
// preemptive queue with windows and deprecated LSF settings, a bare one and
// lost_and_found.
func testConfiguredQueues() []*api.Queue {
	return []*api.Queue{
		{
			Name: "normal", Priority: 30, Nice: 20, Open: true, Active: true, IsDefault: true,
			Description:   "For normal low priority jobs, running only if hosts are lightly loaded.",
			UserSlotLimit: 8, Njobs: 12, Pend: 4, Run: 6, Ssusp: 1, Ususp: 1,
			RunLimitSec: 12 * 3600, DefaultRunLimitSec: 3600, MaxMemKb: 64 << 20, DefaultMemKb: 4 << 20,
			MinTasks: 1, DefaultTasks: 1, MaxTasks: 64,
			UserShares: map[string]int32{"default": 1, "physics": 10, "chem": 5},
			Exclusive:  true, Administrators: []string{"lsfadmin", "ops"},
		},
		{
			Name: "night", Priority: 40, Open: true, Description: "Long jobs that run overnight.",
			MaxSlots: 256, UserSlotLimit: 16, ProcLimit: 1, HostSlotLimit: 4, Njobs: 32, Pend: 32,
			RunLimitSec: 8 * 3600, MaxTasks: 128, MinTasks: 2,
			RunWindows: []string{"20:00-08:00"}, DispatchWindows: []string{"20:00-06:00", "sat:00:00-sun:23:59"},
			Preemptive: []string{"normal", "short"}, Hosts: []string{"hostA", "hostB", "bigmem"},
			Users:  []string{"alice", "bob", "physics"},
			ResReq: "select[type==X86_64] rusage[mem=1000]", PreExec: "/opt/lsf/scripts/stage_in.sh",
			PostExec: "/opt/lsf/scripts/stage_out.sh",
		},
		{Name: "short", Priority: 50, Open: true, Active: true, RunLimitSec: 1800, Preemptable: []string{"night"}},
		{
			Name: "lost_and_found", Priority: 1, LostAndFound: true, Njobs: 2, Pend: 2,
			Description: "Jobs whose queue was removed from the configuration; switch them to another queue.",
		},
	}
}

func testApps() []*api.App {
	return []*api.App{
		{
			Name: "fluent", Description: "ANSYS Fluent 2024 R1, single node",
			ResReq: "select[mem>8000] rusage[mem=8000] span[hosts=1]", Fixed: []string{"res_req", "tasks"},
			MinTasks: 4, DefaultTasks: 8, MaxTasks: 32, RunLimitSec: 24 * 3600, MemLimitKb: 32 << 20,
			PreExec: "/opt/ansys/bin/license_check fluent", PostExec: "/opt/ansys/bin/cleanup_scratch",
			JobStarter: "/opt/ansys/bin/fluent_env %USRCMD",
			Env:        map[string]string{"FLUENT_ARCH": "lnamd64", "ANSYSLMD_LICENSE_FILE": "1055@licsrv", "FLUENT_OPTS": "-g -t8"},
			Njobs:      24, Pend: 8, Run: 16,
		},
		{
			Name: "python", AllowJobExec: true, Env: map[string]string{"PYTHONUNBUFFERED": "1"},
			Njobs: 3, Run: 2, Ususp: 1,
		},
		{Name: "a_profile_name_longer_than_20", Description: "Checks the -w width", RunLimitSec: 600, MaxTasks: 1},
	}
}

// jobLayered is a job submitted with -app fluent whose values come from
// several layers.
func jobLayered() *api.Job {
	spec := &api.JobSpec{
		Command: "fluent 3ddp -i run.jou", User: "user1", Home: "/home/user1",
		SubmitHost: "hostA", SubmitCwd: "/home/user1/cfd", App: "fluent",
		ResReq: []string{"select[type==X86_64]"}, PreExec: "test -f run.jou",
	}
	eff := &api.JobSpec{
		Queue: "normal", Project: "cfd", App: "fluent", MinTasks: 8, MaxTasks: 8,
		ResReq:      []string{"select[(type==X86_64) && (mem>8000)] rusage[mem=8000] span[hosts=1]"},
		RunLimitSec: 24 * 3600, MemLimitKb: 32 << 20,
		PreExecChain:  []string{"/opt/ansys/bin/license_check fluent", "test -f run.jou"},
		PostExecChain: []string{"/opt/ansys/bin/cleanup_scratch"},
		JobStarter:    "/opt/ansys/bin/fluent_env %USRCMD",
		EnvOverlay:    []string{"ANSYSLMD_LICENSE_FILE=1055@licsrv", "FLUENT_ARCH=lnamd64"},
		Origin: map[string]string{
			"queue": "default", "app": "job", "project": "job", "min_tasks": "profile fluent",
			"max_tasks": "profile fluent", "res_req": "job + profile fluent",
			"run_limit_sec": "profile fluent", "mem_limit_kb": "profile fluent",
			"pre_exec": "job + profile fluent", "post_exec": "profile fluent",
			"job_starter": "profile fluent", "env": "profile fluent",
		},
	}
	return &api.Job{
		JobId: 1300, Spec: spec, Effective: eff, State: api.JobState_PEND,
		SubmitTime: at(10, 22, 11, 0, 0), PendReason: "Job's requirements for reserving resource (mem) not satisfied: 3 hosts",
	}
}

// jobLostAndFound lost its queue in a reconfiguration; its limit is the
// queue's ceiling and its requirement the deprecated queue RES_REQ.
func jobLostAndFound() *api.Job {
	spec := &api.JobSpec{
		Command: "./nightly.sh", User: "user2", Home: "/home/user2", SubmitHost: "hostB",
		SubmitCwd: "/home/user2", Queue: "night",
	}
	eff := &api.JobSpec{
		Queue: "lost_and_found", Project: "default", MinTasks: 2, MaxTasks: 2,
		ResReq:        []string{"select[type==X86_64] rusage[mem=1000]"},
		RunLimitSec:   8 * 3600,
		PreExecChain:  []string{"/opt/lsf/scripts/stage_in.sh"},
		PostExecChain: []string{"/opt/lsf/scripts/stage_out.sh"},
		Origin: map[string]string{
			"queue": "lost_and_found (queue night removed)", "project": "default",
			"min_tasks": "queue night", "max_tasks": "queue night",
			"res_req": "queue night (deprecated)", "run_limit_sec": "queue night",
			"pre_exec": "queue night (deprecated)", "post_exec": "queue night (deprecated)",
			"gpu": "job",
		},
	}
	return &api.Job{
		JobId: 1301, Spec: spec, Effective: eff, State: api.JobState_PEND,
		SubmitTime: at(10, 22, 11, 5, 0), PendReason: "The queue is inactive",
	}
}

func TestQueuesLongGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteQueuesLong(&b, testConfiguredQueues()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "queues_long", b.String())
}

// The statistics row lines up with the spec's example.
func TestQueuesLongSpecRow(t *testing.T) {
	var b bytes.Buffer
	q := &api.Queue{Name: "normal", Priority: 30, Nice: 20, Open: true, Active: true}
	if err := WriteQueuesLong(&b, []*api.Queue{q}); err != nil {
		t.Fatal(err)
	}
	want := "PARAMETERS/STATISTICS\n" +
		"PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV\n" +
		" 30   20  Open:Active       -    -    -    -     0     0     0     0     0    0\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("bqueues -l statistics:\n%s", b.String())
	}
}

func TestAppsGolden(t *testing.T) {
	for _, tc := range []struct {
		name           string
		noheader, wide bool
	}{{"apps", false, false}, {"apps_wide", false, true}, {"apps_noheader", true, false}} {
		var b bytes.Buffer
		if err := WriteApps(&b, testApps(), tc.noheader, tc.wide); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, tc.name, b.String())
	}
}

func TestAppsLongGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteAppsLong(&b, testApps()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "apps_long", b.String())
}

// bjobs -l of layered jobs ends with EFFECTIVE SETTINGS, every line within
// 79 columns except an origin that is itself too long.
func TestLongOriginGolden(t *testing.T) {
	out := writeLong(t, []*api.Job{jobLayered(), jobLostAndFound()}, testJobsOptions())
	checkGolden(t, "long_origin", out)
	_, settings, ok := strings.Cut(out, " EFFECTIVE SETTINGS:\n")
	if !ok {
		t.Fatal("no EFFECTIVE SETTINGS")
	}
	for _, l := range strings.Split(settings, "\n") {
		if runeLen(l) > 79 && !strings.Contains(l, "lost_and_found (queue") {
			t.Errorf("line longer than 79: %q", l)
		}
	}
	// Jobs without origins print no section.
	if strings.Contains(writeLong(t, allJobs(), testJobsOptions()), "EFFECTIVE SETTINGS") {
		t.Error("EFFECTIVE SETTINGS for jobs without origins")
	}
}

func TestQueuesWideGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteQueuesWide(&b, testQueues(), false); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "queues_wide", b.String())
}
