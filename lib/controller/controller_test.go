package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/store"
	"xce/lib/worker"
)

// fakeExec runs no process: a started job ends when the test says so.
type fakeExec struct {
	mu      sync.Mutex
	c       *Controller
	running map[key]bool
	signals []syscall.Signal
	// autoExit ends every job at once with this status when >= 0.
	autoExit int32
	// starts counts launches; doubles those of a job already running.
	starts, doubles int
	// launched are the jobs as the worker received them.
	launched []*api.Job
}

func (f *fakeExec) Start(j *api.Job) error {
	f.mu.Lock()
	f.starts++
	if f.running[key{j.JobId, j.ArrayIndex}] {
		f.doubles++
	}
	f.running[key{j.JobId, j.ArrayIndex}] = true
	f.launched = append(f.launched, j)
	auto := f.autoExit
	f.mu.Unlock()
	f.c.Report(worker.Report{JobID: j.JobId, Index: j.ArrayIndex, Started: &api.Event{Type: api.EventType_START, Pid: 4242}})
	if auto >= 0 {
		f.end(j.JobId, j.ArrayIndex, auto, 0)
	}
	return nil
}

func (f *fakeExec) end(id int64, idx int32, status int32, sig syscall.Signal) {
	f.mu.Lock()
	delete(f.running, key{id, idx})
	f.mu.Unlock()
	state := api.JobState_DONE
	if status != 0 {
		state = api.JobState_EXIT
	}
	f.c.Report(worker.Report{JobID: id, Index: idx, Finished: &api.Event{
		Type: api.EventType_FINISH, State: state, ExitStatus: status, Signal: int32(sig), Time: time.Now().UnixNano()}})
}

func (f *fakeExec) Reattach(*api.Job)                          {}
func (f *fakeExec) NeverStarted(*api.Job) bool                 { return true }
func (f *fakeExec) SetLimits(int64, int32, *api.JobSpec) error { return nil }
func (f *fakeExec) Usage(int64, int32) *api.ResourceUsage      { return nil }
func (f *fakeExec) SpoolOutput(id int64, idx int32) string {
	return fmt.Sprintf("/spool/%d.%d", id, idx)
}
func (f *fakeExec) Remove(int64, int32) {}
func (f *fakeExec) Signal(id int64, idx int32, sig syscall.Signal) error {
	f.mu.Lock()
	f.signals = append(f.signals, sig)
	f.mu.Unlock()
	return nil
}
func (f *fakeExec) Terminate(id int64, idx int32, _ api.TermReason) error {
	go f.end(id, idx, 130, syscall.SIGINT)
	return nil
}

// testConfig is the cluster of these tests: hostA, a default queue and a
// higher-priority one, and a queue with slot limits.
const testConfig = `
[cluster]
name = "test"
default_queue = "normal"

[hosts.hostA]

[queues.normal]
priority = 30

[queues.high]
priority = 40
exclusive = true

[queues.limited]
priority = 30
max_slots = 3
max_slots_per_user = 2

[queues.fair]
priority = 20
fairshare = { default = 1 }

[projects.small]
max_slots = 1
`

func newTestController(t *testing.T, slots int, autoExit int32) (*Controller, *fakeExec) {
	t.Helper()
	return newTestControllerWith(t, testConfig, slots, autoExit)
}

// newTestControllerWith is newTestController with another configuration.
func newTestControllerWith(t *testing.T, text string, slots int, autoExit int32) (*Controller, *fakeExec) {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conf, err := config.Parse("test.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	fx := &fakeExec{running: map[key]bool{}, autoExit: autoExit}
	c, err := New(Config{
		Host: "hostA", Slots: slots, NCPUs: slots, Cluster: conf,
	}, st, fx)
	if err != nil {
		t.Fatal(err)
	}
	fx.c = c
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; st.Close() })
	return c, fx
}

func (c *Controller) stateOf(id int64, idx int32) api.JobState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.jobs[key{id, idx}]; r != nil {
		return r.job.State
	}
	return api.JobState_STATE_UNSPECIFIED
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

var alice = Caller{UID: 1000, GID: 1000}

// Concurrent submissions, queries and kills (run with -race).
func TestConcurrentUse(t *testing.T) {
	c, _ := newTestController(t, 4, 0)
	var wg sync.WaitGroup
	ids := make(chan int64, 400)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				r, err := c.Submit(alice, &api.JobSpec{Command: "true", Env: []string{"A=1"}})
				if err != nil {
					t.Error(err)
					return
				}
				ids <- r.JobId
				c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_ALL})
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	waitFor(t, "all jobs done", func() bool {
		q := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_UNFINISHED})
		return len(q.Jobs) == 0
	})
	q := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_FINISHED})
	if len(q.Jobs) != 400 {
		t.Errorf("%d finished jobs, want 400", len(q.Jobs))
	}
}

