package agent

import (
	"xce/lib/testenv"

	"context"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/hostload"
)

// wait bounds every wait for the agent: generous, the machine is shared.
const wait = 30 * time.Second

// fakeController is a real gRPC Cluster server on 127.0.0.1 that hands
// each worker connection to the test.
type fakeController struct {
	grpcapi.UnimplementedClusterServer
	addr    string
	conns   chan *conn
	mu      sync.Mutex
	refuse  error // when set, every connection ends with it (under mu once the agent runs)
	welcome *rpc.Welcome
}

// conn is one worker stream as the controller sees it.
type conn struct {
	reg    *rpc.WorkerRegister
	stream grpc.BidiStreamingServer[rpc.WorkerMessage, rpc.ControllerMessage]
	in     chan *rpc.WorkerMessage // what the worker sent after registering
	drop   chan struct{}           // closed: the controller ends the stream
}

func newFakeController(t *testing.T) *fakeController {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeController{
		addr:    ln.Addr().String(),
		conns:   make(chan *conn, 10),
		welcome: &rpc.Welcome{ClusterName: "c1", Host: "hostA", KillGraceMs: 1000, TerminateIntervalMs: 200},
	}
	srv := grpc.NewServer()
	grpcapi.RegisterClusterServer(srv, f)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return f
}

func (f *fakeController) Connect(s grpc.BidiStreamingServer[rpc.WorkerMessage, rpc.ControllerMessage]) error {
	f.mu.Lock()
	refuse := f.refuse
	f.mu.Unlock()
	if refuse != nil {
		return refuse
	}
	m, err := s.Recv()
	if err != nil {
		return err
	}
	c := &conn{reg: m.GetRegister(), stream: s, in: make(chan *rpc.WorkerMessage, 1000), drop: make(chan struct{})}
	if err := s.Send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Welcome{Welcome: f.welcome}}); err != nil {
		return err
	}
	go func() {
		for {
			m, err := s.Recv()
			if err != nil {
				return
			}
			select {
			case c.in <- m:
			default: // the test does not read this connection any more
			}
		}
	}()
	f.conns <- c
	select {
	case <-c.drop:
		return status.Error(codes.Unavailable, "the controller goes down")
	case <-s.Context().Done():
		return nil
	}
}

// next is the next connection of the worker.
func (f *fakeController) next(t *testing.T) *conn {
	t.Helper()
	select {
	case c := <-f.conns:
		if c.reg == nil {
			t.Fatal("the worker's first message is no register")
		}
		return c
	case <-time.After(wait):
		t.Fatal("the worker did not connect")
	}
	return nil
}

func (c *conn) send(t *testing.T, m *rpc.ControllerMessage) {
	t.Helper()
	if err := c.stream.Send(m); err != nil {
		t.Fatalf("send to the worker: %v", err)
	}
}

// await returns the next message of the worker that ok accepts, skipping
// the others.
func (c *conn) await(t *testing.T, what string, ok func(*rpc.WorkerMessage) bool) *rpc.WorkerMessage {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case m := <-c.in:
			if ok(m) {
				return m
			}
		case <-deadline:
			t.Fatalf("no %s from the worker", what)
		}
	}
}

// report returns the next job report.
func (c *conn) report(t *testing.T) *rpc.WorkerReport {
	t.Helper()
	return c.await(t, "report", func(m *rpc.WorkerMessage) bool { return m.GetReport() != nil }).GetReport()
}

// runAgent runs an agent against f until the test ends.
func runAgent(t *testing.T, f *fakeController, runDir string) *result {
	t.Helper()
	return runAgentAt(t, f.addr, runDir)
}

// runAgentAt runs an agent against the controllers of list.
func runAgentAt(t *testing.T, list, runDir string) *result {
	t.Helper()
	shep := testenv.BuildShepherd(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := &result{done: make(chan struct{}), stop: cancel}
	go func() {
		defer close(res.done)
		res.err = Run(ctx, Config{
			Controller:   list,
			DialOptions:  []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())},
			Host:         "hostA",
			Slots:        3,
			RunDir:       runDir,
			Shepherd:     []string{shep},
			Version:      "test",
			LoadInterval: 100 * time.Millisecond,
			MinBackoff:   10 * time.Millisecond,
			MaxBackoff:   100 * time.Millisecond,
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-res.done:
		case <-time.After(wait):
			t.Error("Run did not return after its context ended")
		}
	})
	return res
}

// result is what Run returned, once done is closed.
type result struct {
	done chan struct{}
	err  error
	stop func() // ends Run
}

type jobs struct {
	dir      string
	uid, gid int
}

func newJobs(t *testing.T, runDir string) jobs {
	dir := t.TempDir()
	uid, gid := testenv.JobUser(t, runDir, dir)
	return jobs{dir: dir, uid: uid, gid: gid}
}

