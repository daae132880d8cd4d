package client

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/rpcstatus"
)

// h2Server is a controller for the local-socket client's tests.
type h2Server struct {
	grpcapi.UnimplementedControllerServer
	watchEnded chan struct{}
}

func (h2Server) Submit(ctx context.Context, req *api.SubmitRequest) (*api.SubmitReply, error) {
	switch cmd := req.GetSpec().GetCommand(); cmd {
	case "refuse":
		return nil, status.Error(codes.InvalidArgument, "100% refused: <bad> ünïcode\nline two")
	case "standby":
		return nil, grpcapi.NotLeader("host2:7869")
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	default:
		if _, ok := ctx.Deadline(); !ok {
			return nil, status.Error(codes.FailedPrecondition, "no deadline")
		}
		return &api.SubmitReply{JobId: int64(len(cmd)), Queue: cmd[:min(len(cmd), 10)]}, nil
	}
}

// Query streams parts whose total is larger than the client's windows.
func (h2Server) Query(req *api.QueryRequest, s grpcapi.Controller_QueryServer) error {
	big := strings.Repeat("x", 256<<10)
	for i := range int(req.GetRefs()[0].GetJobId()) {
		if err := s.Send(&api.QueryReply{Jobs: []*api.Job{{JobId: int64(i), PendReason: big}}}); err != nil {
			return err
		}
	}
	if req.GetUser() == "fail-at-end" {
		return status.Error(codes.Internal, "failed after the parts")
	}
	return nil
}

func (s h2Server) Watch(_ *api.WatchRequest, w grpcapi.Controller_WatchServer) error {
	if err := w.Send(&api.WatchEvent{Job: &api.Job{JobId: 1}}); err != nil {
		return err
	}
	<-w.Context().Done()
	close(s.watchEnded)
	return w.Context().Err()
}

func h2Client(t *testing.T) (*Client, h2Server) {
	t.Helper()
	t.Setenv("XCE_CONTROLLERS", "")
	t.Setenv("LSF_ENVDIR", t.TempDir())
	srv := h2Server{watchEnded: make(chan struct{})}
	serveLocal(t, srv)
	c := dialT(t)
	if c.fo != nil {
		t.Fatal("no local-socket connection")
	}
	return c, srv
}

func TestH2Unary(t *testing.T) {
	c, _ := h2Client(t)
	ctx := ctxT(t)
	for _, cmd := range []string{"true", strings.Repeat("y", 3<<20)} { // the large one waits on the server's windows
		r, err := c.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{Command: cmd}})
		if err != nil {
			t.Fatalf("Submit of %d bytes: %v", len(cmd), err)
		}
		if r.JobId != int64(len(cmd)) {
			t.Errorf("Submit of %d bytes: the server read %d", len(cmd), r.JobId)
		}
	}
}

// A message beyond the server's limit (grpc-go's default, 4 MB) gets the
// server's ResourceExhausted, however far its sending got.
func TestH2TooLarge(t *testing.T) {
	c, _ := h2Client(t)
	ctx := ctxT(t)
	_, err := c.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{Command: strings.Repeat("y", 20<<20)}})
	if rpcstatus.CodeOf(err) != rpcstatus.ResourceExhausted {
		t.Errorf("a 20 MB request: %v, want ResourceExhausted", err)
	}
	if _, err := c.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{Command: "true"}}); err != nil {
		t.Errorf("the next call: %v", err)
	}
}

func TestH2Status(t *testing.T) {
	c, _ := h2Client(t)
	ctx := ctxT(t)
	_, err := c.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{Command: "refuse"}})
	if st, _ := rpcstatus.FromError(err); st.Code() != rpcstatus.InvalidArgument || st.Message() != "100% refused: <bad> ünïcode\nline two" {
		t.Errorf("refused: %v", err)
	}
	_, err = c.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{Command: "standby"}})
	if leader, ok := rpcstatus.LeaderOf(err); !ok || leader != "host2:7869" {
		t.Errorf("a standby's answer lost its details: %v (%q, %v)", err, leader, ok)
	}
	_, err = c.Info(ctx, &api.ClusterInfoRequest{})
	if rpcstatus.CodeOf(err) != rpcstatus.Unimplemented {
		t.Errorf("an unimplemented method: %v", err)
	}
}