// Placement: slots, -n, queue priority, exclusive jobs and the reasons
// left on pending jobs.
func TestPlacement(t *testing.T) {
	c, fx := newTestController(t, 4, -1)
	a, _ := c.Submit(alice, &api.JobSpec{Command: "a", MinTasks: 3})
	waitFor(t, "a running", func() bool { return c.stateOf(a.JobId, 0) == api.JobState_RUN })
	// b needs the whole host, so it cannot slip in while a and low end one
	// after the other.
	b, _ := c.Submit(alice, &api.JobSpec{Command: "b", MinTasks: 4})
	low, _ := c.Submit(alice, &api.JobSpec{Command: "low"})
	waitFor(t, "low running", func() bool { return c.stateOf(low.JobId, 0) == api.JobState_RUN })
	if s := c.stateOf(b.JobId, 0); s != api.JobState_PEND {
		t.Fatalf("b is %v, want PEND", s)
	}
	// The host is full: LSF's PEND_HOST_JOB_LIMIT. The reason is the last
	// cycle's, and the cycle that started low saw one slot free.
	waitFor(t, "the full host's reason, Job slot limit reached", func() bool {
		q := c.Query(alice, &api.QueryRequest{Refs: []*api.JobRef{{JobId: b.JobId, ArrayIndex: -1}}, Scope: api.QueryRequest_ALL})
		return strings.HasPrefix(q.PendReasons[0], "Job slot limit reached")
	})
	x, _ := c.Submit(alice, &api.JobSpec{Command: "x", Exclusive: true, Queue: "high"})
	fx.end(a.JobId, 0, 0, 0)
	fx.end(low.JobId, 0, 0, 0)
	// The high-priority exclusive job goes first and alone.
	waitFor(t, "x running", func() bool { return c.stateOf(x.JobId, 0) == api.JobState_RUN })
	if s := c.stateOf(b.JobId, 0); s != api.JobState_PEND {
		t.Errorf("b started beside an exclusive job: %v", s)
	}
	fx.end(x.JobId, 0, 0, 0)
	waitFor(t, "b running", func() bool { return c.stateOf(b.JobId, 0) == api.JobState_RUN })
}

// Arrays with a running limit, and dependencies.
func TestArrayAndDependency(t *testing.T) {
	c, fx := newTestController(t, 8, -1)
	arr, err := c.Submit(alice, &api.JobSpec{Command: "e", JobName: "arr", ArraySpec: "[1-5]", ArrayLimit: 2})
	if err != nil || arr.ArraySize != 5 {
		t.Fatalf("%v %v", arr, err)
	}
	dep, err := c.Submit(alice, &api.JobSpec{Command: "d", Dependency: fmt.Sprintf("done(%d) && ended(\"arr\")", arr.JobId)})
	if err != nil {
		t.Fatal(err)
	}
	never, _ := c.Submit(alice, &api.JobSpec{Command: "n", Dependency: fmt.Sprintf("exit(%d)", arr.JobId)})
	// One query reads every element's state at one instant: reading them
	// one by one could see an element end and the next start in between.
	running := func() int {
		n := 0
		for _, j := range c.Query(alice, &api.QueryRequest{Refs: []*api.JobRef{{JobId: arr.JobId, ArrayIndex: -1}}, Scope: api.QueryRequest_ALL}).Jobs {
			if j.State == api.JobState_RUN {
				n++
			}
		}
		return n
	}
	waitFor(t, "two elements running", func() bool { return running() == 2 })
	for i := int32(1); i <= 5; i++ {
		waitFor(t, "element running", func() bool { return c.stateOf(arr.JobId, i) == api.JobState_RUN })
		if n := running(); n > 2 {
			t.Fatalf("%d elements running, limit 2", n)
		}
		if s := c.stateOf(dep.JobId, 0); s != api.JobState_PEND {
			t.Fatalf("dependent job %v before the array ended", s)
		}
		fx.end(arr.JobId, i, 0, 0)
	}
	waitFor(t, "dependent job running", func() bool {
		if c.stateOf(dep.JobId, 0) == api.JobState_RUN {
			return true
		}
		q := c.Query(alice, &api.QueryRequest{Refs: []*api.JobRef{{JobId: dep.JobId, ArrayIndex: -1}}})
		all := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_ALL})
		for _, j := range all.Jobs {
			t.Logf("job %d[%d] %v", j.JobId, j.ArrayIndex, j.State)
		}
		t.Logf("dependent job: %v %q", q.Jobs[0].State, q.PendReasons[0])
		return false
	})
	q := c.Query(alice, &api.QueryRequest{Refs: []*api.JobRef{{JobId: never.JobId, ArrayIndex: -1}}})
	if q.PendReasons[0] != reasonDepNever {
		t.Errorf("never-satisfied dependency: %q", q.PendReasons[0])
	}
	if _, err := c.Submit(alice, &api.JobSpec{Command: "x", Dependency: "done(99999)"}); err == nil {
		t.Error("a dependency on an unknown job was accepted")
	}
	if _, err := c.Submit(alice, &api.JobSpec{Command: "x", Dependency: "done(1"}); err == nil {
		t.Error("a bad dependency was accepted")
	}
}