func (js jobs) job(id int64, cmd string) *api.Job {
	return &api.Job{
		JobId: id, State: api.JobState_RUN, SubmitTime: time.Now().UnixNano(),
		ExecHosts: []*api.HostSlots{{Host: "hostA", Slots: 1}},
		Spec: &api.JobSpec{Command: cmd, SubmitCwd: js.dir, Env: []string{"PATH=/usr/bin:/bin"},
			Uid: uint32(js.uid), Gid: uint32(js.gid)},
		Effective: &api.JobSpec{Uid: uint32(js.uid), Gid: uint32(js.gid)},
	}
}

func start(j *api.Job) *rpc.ControllerMessage {
	return &rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Start{Start: j}}
}

func ack(seq uint64) *rpc.ControllerMessage {
	return &rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Ack{Ack: seq}}
}

func adopt(j *api.Job) *rpc.ControllerMessage {
	return &rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Adopt{Adopt: j}}
}

// The worker registers its host, runs a job it is sent to its real end,
// and keeps the reports until they are acknowledged: a controller that
// went down before acknowledging gets them again, in order, from the next
// connection; acknowledged ones are not sent again.
func TestRegisterRunReports(t *testing.T) {
	f := newFakeController(t)
	runDir := filepath.Join(t.TempDir(), "jobs")
	runAgent(t, f, runDir)
	c := f.next(t)

	reg := c.reg
	h := reg.GetHost()
	topo := hostload.CPUTopology()
	switch {
	case h.GetName() != "hostA", h.GetMaxSlots() != 3, h.GetNcpus() != int32(runtime.NumCPU()), h.GetCpuFactor() != 1,
		h.GetType() != hostload.DetectedType(), h.GetModel() != hostload.DetectedModel(), h.GetMaxmemKb() <= 0,
		h.GetNprocs() != topo[0], h.GetNcores() != topo[1], h.GetNthreads() != topo[2]:
		t.Errorf("registered host: %v", h)
	case !h.GetLoadMeasured() || h.GetMemKb() <= 0 || h.GetMaxtmpKb() <= 0:
		t.Errorf("registered host has no first load sample: %v", h)
	case reg.GetRunDir() != runDir || reg.GetVersion() != "test" || len(reg.GetRunning()) != 0:
		t.Errorf("register: run dir %q, version %q, running %v", reg.GetRunDir(), reg.GetVersion(), reg.GetRunning())
	}

	js := newJobs(t, runDir)
	c.send(t, start(js.job(1, "exit 3")))
	started, finished := c.report(t), c.report(t)
	if ev := started.GetStarted(); started.GetJobId() != 1 || ev == nil || ev.GetPid() <= 1 || started.GetShepherdPid() <= 1 {
		t.Fatalf("first report is no start of job 1 with its pids: %v", started)
	}
	if ev := finished.GetFinished(); ev == nil || ev.GetExitStatus() != 3 || ev.GetState() != api.JobState_EXIT {
		t.Fatalf("second report is no end with exit 3: %v", finished)
	}
	if finished.GetSeq() <= started.GetSeq() {
		t.Errorf("seqs %d then %d", started.GetSeq(), finished.GetSeq())
	}

	// Down before the acknowledgement: both again, in order.
	close(c.drop)
	c = f.next(t)
	if r := c.report(t); r.GetSeq() != started.GetSeq() || r.GetStarted() == nil {
		t.Fatalf("first report after the reconnect: %v, want seq %d (started)", r, started.GetSeq())
	}
	if r := c.report(t); r.GetSeq() != finished.GetSeq() || r.GetFinished().GetExitStatus() != 3 {
		t.Fatalf("second report after the reconnect: %v, want seq %d (finished)", r, finished.GetSeq())
	}

	// A job whose end is queued is not adopted again (its end would come
	// twice); one the worker never saw was never started.
	c.send(t, adopt(js.job(1, "exit 3")))
	c.send(t, adopt(js.job(7, "true")))
	if r := c.report(t); r.GetJobId() != 7 || !r.GetNeverStarted() {
		t.Fatalf("adopt of an unknown job: %v, want never_started of job 7", r)
	}
	// Acknowledged up to job 1's end, then down: the next connection
	// starts with job 7's report.
	c.send(t, ack(finished.GetSeq()))
	close(c.drop)
	c = f.next(t)
	c.send(t, adopt(js.job(8, "true")))
	r := c.report(t)
	if r.GetJobId() == 1 {
		t.Fatalf("an acknowledged report came again: %v", r)
	}
	if r.GetJobId() != 7 || !r.GetNeverStarted() {
		t.Fatalf("first report after the second reconnect: %v, want job 7's unacknowledged never_started", r)
	}
	if r := c.report(t); r.GetJobId() != 8 || !r.GetNeverStarted() {
		t.Fatalf("then %v, want job 8's never_started", r)
	}
}