func TestH2Stream(t *testing.T) {
	c, _ := h2Client(t)
	ctx := ctxT(t)
	const parts = 100 // 25 MB: beyond the receive windows
	jobs, err := c.Query(ctx, &api.QueryRequest{Refs: []*api.JobRef{{JobId: parts}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Jobs) != parts {
		t.Fatalf("%d parts, want %d", len(jobs.Jobs), parts)
	}
	for i, j := range jobs.Jobs {
		if j.JobId != int64(i) || len(j.PendReason) != 256<<10 {
			t.Fatalf("part %d: job %d, %d bytes", i, j.JobId, len(j.PendReason))
		}
	}
	_, err = c.Query(ctx, &api.QueryRequest{User: "fail-at-end", Refs: []*api.JobRef{{JobId: 3}}})
	if st, _ := rpcstatus.FromError(err); st.Code() != rpcstatus.Internal || st.Message() != "failed after the parts" {
		t.Errorf("a stream's failure: %v", err)
	}
}

func TestH2Concurrent(t *testing.T) {
	c, _ := h2Client(t)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := strings.Repeat("z", i*10000+1)
			r, err := c.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{Command: cmd}})
			if err == nil && r.JobId != int64(len(cmd)) {
				err = errors.New("a reply for another call")
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestH2DeadlineAndCancel(t *testing.T) {
	c, srv := h2Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{Command: "slow"}})
	if rpcstatus.CodeOf(err) != rpcstatus.DeadlineExceeded {
		t.Errorf("past its deadline: %v", err)
	}
	wctx, wcancel := context.WithCancel(context.Background())
	w, err := c.Watch(wctx, &api.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := w.Recv(); err != nil || ev.GetJob().GetJobId() != 1 {
		t.Fatalf("first event: %v, %v", ev, err)
	}
	wcancel()
	if _, err := w.Recv(); rpcstatus.CodeOf(err) != rpcstatus.Canceled {
		t.Errorf("after cancel: %v", err)
	}
	select {
	case <-srv.watchEnded:
	case <-time.After(10 * time.Second):
		t.Error("the server's stream did not end on cancel")
	}
	// The connection serves on.
	if _, err := c.Submit(ctxT(t), &api.SubmitRequest{Spec: &api.JobSpec{Command: "true"}}); err != nil {
		t.Errorf("after a cancelled call: %v", err)
	}
}

// A socket nobody listens on (a stale one): the call, not the dial, fails,
// with Unavailable, as grpc-go's do; and so does a call on a closed
// connection.
func TestH2Unavailable(t *testing.T) {
	t.Setenv("XCE_CONTROLLERS", "")
	t.Setenv("LSF_ENVDIR", t.TempDir())
	dir := t.TempDir()
	t.Setenv("XCE_DIR", dir)
	lis, err := net.Listen("unix", filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	lis.(*net.UnixListener).SetUnlinkOnClose(false)
	lis.Close()
	c := dialT(t)
	if _, err := c.Submit(ctxT(t), &api.SubmitRequest{Spec: &api.JobSpec{Command: "true"}}); rpcstatus.CodeOf(err) != rpcstatus.Unavailable {
		t.Errorf("a stale socket: %v", err)
	}

	lc, _ := h2Client(t)
	lc.Close()
	if _, err := lc.Submit(ctxT(t), &api.SubmitRequest{Spec: &api.JobSpec{Command: "true"}}); rpcstatus.CodeOf(err) == rpcstatus.OK {
		t.Error("a call on a closed connection succeeded")
	}
}

// After the controller restarts on the same socket, the next call reaches
// the new one (bsub -K and bwait watch again after a restart).
func TestH2Reconnects(t *testing.T) {
	t.Setenv("XCE_CONTROLLERS", "")
	t.Setenv("LSF_ENVDIR", t.TempDir())
	dir := t.TempDir()
	t.Setenv("XCE_DIR", dir)
	sock := filepath.Join(dir, SocketName)
	serve := func() *grpc.Server {
		lis, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		gs := grpc.NewServer()
		grpcapi.RegisterControllerServer(gs, h2Server{watchEnded: make(chan struct{})})
		go gs.Serve(lis)
		return gs
	}
	gs := serve()
	c := dialT(t)
	ctx := ctxT(t)
	submit := func() error {
		_, err := c.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{Command: "true"}})
		return err
	}
	if err := submit(); err != nil {
		t.Fatal(err)
	}
	gs.Stop()
	if err := submit(); rpcstatus.CodeOf(err) != rpcstatus.Unavailable {
		t.Errorf("with the controller down: %v, want Unavailable", err)
	}
	gs = serve()
	defer gs.Stop()
	if err := submit(); err != nil {
		t.Errorf("after the restart: %v", err)
	}
}

// A server that refuses the connection (too many from this user) says
// why in its GOAWAY: the call's error carries it, made printable.
func TestH2RefusedSaysWhy(t *testing.T) {
	t.Setenv("XCE_CONTROLLERS", "")
	t.Setenv("LSF_ENVDIR", t.TempDir())
	dir := t.TempDir()
	t.Setenv("XCE_DIR", dir)
	lis, err := net.Listen("unix", filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		nc, err := lis.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		io.ReadFull(nc, make([]byte, len(http2.ClientPreface))) // as unixrpc's refusal
		fr := http2.NewFramer(nc, nil)
		fr.WriteSettings()
		fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, []byte("too many connections from uid 5 (at most 64)\x1b[2J"))
	}()
	c := dialT(t)
	_, err = c.Submit(ctxT(t), &api.SubmitRequest{Spec: &api.JobSpec{Command: "true"}})
	if rpcstatus.CodeOf(err) != rpcstatus.ResourceExhausted || !strings.Contains(err.Error(), "the controller refused the connection: too many connections from uid 5 (at most 64)?[2J") {
		t.Fatalf("refused: %v", err)
	}
}