// Kill, stop and resume, and another user's job.
func TestSignals(t *testing.T) {
	c, fx := newTestController(t, 2, -1)
	run, _ := c.Submit(alice, &api.JobSpec{Command: "r"})
	pend, _ := c.Submit(alice, &api.JobSpec{Command: "p", MinTasks: 2})
	waitFor(t, "running", func() bool { return c.stateOf(run.JobId, 0) == api.JobState_RUN })
	bob := Caller{UID: 1001}
	rep := c.Signal(bob, &api.SignalRequest{Refs: []*api.JobRef{{JobId: run.JobId, ArrayIndex: -1}}})
	if rep.Results[0].Error != errPermission {
		t.Errorf("bob killed alice's job: %v", rep.Results)
	}
	rep = c.Signal(alice, &api.SignalRequest{Action: api.SignalRequest_STOP, Refs: []*api.JobRef{{JobId: run.JobId, ArrayIndex: -1}}})
	if rep.Results[0].Error != "" || c.stateOf(run.JobId, 0) != api.JobState_USUSP {
		t.Errorf("stop: %v, state %v", rep.Results, c.stateOf(run.JobId, 0))
	}
	rep = c.Signal(alice, &api.SignalRequest{Action: api.SignalRequest_RESUME, Refs: []*api.JobRef{{JobId: run.JobId, ArrayIndex: -1}}})
	if rep.Results[0].Error != "" || c.stateOf(run.JobId, 0) != api.JobState_RUN {
		t.Errorf("resume: %v", rep.Results)
	}
	fx.mu.Lock()
	sigs := append([]syscall.Signal{}, fx.signals...)
	fx.mu.Unlock()
	if len(sigs) != 2 || sigs[0] != syscall.SIGSTOP || sigs[1] != syscall.SIGCONT {
		t.Errorf("signals sent %v", sigs)
	}
	rep = c.Signal(alice, &api.SignalRequest{All: true})
	if len(rep.Results) != 2 {
		t.Fatalf("bkill 0 hit %d jobs, want 2", len(rep.Results))
	}
	waitFor(t, "killed", func() bool { return c.stateOf(run.JobId, 0) == api.JobState_EXIT })
	if s := c.stateOf(pend.JobId, 0); s != api.JobState_EXIT {
		t.Errorf("killed pending job is %v", s)
	}
	c.mu.Lock()
	r := c.jobs[key{run.JobId, 0}].job
	c.mu.Unlock()
	if r.TermReason != api.TermReason_TERM_OWNER || !r.TermReasonSet || r.ExitStatus != 130 {
		t.Errorf("killed job: reason %v exit %d", r.TermReason, r.ExitStatus)
	}
	rep = c.Signal(alice, &api.SignalRequest{Refs: []*api.JobRef{{JobId: run.JobId, ArrayIndex: -1}}})
	if rep.Results[0].Error != errFinished {
		t.Errorf("kill of a finished job: %v", rep.Results)
	}
}

func TestParseArray(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []int32
		err  string
	}{
		{"[1-5]", []int32{1, 2, 3, 4, 5}, ""},
		{"[1-10:3]", []int32{1, 4, 7, 10}, ""},
		{"[1,3,7-9]", []int32{1, 3, 7, 8, 9}, ""},
		{"[3,1,3]", []int32{1, 3}, ""},
		{"[0-3]", nil, "Job array index error"},
		{"[5-1]", nil, "Job array index error"},
		{"[1-2000]", nil, "Job array index too large"},
		{"[a]", nil, "Job array index error"},
		{"[]", nil, "Job array index error"},
	} {
		got, err := parseArray(tc.spec, 1000)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: err %v, want %s", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v %v, want %v", tc.spec, got, err, tc.want)
		}
	}
}