// Peek reads a running job's output; bkill's sequence and a SIGKILL end
// sleeping jobs; the load comes every LoadInterval.
func TestPeekSignalLoad(t *testing.T) {
	f := newFakeController(t)
	runDir := filepath.Join(t.TempDir(), "jobs")
	runAgent(t, f, runDir)
	c := f.next(t)
	js := newJobs(t, runDir)

	loads := 0
	c.await(t, "3 loads", func(m *rpc.WorkerMessage) bool {
		if h := m.GetLoad(); h != nil && h.GetName() == "hostA" && h.GetLoadMeasured() {
			loads++
		}
		return loads == 3
	})

	j := js.job(1, "echo hi; sleep 30")
	j.SpoolOutput = filepath.Join(runDir, "1.0", "job", "output") // as the controller sets it
	c.send(t, start(j))
	if r := c.report(t); r.GetStarted() == nil {
		t.Fatalf("no start: %v", r)
	}
	var reply *rpc.PeekReply
	for id := uint64(1); ; id++ {
		c.send(t, &rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Peek{Peek: &rpc.PeekRequest{Id: id, JobId: 1, MaxBytes: 100}}})
		reply = c.await(t, "peek reply", func(m *rpc.WorkerMessage) bool { return m.GetPeek() != nil }).GetPeek()
		if reply.GetId() != id {
			t.Fatalf("peek reply %d to request %d", reply.GetId(), id)
		}
		if string(reply.GetData()) == "hi\n" || id > 200 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if string(reply.GetData()) != "hi\n" || reply.GetSize() != 3 || reply.GetPath() != j.SpoolOutput || reply.GetError() != "" {
		t.Fatalf("peek: %v", reply)
	}

	c.send(t, &rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Signal{Signal: &rpc.WorkerSignal{JobId: 1, Terminate: true}}})
	r := c.report(t)
	if ev := r.GetFinished(); ev == nil || (ev.GetExitStatus() != 130 && ev.GetExitStatus() != 143 && ev.GetExitStatus() != 137) {
		t.Fatalf("terminated job: %v", r)
	}

	c.send(t, start(js.job(2, "sleep 30")))
	if r := c.report(t); r.GetStarted() == nil {
		t.Fatalf("no start: %v", r)
	}
	c.send(t, &rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Signal{Signal: &rpc.WorkerSignal{JobId: 2, Signal: int32(syscall.SIGKILL)}}})
	if r := c.report(t); r.GetFinished().GetExitStatus() != 137 {
		t.Fatalf("killed job: %v", r)
	}
}

// A controller that comes back hears from the worker which jobs it still
// runs; a worker that comes back is told of its jobs (adopt) and reports
// their real ends.
func TestRestarts(t *testing.T) {
	f := newFakeController(t)
	runDir := filepath.Join(t.TempDir(), "jobs")
	first := runAgent(t, f, runDir)
	c := f.next(t)
	js := newJobs(t, runDir)
	j := js.job(1, "sleep 2; exit 5")
	c.send(t, start(j))
	started := c.report(t)
	if started.GetStarted() == nil {
		t.Fatalf("no start: %v", started)
	}
	close(c.drop)
	c = f.next(t)
	if r := c.reg.GetRunning(); len(r) != 1 || r[0].GetJobId() != 1 {
		t.Errorf("register after the controller's restart: running %v, want job 1", r)
	}

	first.stop()
	<-first.done
	runAgent(t, f, runDir)
	c = f.next(t)
	if r := c.reg.GetRunning(); len(r) != 0 {
		t.Errorf("a new worker's register says it runs %v", r)
	}
	j.Pid, j.ShepherdPid, j.StartTime = started.GetStarted().GetPid(), started.GetShepherdPid(), started.GetStarted().GetTime()
	c.send(t, adopt(j))
	if r := c.report(t); r.GetJobId() != 1 || r.GetFinished().GetExitStatus() != 5 {
		t.Fatalf("adopted job's end: %v, want exit 5", r)
	}
}

// A worker the controller refuses stops with the reason.
func TestRefused(t *testing.T) {
	f := newFakeController(t)
	f.refuse = status.Error(codes.Unauthenticated, "wrong cluster token")
	res := runAgent(t, f, filepath.Join(t.TempDir(), "jobs"))
	select {
	case <-res.done:
		if err := res.err; err == nil || !strings.Contains(err.Error(), "wrong cluster token") {
			t.Errorf("Run = %v, want the refusal", err)
		}
	case <-time.After(wait):
		t.Fatal("a refused worker keeps trying")
	}
}
