package lsfout

import (
	"bytes"
	"testing"
	"time"

	"xce/lib/api"
)

// histJob is a job that waited 5 s, ran 60 s, was suspended for 10 s by
// its owner, and was then killed.
func histJob() (*api.Job, []*api.Event) {
	t0 := time.Date(2026, 10, 5, 10, 0, 0, 0, testZone)
	at := func(s int) int64 { return t0.Add(time.Duration(s) * time.Second).UnixNano() }
	spec := &api.JobSpec{Command: "./sim.sh input.dat", JobName: "sim", User: "alice", Home: "/home/alice",
		SubmitHost: "hostA", SubmitCwd: "/home/alice/work", OutputFile: "out.%J", Queue: "normal", Project: "default",
		MinTasks: 4, ResReq: []string{"span[hosts=1]"}}
	j := &api.Job{JobId: 1234, State: api.JobState_EXIT, SubmitTime: at(0), StartTime: at(5), EndTime: at(80),
		ExitStatus: 130, Spec: spec, Effective: spec}
	hosts := []*api.HostSlots{{Host: "hostB", Slots: 4}}
	evs := []*api.Event{
		{Time: at(0), Type: api.EventType_SUBMIT, State: api.JobState_PEND, User: "alice"},
		{Time: at(5), Type: api.EventType_START, State: api.JobState_RUN, Hosts: hosts},
		{Time: at(5), Type: api.EventType_START, State: api.JobState_RUN, Pid: 4242, ExecHome: "/home/alice", ExecCwd: "/home/alice/work"},
		{Time: at(65), Type: api.EventType_SUSPEND, State: api.JobState_USUSP, User: "alice"},
		{Time: at(75), Type: api.EventType_RESUME, State: api.JobState_RUN, User: "alice"},
		{Time: at(78), Type: api.EventType_SIGNAL, State: api.JobState_RUN, User: "alice", Detail: "KILL"},
		{Time: at(80), Type: api.EventType_FINISH, State: api.JobState_EXIT, ExitStatus: 130, CpuTimeMs: 61500,
			TermReason: api.TermReason_TERM_OWNER},
	}
	return j, evs
}

func TestTimeInStates(t *testing.T) {
	j, evs := histJob()
	got := TimeInStates(j, evs, time.Time{})
	want := StateTimes{Pend: 5, Run: 65, Ususp: 10}
	if got != want || got.Total() != 80 {
		t.Errorf("%+v, want %+v", got, want)
	}
	// A job still running counts up to now.
	j.EndTime = 0
	now := time.Unix(0, evs[len(evs)-2].Time).Add(20 * time.Second)
	if got := TimeInStates(j, evs[:len(evs)-1], now); got.Run != 60+23 {
		t.Errorf("running job: %+v", got)
	}
}

func TestHistoryGolden(t *testing.T) {
	j, evs := histJob()
	events := map[string][]*api.Event{"1234": evs}
	var b bytes.Buffer
	if err := WriteHistory(&b, []*api.Job{j}, events, JobsOptions{}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "bhist", b.String())
	b.Reset()
	if err := WriteHistoryLong(&b, []*api.Job{j}, events, JobsOptions{Location: testZone}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "bhist_long", b.String())
	b.Reset()
	if err := WriteHistoryBrief(&b, []*api.Job{j}, events, JobsOptions{Location: testZone}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "bhist_brief", b.String())
	// -w: nothing cut.
	j.Spec.JobName, j.Spec.User = "a_rather_long_job_name", "someoneverylong"
	b.Reset()
	if err := WriteHistory(&b, []*api.Job{j}, events, JobsOptions{Wide: true}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "bhist_wide", b.String())
}