// BenchmarkQueryAll is bjobs -a -u all over 100,000 held jobs, without
// the socket: the controller's share of that command.
func BenchmarkQueryAll(b *testing.B) {
	t := &testing.T{}
	c, _ := newTestController(t, 4, -1)
	env := []string{"HOME=/root", "PATH=/usr/bin:/bin", "TERM=xterm"}
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100000/16; i++ {
				if _, err := c.Submit(alice, &api.JobSpec{Command: "true", Hold: true, SubmitCwd: "/tmp", Env: env}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all"})
		if _, err := proto.Marshal(q); err != nil {
			b.Fatal(err)
		}
	}
}

// What the controller sends decodes as the QueryReply clients read.
func TestQueryReplyWireCompatible(t *testing.T) {
	c, _ := newTestController(t, 4, -1)
	a, _ := c.Submit(alice, &api.JobSpec{Command: "sleep 1", Hold: true, JobName: "wire", ArraySpec: "[1-2]"})
	enc := c.Query(alice, &api.QueryRequest{Refs: []*api.JobRef{{JobId: a.JobId, ArrayIndex: -1}}, Submitted: true})
	b, err := proto.Marshal(enc)
	if err != nil {
		t.Fatal(err)
	}
	var got api.QueryReply
	if err := proto.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Jobs) != 2 || got.Effective[a.JobId].GetJobName() != "wire" || got.Effective[a.JobId].GetQueue() != "normal" ||
		got.Specs[a.JobId].GetQueue() != "" || got.Specs[a.JobId].GetCommand() != "sleep 1" || len(got.PendReasons) != 2 {
		t.Errorf("decoded reply: %v", &got)
	}
}

