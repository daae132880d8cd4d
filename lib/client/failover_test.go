package client

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/clusterauth"
	"xce/lib/lsfenv"
	"xce/lib/peercred"
	"xce/lib/rpcstatus"
)

func TestControllers(t *testing.T) {
	conf := func(list string) func() *lsfenv.Conf {
		return func() *lsfenv.Conf {
			p := filepath.Join(t.TempDir(), "lsf.conf")
			if err := os.WriteFile(p, []byte("LSF_MASTER_LIST=\""+list+"\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := lsfenv.LoadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	noConf := func() *lsfenv.Conf { t.Fatal("lsf.conf read though XCE_CONTROLLERS is set"); return nil }
	for _, tc := range []struct {
		env  string
		conf func() *lsfenv.Conf
		want []string
	}{
		{"a:1,b:2", noConf, []string{"a:1", "b:2"}},
		{"a:1 b:2, c:3", noConf, []string{"a:1", "b:2", "c:3"}},
		{"[::1]:7000,b", noConf, []string{"[::1]:7000", "b:7000"}},
		{"", conf("ctl1 ctl2:7000 ctl3"), []string{"ctl1:7000", "ctl2:7000", "ctl3:7000"}},
		{"", conf("ctl1:7000 ctl2:7001"), []string{"ctl1:7000", "ctl2:7001"}},
		{"", conf("hostA"), nil}, // the single-host lsf.conf: no list
		{"", conf(""), nil},
		{"", func() *lsfenv.Conf { return nil }, nil},
	} {
		got := Controllers(func(k string) string {
			if k == "XCE_CONTROLLERS" {
				return tc.env
			}
			return ""
		}, tc.conf)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Controllers(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestFailoverTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{"": DefaultFailoverTimeout, "5s": 5 * time.Second, "2": 2 * time.Second, "0.5": 500 * time.Millisecond, "junk": DefaultFailoverTimeout} {
		if got := failoverTimeout(func(string) string { return v }); got != want {
			t.Errorf("XCE_FAILOVER_TIMEOUT=%q: %v, want %v", v, got, want)
		}
	}
}

// fake is a controller candidate (or, workerOnly, a worker's socket).
type fake struct {
	grpcapi.UnimplementedControllerServer
	name string
	tok  clusterauth.Token // mints when set
	// standby, when set, says whom to name in NotLeader for the n-th call
	// (from 1); ok false: serve it.
	standby func(n int) (leader string, ok bool)
	n       atomic.Int32
	submits atomic.Int32
	submit  error

	mu   sync.Mutex
	uids []uint32
}

func (f *fake) notLeader() error {
	if f.standby == nil {
		return nil
	}
	if l, ok := f.standby(int(f.n.Add(1))); ok {
		return grpcapi.NotLeader(l)
	}
	return nil
}

func who(ctx context.Context) uint32 {
	if u, _, ok := peercred.FromContext(ctx); ok {
		return u
	}
	if u, _, ok := clusterauth.PeerUser(ctx); ok {
		return u
	}
	return 1 << 31
}

func (f *fake) Info(ctx context.Context, _ *api.ClusterInfoRequest) (*api.ClusterInfo, error) {
	if err := f.notLeader(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.uids = append(f.uids, who(ctx))
	f.mu.Unlock()
	return &api.ClusterInfo{MasterHost: f.name, Uid: who(ctx)}, nil
}

func (f *fake) Submit(context.Context, *api.SubmitRequest) (*api.SubmitReply, error) {
	if err := f.notLeader(); err != nil {
		return nil, err
	}
	f.submits.Add(1)
	if f.submit != nil {
		return nil, f.submit
	}
	return &api.SubmitReply{JobId: 7, Queue: f.name}, nil
}

func (f *fake) Query(req *api.QueryRequest, s grpc.ServerStreamingServer[api.QueryReply]) error {
	if err := f.notLeader(); err != nil {
		return err
	}
	for _, id := range []int64{1, 2} {
		if err := s.Send(&api.QueryReply{Jobs: []*api.Job{{JobId: id, ExecCwd: f.name}}}); err != nil {
			return err
		}
	}
	return nil
}

func (f *fake) Credential(ctx context.Context, req *rpc.CredentialRequest) (*rpc.CredentialReply, error) {
	if f.tok.IsZero() {
		return nil, status.Error(codes.Unimplemented, "no mint")
	}
	uid, gid, ok := peercred.FromContext(ctx)
	if !ok {
		return nil, status.Error(codes.PermissionDenied, "local only")
	}
	up, cp := clusterauth.MintUser(f.tok, uid, gid, req.Exporter)
	return &rpc.CredentialReply{Uid: uid, Gid: gid, UserProof: up, ControllerProof: cp}, nil
}

// workerSocket serves Credential only, as `xced worker` does.
type workerSocket struct {
	grpcapi.UnimplementedControllerServer
	f *fake
}

func (w workerSocket) Credential(ctx context.Context, req *rpc.CredentialRequest) (*rpc.CredentialReply, error) {
	return w.f.Credential(ctx, req)
}

// serveLocal serves srv on DIR/xced.sock of a new XCE_DIR.
func serveLocal(t *testing.T, srv grpcapi.ControllerServer) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XCE_DIR", dir)
	lis, err := net.Listen("unix", filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(peercred.Credentials()))
	grpcapi.RegisterControllerServer(gs, srv)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
}

// serveTCP serves f on 127.0.0.1 with the cluster's credentials.
func serveTCP(t *testing.T, tok clusterauth.Token, f *fake) string {
	t.Helper()
	cert, err := clusterauth.EnsureCert(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(clusterauth.ServerCredentials(cert, tok, nil)))
	grpcapi.RegisterControllerServer(gs, f)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	return lis.Addr().String()
}

// deadAddr is a loopback port nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := lis.Addr().String()
	lis.Close()
	return a
}

func newTok(t *testing.T) clusterauth.Token {
	t.Helper()
	tok, err := clusterauth.EnsureToken(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func always(leader string) func(int) (string, bool) {
	return func(int) (string, bool) { return leader, true }
}

func dialT(t *testing.T) *Client {
	t.Helper()
	c, err := Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func info(t *testing.T, c *Client) string {
	t.Helper()
	r, err := c.Info(ctxT(t), &api.ClusterInfoRequest{})
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if r.Uid != uint32(os.Getuid()) {
		t.Errorf("served as uid %d, want %d", r.Uid, os.Getuid())
	}
	return r.MasterHost
}

func TestNoListIsThePlainSocket(t *testing.T) {
	t.Setenv("XCE_CONTROLLERS", "")
	t.Setenv("LSF_ENVDIR", t.TempDir())
	serveLocal(t, &fake{name: "local"})
	c := dialT(t)
	if c.fo != nil {
		t.Error("a failover connection without candidates")
	}
	if got := info(t, c); got != "local" {
		t.Errorf("served by %q", got)
	}
}

func TestLocalLeaderServesAlone(t *testing.T) {
	t.Setenv("XCE_CONTROLLERS", deadAddr(t)+","+deadAddr(t))
	serveLocal(t, &fake{name: "local", tok: newTok(t)})
	c := dialT(t)
	if got := info(t, c); got != "local" {
		t.Errorf("served by %q", got)
	}
	if n := len(c.fo.conns); n != 0 {
		t.Errorf("%d TCP connections for a local leader", n)
	}
}

func TestStandbyRedirectsToTheLeader(t *testing.T) {
	tok := newTok(t)
	leader := &fake{name: "leader"}
	addr := serveTCP(t, tok, leader)
	local := &fake{name: "standby", tok: tok, standby: always(addr)}
	serveLocal(t, local)
	t.Setenv("XCE_CONTROLLERS", deadAddr(t)+" "+addr)
	c := dialT(t)
	if got := info(t, c); got != "leader" {
		t.Errorf("served by %q", got)
	}
	// A stream too: NotLeader on the first message, then the leader's.
	jobs, err := c.Query(ctxT(t), &api.QueryRequest{})
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	if len(jobs.Jobs) != 2 || jobs.Jobs[0].ExecCwd != "leader" {
		t.Errorf("Query: %v", jobs.Jobs)
	}
	// The next call goes to the leader at once.
	before := local.n.Load()
	if r, err := c.Submit(ctxT(t), &api.SubmitRequest{}); err != nil || r.Queue != "leader" {
		t.Errorf("Submit: %v, %v", r, err)
	}
	if local.n.Load() != before {
		t.Error("the standby was asked again after the leader answered")
	}
}

func TestStreamRedirectedOnItsFirstMessage(t *testing.T) {
	tok := newTok(t)
	addr := serveTCP(t, tok, &fake{name: "leader"})
	serveLocal(t, &fake{name: "standby", tok: tok, standby: always(addr)})
	t.Setenv("XCE_CONTROLLERS", addr)
	c := dialT(t)
	var got []int64
	if _, err := c.QueryEach(ctxT(t), &api.QueryRequest{}, func(jobs []*api.Job) error {
		for _, j := range jobs {
			got = append(got, j.JobId)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []int64{1, 2}) {
		t.Errorf("jobs %v", got)
	}
}

func TestNoneElectedThenALeader(t *testing.T) {
	tok := newTok(t)
	leader := &fake{name: "leader"}
	laddr := serveTCP(t, tok, leader)
	// A standby over TCP knows no leader for its first three calls.
	other := &fake{name: "other", standby: func(n int) (string, bool) {
		if n <= 3 {
			return "", true
		}
		return laddr, true
	}}
	oaddr := serveTCP(t, tok, other)
	serveLocal(t, &fake{name: "standby", tok: tok, standby: always("")})
	t.Setenv("XCE_CONTROLLERS", deadAddr(t)+","+oaddr)
	c := dialT(t)
	if got := info(t, c); got != "leader" {
		t.Errorf("served by %q", got)
	}
	if other.n.Load() < 4 {
		t.Errorf("the other standby was asked %d times", other.n.Load())
	}
}

func TestWorkerSocketMintsForTheControllers(t *testing.T) {
	tok := newTok(t)
	addr := serveTCP(t, tok, &fake{name: "leader"})
	serveLocal(t, workerSocket{f: &fake{tok: tok}})
	t.Setenv("XCE_CONTROLLERS", addr)
	c := dialT(t)
	if got := info(t, c); got != "leader" {
		t.Errorf("served by %q", got)
	}
	if got := info(t, c); got != "leader" {
		t.Errorf("second call served by %q", got)
	}
}

// A call the leader received is not sent again, even when it fails with
// Unavailable: the leader may have acted on it.
func TestNotSentAgainOnceSent(t *testing.T) {
	tok := newTok(t)
	leader := &fake{name: "leader", submit: status.Error(codes.Unavailable, "stopping")}
	addr := serveTCP(t, tok, leader)
	serveLocal(t, &fake{name: "standby", tok: tok, standby: always(addr)})
	t.Setenv("XCE_CONTROLLERS", addr)
	c := dialT(t)
	_, err := c.Submit(ctxT(t), &api.SubmitRequest{})
	if rpcstatus.CodeOf(err) != rpcstatus.Aborted || !strings.Contains(err.Error(), "may or may not have been carried out") {
		t.Errorf("Submit: %v, want the unknown outcome said", err)
	}
	if n := leader.submits.Load(); n != 1 {
		t.Errorf("the leader got the submission %d times, want 1", n)
	}
}

func TestGivesUpAfterTheFailoverTimeout(t *testing.T) {
	tok := newTok(t)
	serveLocal(t, &fake{name: "standby", tok: tok, standby: always("")})
	t.Setenv("XCE_CONTROLLERS", deadAddr(t)+","+serveTCP(t, tok, &fake{name: "b", standby: always("")}))
	t.Setenv("XCE_FAILOVER_TIMEOUT", "700ms")
	c := dialT(t)
	start := time.Now()
	_, err := c.Info(ctxT(t), &api.ClusterInfoRequest{})
	if rpcstatus.CodeOf(err) != rpcstatus.Unavailable {
		t.Errorf("Info with no leader: %v", err)
	}
	if d := time.Since(start); d < 600*time.Millisecond || d > 20*time.Second {
		t.Errorf("gave up after %v, want about 700ms", d)
	}
	if !errors.Is(c.NotRunningError(), ErrNotRunning) {
		t.Errorf("NotRunningError: %v", c.NotRunningError())
	}
}

// A local socket that mints nothing cannot take the user to the leader:
// the call fails at once, not after the failover timeout.
func TestNoMintFailsAtOnce(t *testing.T) {
	tok := newTok(t)
	addr := serveTCP(t, tok, &fake{name: "leader"})
	serveLocal(t, &fake{name: "standby", standby: always(addr)})
	t.Setenv("XCE_CONTROLLERS", addr)
	c := dialT(t)
	start := time.Now()
	_, err := c.Info(ctxT(t), &api.ClusterInfoRequest{})
	if err == nil {
		t.Fatal("Info without a user credential succeeded")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("failed after %v", d)
	}
}

// A minter of another cluster's token is refused, and not tried again.
func TestForeignTokenIsRefused(t *testing.T) {
	addr := serveTCP(t, newTok(t), &fake{name: "leader"})
	serveLocal(t, &fake{name: "standby", tok: newTok(t), standby: always(addr)})
	t.Setenv("XCE_CONTROLLERS", addr)
	c := dialT(t)
	_, err := c.Info(ctxT(t), &api.ClusterInfoRequest{})
	if !clusterauth.IsRefused(err) {
		t.Errorf("Info with a foreign token: %v, want a refusal", err)
	}
}

func TestNoLocalSocketWithAList(t *testing.T) {
	t.Setenv("XCE_DIR", t.TempDir())
	t.Setenv("XCE_CONTROLLERS", "a:1")
	if _, err := Dial(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Dial: %v", err)
	}
}

// Without xce-dial next to the program no candidate can be reached: the
// call fails at once with that said, not after the failover timeout (an
// hour here, against the call's minute).
func TestNoHelperFailsAtOnce(t *testing.T) {
	saved := startDialer
	startDialer = nil // the test binary has no xce-dial beside it
	t.Cleanup(func() { startDialer = saved })
	tok := newTok(t)
	addr := serveTCP(t, tok, &fake{name: "leader"})
	serveLocal(t, &fake{name: "standby", tok: tok, standby: always(addr)})
	t.Setenv("XCE_CONTROLLERS", addr)
	t.Setenv("XCE_FAILOVER_TIMEOUT", "1h")
	c := dialT(t)
	_, err := c.Info(ctxT(t), &api.ClusterInfoRequest{})
	if rpcstatus.CodeOf(err) != rpcstatus.FailedPrecondition || !strings.Contains(err.Error(), "xce-dial") {
		t.Errorf("Info without the helper: %v, want FailedPrecondition naming xce-dial", err)
	}
}
