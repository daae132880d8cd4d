package controller

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/config"
	"xce/lib/interactive"
	"xce/lib/store"
	"xce/lib/worker"
)

// termExec is the embedded worker with the relay API: it records what
// the controller sends down.
type termExec struct {
	*fakeExec
	tmu  sync.Mutex
	down []*rpc.TermData
	acks int64
}

func (x *termExec) TermDown(td *rpc.TermData) {
	x.tmu.Lock()
	defer x.tmu.Unlock()
	x.down = append(x.down, td)
}

func (x *termExec) TermAcked(a *rpc.TermAck) {
	x.tmu.Lock()
	defer x.tmu.Unlock()
	x.acks += a.Bytes
}

// sentDown is the payload bytes sent down and whether a hang-up was.
func (x *termExec) sentDown() (n int64, hungUp bool) {
	x.tmu.Lock()
	defer x.tmu.Unlock()
	for _, td := range x.down {
		n += int64(len(td.Payload))
		hungUp = hungUp || td.Close
	}
	return n, hungUp
}

// fakeAttach is bsub's side of an Attach call.
type fakeAttach struct {
	ctx    context.Context
	in     chan *rpc.AttachRequest
	mu     sync.Mutex
	events []*rpc.AttachEvent
}

func (f *fakeAttach) Send(ev *rpc.AttachEvent) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, ev)
	return nil
}

func (f *fakeAttach) Recv() (*rpc.AttachRequest, error) {
	select {
	case r, ok := <-f.in:
		if !ok {
			return nil, io.EOF
		}
		return r, nil
	case <-f.ctx.Done():
		return nil, f.ctx.Err()
	}
}

func (f *fakeAttach) got() []*rpc.AttachEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*rpc.AttachEvent(nil), f.events...)
}

func (f *fakeAttach) Context() context.Context     { return f.ctx }
func (f *fakeAttach) SetHeader(metadata.MD) error  { return nil }
func (f *fakeAttach) SendHeader(metadata.MD) error { return nil }
func (f *fakeAttach) SetTrailer(metadata.MD)       {}
func (f *fakeAttach) SendMsg(any) error            { return nil }
func (f *fakeAttach) RecvMsg(any) error            { return nil }

// The controller relays a job's terminal between bsub and the job's host:
// only the job's owner attaches, only the job's host speaks for it,
// bsub's input goes down no faster than the worker acknowledges it (one
// window at most in flight), and bsub going away hangs the job up.
func TestTermRelay(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conf, err := config.Parse("test.toml", []byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	x := &termExec{fakeExec: &fakeExec{running: map[key]bool{}, autoExit: -1}}
	c, err := New(Config{Host: "hostA", Slots: 4, NCPUs: 4, Cluster: conf}, st, x)
	if err != nil {
		t.Fatal(err)
	}
	x.c = c
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; st.Close() })

	j, err := c.Submit(alice, &api.JobSpec{Command: "cat", Interactive: api.Interactive_PLAIN, InteractiveAddr: "unix:/nowhere"})
	if err != nil {
		t.Fatal(err)
	}
	// Launched, not only recorded as running: the launch follows the
	// dispatch's commit.
	waitFor(t, "the job launched", func() bool {
		if c.stateOf(j.JobId, 0) != api.JobState_RUN {
			return false
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		return len(x.launched) > 0
	})
	x.mu.Lock()
	launched := x.launched[0]
	x.mu.Unlock()
	if launched.GetSpec().GetInteractiveAddr() != "" || launched.GetEffective().GetInteractiveAddr() != "" {
		t.Errorf("a job for a worker that cannot dial bsub was launched with bsub's address")
	}

	// Someone else's bsub is refused.
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	other := &fakeAttach{ctx: sctx, in: make(chan *rpc.AttachRequest, 1)}
	other.in <- &rpc.AttachRequest{JobId: j.JobId}
	if err := c.Attach(Caller{UID: 2000, GID: 2000}, other); status.Code(err) != codes.PermissionDenied {
		t.Errorf("attach by another user: %v", err)
	}

	// Another host cannot open the job's terminal.
	c.termFrom("hostB", &rpc.TermData{JobId: j.JobId, Type: int32(interactive.Hello), Payload: []byte("hostB")})
	if s := c.termSession(key{j.JobId, 0}, false); s != nil {
		t.Errorf("a host the job does not run on opened its terminal")
	}

	link := c.LocalTermLink()
	link.TermUp(&rpc.TermData{JobId: j.JobId, Type: int32(interactive.Hello), Payload: []byte("hostA")})
	link.TermUp(&rpc.TermData{JobId: j.JobId, Type: int32(interactive.Stdout), Payload: []byte("early")})

	a := &fakeAttach{ctx: sctx, in: make(chan *rpc.AttachRequest, 64)}
	a.in <- &rpc.AttachRequest{JobId: j.JobId}
	ended := make(chan error, 1)
	go func() { ended <- c.Attach(alice, a) }()
	waitFor(t, "the early frames at bsub", func() bool { return len(a.got()) >= 3 })
	if ev := a.got(); !ev[0].Attached || ev[1].Type != int32(interactive.Hello) || string(ev[2].Payload) != "early" {
		t.Fatalf("bsub got %v", ev)
	}
	waitFor(t, "the output acknowledged", func() bool { x.tmu.Lock(); defer x.tmu.Unlock(); return x.acks == int64(len("hostA")+len("early")) })

	// Two windows of input: one goes down, the rest waits for the
	// worker's acknowledgement.
	chunk := make([]byte, 64<<10)
	for range 2 * worker.TermWindow / len(chunk) {
		a.in <- &rpc.AttachRequest{Type: int32(interactive.Stdin), Payload: chunk}
	}
	waitFor(t, "a window of input down", func() bool { n, _ := x.sentDown(); return n == worker.TermWindow })
	time.Sleep(50 * time.Millisecond)
	if n, _ := x.sentDown(); n != worker.TermWindow {
		t.Fatalf("%d bytes of input sent down without acknowledgement, want at most the window (%d)", n, worker.TermWindow)
	}
	link.TermAckUp(&rpc.TermAck{JobId: j.JobId, Bytes: worker.TermWindow})
	waitFor(t, "the rest of the input down", func() bool { n, _ := x.sentDown(); return n == 2*worker.TermWindow })

	// bsub goes away: the job's side is hung up.
	close(a.in)
	select {
	case err := <-ended:
		if err != nil && !errors.Is(err, io.EOF) {
			t.Errorf("attach ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("attach did not end with bsub's call")
	}
	if _, hungUp := x.sentDown(); !hungUp {
		t.Errorf("bsub went away and the job was not hung up")
	}
}