// Configured limits hold jobs with the configuration's reason: a queue's
// slots and its per-user slots, a project's slots.
func TestConfiguredLimits(t *testing.T) {
	c, fx := newTestController(t, 8, -1)
	bob := Caller{UID: 0}
	var ids []int64
	for i := 0; i < 3; i++ {
		r, err := c.Submit(alice, &api.JobSpec{Command: "x", Queue: "limited"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.JobId)
	}
	other, _ := c.Submit(bob, &api.JobSpec{Command: "y", Queue: "limited"})
	more, _ := c.Submit(bob, &api.JobSpec{Command: "z", Queue: "limited"})
	waitFor(t, "3 running", func() bool {
		n := 0
		for _, id := range append(ids, other.JobId, more.JobId) {
			if c.stateOf(id, 0) == api.JobState_RUN {
				n++
			}
		}
		return n == 3
	})
	aliceRunning := 0
	for _, id := range ids {
		if c.stateOf(id, 0) == api.JobState_RUN {
			aliceRunning++
		}
	}
	if aliceRunning != 2 || c.stateOf(other.JobId, 0) != api.JobState_RUN {
		t.Errorf("alice runs %d jobs (limit 2 per user); the other user's first job is %v", aliceRunning, c.stateOf(other.JobId, 0))
	}
	waitFor(t, "the queue's limit as the reason", func() bool {
		q := c.Query(alice, &api.QueryRequest{Refs: []*api.JobRef{{JobId: more.JobId, ArrayIndex: -1}}})
		return q.PendReasons[0] == "The queue has reached its job slot limit"
	})
	// With the queue's limit raised by the other user's end, the per-user
	// limit is what holds alice's third job.
	fx.end(other.JobId, 0, 0, 0)
	waitFor(t, "the other user's second job running", func() bool { return c.stateOf(more.JobId, 0) == api.JobState_RUN })
	fx.end(more.JobId, 0, 0, 0)
	waitFor(t, "a cycle", func() bool {
		q := c.Query(alice, &api.QueryRequest{Refs: []*api.JobRef{{JobId: ids[2], ArrayIndex: -1}}})
		return q.PendReasons[0] == "User has reached the per-user job slot limit of the queue"
	})
	p1, _ := c.Submit(alice, &api.JobSpec{Command: "p", Project: "small"})
	p2, _ := c.Submit(alice, &api.JobSpec{Command: "p", Project: "small"})
	waitFor(t, "p1 running", func() bool { return c.stateOf(p1.JobId, 0) == api.JobState_RUN })
	time.Sleep(20 * time.Millisecond)
	if s := c.stateOf(p2.JobId, 0); s != api.JobState_PEND {
		t.Errorf("second job of project small is %v", s)
	}
	fx.end(p1.JobId, 0, 0, 0)
	waitFor(t, "p2 running", func() bool { return c.stateOf(p2.JobId, 0) == api.JobState_RUN })
	if _, err := c.Submit(alice, &api.JobSpec{Command: "p", Project: "small", MinTasks: 2}); err == nil ||
		!strings.Contains(err.Error(), "project small allows at most 1") {
		t.Errorf("a job over the project quota: %v", err)
	}
}

// btop and bbot reorder pending jobs; the order holds for dispatch.
func TestMove(t *testing.T) {
	c, _ := newTestController(t, 1, -1)
	run, _ := c.Submit(alice, &api.JobSpec{Command: "run"})
	waitFor(t, "running", func() bool { return c.stateOf(run.JobId, 0) == api.JobState_RUN })
	var ids []int64
	for _, n := range []string{"a", "b", "c", "d"} {
		r, _ := c.Submit(alice, &api.JobSpec{Command: n})
		ids = append(ids, r.JobId)
	}
	order := func() string {
		q := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_PENDING})
		var names []string
		for _, j := range q.Jobs {
			for i, id := range ids {
				if j.JobId == id {
					names = append(names, string(rune('a'+i)))
				}
			}
		}
		return strings.Join(names, "")
	}
	ref := func(i int) []*api.JobRef { return []*api.JobRef{{JobId: ids[i], ArrayIndex: -1}} }
	steps := []struct {
		action api.ControlRequest_Action
		job    int
		pos    int32
		want   string
	}{
		{api.ControlRequest_TOP, 3, 1, "dabc"},
		{api.ControlRequest_BOTTOM, 0, 1, "dbca"},
		{api.ControlRequest_TOP, 2, 2, "dcba"},
		{api.ControlRequest_BOTTOM, 3, 2, "cbda"},
		{api.ControlRequest_TOP, 0, 9, "cbda"}, // past the end: as far as it goes
	}
	for _, s := range steps {
		rep := c.Control(alice, &api.ControlRequest{Action: s.action, Refs: ref(s.job), Position: s.pos})
		if rep.Results[0].Error != "" {
			t.Fatalf("%v: %s", s, rep.Results[0].Error)
		}
		if got := order(); got != s.want {
			t.Errorf("after %v %c %d: %s, want %s", s.action, 'a'+s.job, s.pos, got, s.want)
		}
	}
	if rep := c.Control(alice, &api.ControlRequest{Action: api.ControlRequest_TOP, Refs: ref(0), Position: 9}); rep.Results[0].Warning == "" {
		t.Error("no warning for a position past the end")
	}
	if rep := c.Control(Caller{UID: 1001}, &api.ControlRequest{Action: api.ControlRequest_TOP, Refs: ref(1)}); rep.Results[0].Error != errPermission {
		t.Errorf("another user moved alice's job: %v", rep.Results)
	}
}

// In a fairshare queue the user with less past use goes first, whatever
// the submission order.
func TestFairshareOrder(t *testing.T) {
	c, fx := newTestController(t, 1, -1)
	bob := Caller{UID: 0}
	var as []int64
	for i := 0; i < 3; i++ {
		r, err := c.Submit(alice, &api.JobSpec{Command: "a", Queue: "fair"})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, r.JobId)
	}
	waitFor(t, "alice's first job running", func() bool { return c.stateOf(as[0], 0) == api.JobState_RUN })
	b, _ := c.Submit(bob, &api.JobSpec{Command: "b", Queue: "fair"})
	time.Sleep(20 * time.Millisecond)
	fx.end(as[0], 0, 0, 0)
	waitFor(t, "a job running", func() bool {
		return c.stateOf(b.JobId, 0) == api.JobState_RUN || c.stateOf(as[1], 0) == api.JobState_RUN
	})
	if c.stateOf(b.JobId, 0) != api.JobState_RUN {
		t.Errorf("alice's second job went before the other user's first")
	}
	// The queue carries each user's dynamic priority (bqueues -r, xcetop).
	qs, err := c.Queues([]string{"fair"})
	if err != nil {
		t.Fatal(err)
	}
	prio := qs[0].UserPriority
	aliceName, _ := lookupUser(alice.UID)
	bobName, _ := lookupUser(bob.UID)
	if len(prio) != 2 || prio[aliceName] <= 0 || prio[bobName] <= 0 {
		t.Errorf("user priorities %v", prio)
	}
}

