package controller

import (
	"context"
	"strings"
	"sync"
	"testing"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/config"
	"xce/lib/store"
)

// taskExec is the embedded worker with the task API: it records the
// tasks it is asked to run and the results its blaunches get.
type taskExec struct {
	*fakeExec
	tmu     sync.Mutex
	started []*rpc.TaskStart
	sends   []func(*rpc.TaskEvent)
	results []*rpc.TaskEvent
}

func (x *taskExec) StartTask(ts *rpc.TaskStart, send func(*rpc.TaskEvent)) {
	x.tmu.Lock()
	defer x.tmu.Unlock()
	x.started = append(x.started, ts)
	x.sends = append(x.sends, send)
}
func (x *taskExec) SignalTask(*rpc.TaskSignal) {}
func (x *taskExec) TaskResult(ev *rpc.TaskEvent) {
	x.tmu.Lock()
	defer x.tmu.Unlock()
	x.results = append(x.results, ev)
}

func (x *taskExec) lastResult() *rpc.TaskEvent {
	x.tmu.Lock()
	defer x.tmu.Unlock()
	if len(x.results) == 0 {
		return nil
	}
	return x.results[len(x.results)-1]
}

// The controller relays a blaunch task only to a host of the job's
// allocation while the job runs, with the job's user from its stored
// spec (not the request's), and routes the task's results back to the
// blaunch's host, from the task's host only.
func TestTaskRelay(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conf, err := config.Parse("test.toml", []byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	x := &taskExec{fakeExec: &fakeExec{running: map[key]bool{}, autoExit: -1}}
	c, err := New(Config{Host: "hostA", Slots: 4, NCPUs: 4, Cluster: conf}, st, x)
	if err != nil {
		t.Fatal(err)
	}
	x.c = c
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; st.Close() })

	j, err := c.Submit(alice, &api.JobSpec{Command: "sleep 60", MinTasks: 2})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job running", func() bool { return c.stateOf(j.JobId, 0) == api.JobState_RUN })
	relay := c.LocalTaskRelay()

	relay.RelayTaskStart(&rpc.TaskStart{JobId: j.JobId, TaskId: 1, Host: "hostZ", Argv: []string{"true"}})
	if ev := x.lastResult(); ev == nil || ev.GetExit().GetExitCode() != 255 ||
		!strings.Contains(ev.GetExit().GetError(), "host <hostZ> is not allocated to job <") {
		t.Errorf("a task for a host outside the allocation: %v", ev)
	}

	relay.RelayTaskStart(&rpc.TaskStart{JobId: j.JobId, TaskId: 2, Host: "hostA", Argv: []string{"true"}, Uid: 0, User: "root"})
	x.tmu.Lock()
	if len(x.started) != 1 || x.started[0].Uid != alice.UID || x.started[0].Gid != alice.GID || x.started[0].User == "root" {
		t.Errorf("the task started as %v, want the job's user", x.started)
	}
	send := x.sends[0]
	x.tmu.Unlock()
	before := len(x.results)
	// Another host cannot speak for the task; its own host can.
	c.taskResult("hostB", &rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: &rpc.TaskExit{JobId: j.JobId, TaskId: 2, ExitCode: 9}}})
	send(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: &rpc.TaskExit{JobId: j.JobId, TaskId: 2, ExitCode: 4}}})
	x.tmu.Lock()
	got := x.results[before:]
	x.tmu.Unlock()
	if len(got) != 1 || got[0].GetExit().GetExitCode() != 4 {
		t.Errorf("results routed to the blaunch's host: %v, want the task host's exit 4 only", got)
	}

	x.end(j.JobId, 0, 0, 0)
	waitFor(t, "the job done", func() bool { return c.stateOf(j.JobId, 0) == api.JobState_DONE })
	relay.RelayTaskStart(&rpc.TaskStart{JobId: j.JobId, TaskId: 3, Host: "hostA", Argv: []string{"true"}})
	if ev := x.lastResult(); !strings.Contains(ev.GetExit().GetError(), "is not running") {
		t.Errorf("a task of an ended job: %v", ev)
	}
}