func TestParseDependency(t *testing.T) {
	for _, ok := range []string{"done(1)", "ended(1) && !exit(2, >= 3)", `started("my job")`, "numdone(7, *)",
		"numexit(7, > 2) || numrun(7, == 0)", "post_done(3)", "post_err(4)", "12", `(done(1) || exit("a*"))`} {
		if _, err := parseDependency(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"done(1", "numdone(7)", "done(1) &&", "exit(1, >)", "nosuch(1)x", "", `""`, `done("")`} {
		if _, err := parseDependency(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// The array counts and post-processing conditions.
func TestCountDependencies(t *testing.T) {
	c, fx := newTestController(t, 8, -1)
	arr, _ := c.Submit(alice, &api.JobSpec{Command: "e", ArraySpec: "[1-3]"})
	waitFor(t, "elements running", func() bool { return c.stateOf(arr.JobId, 3) == api.JobState_RUN })
	id := fmt.Sprint(arr.JobId)
	check := func(expr string, want api.DependencyReply_Status) {
		t.Helper()
		got, err := c.Dependency(alice, expr)
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", expr, got, err, want)
		}
	}
	check("numrun("+id+", == 3)", api.DependencyReply_MET)
	check("numdone("+id+", *)", api.DependencyReply_WAITING)
	fx.end(arr.JobId, 1, 0, 0)
	fx.end(arr.JobId, 2, 5, 0)
	waitFor(t, "two ended", func() bool { return c.stateOf(arr.JobId, 2) == api.JobState_EXIT })
	check("numdone("+id+", >= 1)", api.DependencyReply_MET)
	check("numdone("+id+", *)", api.DependencyReply_NEVER) // one exited
	check("numexit("+id+", == 1)", api.DependencyReply_MET)
	check("numended("+id+", *)", api.DependencyReply_WAITING)
	check("post_done("+id+"[1])", api.DependencyReply_MET)
	check("post_done("+id+"[3])", api.DependencyReply_WAITING)
}

// The controller keeps the host's load history for xcetop.
func TestLoadHistory(t *testing.T) {
	c, _ := newTestController(t, 2, -1)
	c.sampleLoad()
	c.sampleLoad()
	hs, err := c.Hosts(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := hs[0]
	if len(h.R1MHistory) < 2 || len(h.UtHistory) != len(h.R1MHistory) || h.LoadIntervalSec != 30 {
		t.Errorf("history %v %v every %d s", h.R1MHistory, h.UtHistory, h.LoadIntervalSec)
	}
	for i := 0; i < loadSamples+5; i++ {
		c.sampleLoad()
	}
	if hs, _ := c.Hosts(nil); len(hs[0].R1MHistory) != loadSamples {
		t.Errorf("%d samples kept, want %d", len(hs[0].R1MHistory), loadSamples)
	}
}

// bkill -r ends a running job at once, as TERM_FORCE_OWNER, with SIGKILL.
func TestForceKill(t *testing.T) {
	c, fx := newTestController(t, 2, -1)
	r, _ := c.Submit(alice, &api.JobSpec{Command: "r"})
	waitFor(t, "running", func() bool { return c.stateOf(r.JobId, 0) == api.JobState_RUN })
	rep := c.Signal(alice, &api.SignalRequest{Refs: []*api.JobRef{{JobId: r.JobId, ArrayIndex: -1}}, Force: true})
	if rep.Results[0].Error != "" || c.stateOf(r.JobId, 0) != api.JobState_EXIT {
		t.Fatalf("force kill: %v, state %v", rep.Results, c.stateOf(r.JobId, 0))
	}
	c.mu.Lock()
	j := c.jobs[key{r.JobId, 0}].job
	c.mu.Unlock()
	if j.TermReason != api.TermReason_TERM_FORCE_OWNER || j.ExitStatus != 137 {
		t.Errorf("reason %v exit %d", j.TermReason, j.ExitStatus)
	}
	fx.mu.Lock()
	sigs := append([]syscall.Signal{}, fx.signals...)
	fx.mu.Unlock()
	if len(sigs) != 1 || sigs[0] != syscall.SIGKILL {
		t.Errorf("signals %v, want SIGKILL", sigs)
	}
	// The process's own end, reported later, changes nothing.
	fx.end(r.JobId, 0, 0, 0)
	time.Sleep(20 * time.Millisecond)
	if c.stateOf(r.JobId, 0) != api.JobState_EXIT {
		t.Error("the late report changed the job")
	}
}
