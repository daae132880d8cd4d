package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/clusterauth"
	"xce/lib/lsfenv"
)

// DefaultFailoverTimeout is how long a call looks for the leader among the
// controller candidates (XCE_FAILOVER_TIMEOUT): while none is elected, or
// the candidates tried do not answer.
const DefaultFailoverTimeout = 30 * time.Second

// Controllers is the list of controller candidates, HOST:PORT each:
// $XCE_CONTROLLERS (comma- or space-separated), else LSF_MASTER_LIST of
// lsf.conf (space-separated; a HOST without a port gets the port of the
// first entry that has one, or is left out). conf is read only when
// XCE_CONTROLLERS is unset; it may return nil.
func Controllers(getenv func(string) string, conf func() *lsfenv.Conf) []string {
	if v := getenv("XCE_CONTROLLERS"); v != "" {
		return parseList(strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }))
	}
	if c := conf(); c != nil {
		return parseList(strings.Fields(c.Get("LSF_MASTER_LIST")))
	}
	return nil
}

// parseList gives bare hosts the first port named, and drops them when
// there is none: LSF's own list names hosts, and a single-host lsf.conf
// (lsfenv.WriteDefault) names one without a port, which is no list.
func parseList(entries []string) []string {
	port := ""
	for _, e := range entries {
		if _, p, err := net.SplitHostPort(e); err == nil && p != "" {
			port = p
			break
		}
	}
	var out []string
	for _, e := range entries {
		if _, _, err := net.SplitHostPort(e); err == nil {
			out = append(out, e)
		} else if port != "" && !strings.Contains(e, ":") {
			out = append(out, net.JoinHostPort(e, port))
		}
	}
	return out
}

// failoverTimeout is XCE_FAILOVER_TIMEOUT: a duration (10s) or seconds.
func failoverTimeout(getenv func(string) string) time.Duration {
	v := getenv("XCE_FAILOVER_TIMEOUT")
	if v == "" {
		return DefaultFailoverTimeout
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second))
	}
	return DefaultFailoverTimeout
}

// local is the target name of the local socket among the candidates'.
const local = ""

const (
	minRetryWait = 50 * time.Millisecond
	maxRetryWait = 250 * time.Millisecond // an election takes about a second: look often
)

// failover is the connection of a client with controller candidates: a
// grpc.ClientConnInterface that sends each call to the local socket while
// it is the leader, else over TCP to the leader, found by following the
// standbys' NotLeader answers, with the user's proof that the local socket
// (a candidate's or a worker's) mints. A call is sent again only when no
// leader can have acted on it: a NotLeader answer, or a connection that
// failed before the call was sent.
type failover struct {
	local     *grpc.ClientConn
	localSock string
	cands     []string
	timeout   time.Duration
	tcpOpts   []grpc.DialOption

	mu       sync.Mutex
	conns    map[string]*grpc.ClientConn
	cur      string // where the last call went
	localOff bool   // the local socket is a worker's, serving Credential only
	next     int    // the next candidate to try
	mintErr  error  // the last minting's failure
}

func newFailover(localConn *grpc.ClientConn, sock string, cands []string, timeout time.Duration) *failover {
	f := &failover{local: localConn, localSock: sock, cands: cands, timeout: timeout, conns: map[string]*grpc.ClientConn{}}
	f.tcpOpts = []grpc.DialOption{
		grpc.WithTransportCredentials(clusterauth.UserCredentials(f.mint)),
		grpc.WithStatsHandler(sentHandler{}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(64<<20)),
		codecOption(),
		// A candidate that comes back is tried again soon, not after
		// gRPC's default backoff of up to two minutes.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			// A candidate that accepts but does not answer (a hung host)
			// costs a second, then the next is tried.
			MinConnectTimeout: time.Second,
		}),
	}
	return f
}

// mint asks the local socket for the user's proofs of one TLS session.
func (f *failover) mint(ctx context.Context, ek []byte) (uid, gid uint32, up, cp []byte, err error) {
	r, err := grpcapi.NewControllerClient(f.local).Credential(ctx, &rpc.CredentialRequest{Exporter: ek})
	f.mu.Lock()
	f.mintErr = err
	f.mu.Unlock()
	if err != nil {
		return 0, 0, nil, nil, fmt.Errorf("no user credential from %s: %w", f.localSock, err)
	}
	return r.GetUid(), r.GetGid(), r.GetUserProof(), r.GetControllerProof(), nil
}

func (f *failover) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cc := range f.conns {
		cc.Close()
	}
	f.conns = map[string]*grpc.ClientConn{}
}

func (f *failover) conn(target string) (*grpc.ClientConn, error) {
	if target == local {
		return f.local, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if cc := f.conns[target]; cc != nil {
		return cc, nil
	}
	cc, err := grpc.NewClient("passthrough:///"+target, f.tcpOpts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", target, err)
	}
	f.conns[target] = cc
	return cc, nil
}

func (f *failover) current() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == local && f.localOff {
		return f.nextLocked()
	}
	return f.cur
}

func (f *failover) nextLocked() string {
	t := f.cands[f.next%len(f.cands)]
	f.next++
	return t
}

// after decides, for a call to target that failed with err, where to
// send it next and whether to wait first; retry false: return err.
func (f *failover) after(target string, err error, sent bool) (next string, wait, retry bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if leader, ok := grpcapi.LeaderOf(err); ok {
		if leader != "" && leader != target {
			return leader, false, true
		}
		return f.nextLocked(), target != local, true
	}
	code := status.Code(err)
	if target == local && code == codes.Unimplemented {
		// A worker's socket: it mints, the controllers serve.
		f.localOff = true
		return f.nextLocked(), false, true
	}
	if code != codes.Unavailable || sent || clusterauth.IsRefused(err) {
		return "", false, false
	}
	if f.mintErr != nil {
		switch status.Code(f.mintErr) {
		case codes.Unimplemented, codes.PermissionDenied, codes.InvalidArgument, codes.Unauthenticated:
			return "", false, false // the local socket will not mint: no candidate can be reached
		}
	}
	return f.nextLocked(), true, true
}

// do runs call, and again where after says, until it succeeds, fails for
// good, ctx ends or the failover timeout passes.
func (f *failover) do(ctx context.Context, call func(ctx context.Context, cc *grpc.ClientConn) error) error {
	target := f.current()
	var deadline time.Time
	wait := minRetryWait
	hops := 0
	for {
		cc, err := f.conn(target)
		if err != nil {
			return err
		}
		sent := &sentFlag{}
		err = call(context.WithValue(ctx, sentKey{}, sent), cc)
		if err == nil || errors.Is(err, io.EOF) {
			f.mu.Lock()
			f.cur = target
			f.mu.Unlock()
			return err
		}
		next, backoff, retry := f.after(target, err, sent.Load())
		if !retry && sent.Load() && status.Code(err) == codes.Unavailable {
			// Not "no controller answered": one had the call, and its
			// outcome is unknown (a leader that handed its office on, or
			// died, while it answered).
			where := target
			if where == local {
				where = f.localSock
			}
			return status.Errorf(codes.Aborted, "the controller at %s had the request but did not answer it (%s); it may or may not have been carried out: check (bjobs) before sending it again", where, status.Convert(err).Message())
		}
		if !retry || ctx.Err() != nil {
			return err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(f.timeout)
		}
		// Redirects without a wait are bounded: two standbys that name
		// each other must not spin.
		if hops++; hops > 2*len(f.cands)+2 {
			backoff = true
		}
		if backoff {
			left := time.Until(deadline)
			if left <= 0 {
				return err
			}
			t := time.NewTimer(min(wait, left))
			select {
			case <-ctx.Done():
				t.Stop()
				return err
			case <-t.C:
			}
			wait = min(2*wait, maxRetryWait)
			hops = 0
		}
		target = next
	}
}

// Invoke sends a unary call where the leader is.
func (f *failover) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return f.do(ctx, func(ctx context.Context, cc *grpc.ClientConn) error {
		return cc.Invoke(ctx, method, args, reply, opts...)
	})
}

// NewStream opens a stream where the leader is. A server-streaming call
// (Query, Watch, Accounting) is opened at its first RecvMsg, with the
// request SendMsg kept, so that a standby's NotLeader there sends it to
// the leader; other streams go where the last call went, as they are.
func (f *failover) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if desc.ClientStreams {
		var s grpc.ClientStream
		err := f.do(ctx, func(ctx context.Context, cc *grpc.ClientConn) error {
			var err error
			s, err = cc.NewStream(ctx, desc, method, opts...)
			return err
		})
		return s, err
	}
	return &serverStream{f: f, ctx: ctx, desc: desc, method: method, opts: opts}, nil
}

// serverStream is a server-streaming call, opened on the first RecvMsg.
type serverStream struct {
	f      *failover
	ctx    context.Context
	desc   *grpc.StreamDesc
	method string
	opts   []grpc.CallOption

	req    any
	closed bool
	s      grpc.ClientStream // once a message (or the end) came
	err    error             // the opening's failure, for ever after
}

func (s *serverStream) SendMsg(m any) error {
	if s.s != nil || s.req != nil {
		return errors.New("client: a server-streaming call sends one request")
	}
	s.req = m
	return nil
}

func (s *serverStream) CloseSend() error {
	s.closed = true
	if s.s != nil {
		return s.s.CloseSend()
	}
	return nil
}

func (s *serverStream) RecvMsg(m any) error {
	if s.s != nil {
		return s.s.RecvMsg(m)
	}
	if s.err != nil {
		return s.err
	}
	if s.req == nil {
		return errors.New("client: RecvMsg before the request was sent")
	}
	s.err = s.f.do(s.ctx, func(ctx context.Context, cc *grpc.ClientConn) error {
		cs, err := cc.NewStream(ctx, s.desc, s.method, s.opts...)
		if err != nil {
			return err
		}
		if err := cs.SendMsg(s.req); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if s.closed {
			if err := cs.CloseSend(); err != nil {
				return err
			}
		}
		err = cs.RecvMsg(m)
		if err == nil || errors.Is(err, io.EOF) {
			s.s = cs
		}
		return err
	})
	if s.s != nil {
		if errors.Is(s.err, io.EOF) {
			return s.err
		}
		s.err = nil
		return nil
	}
	return s.err
}

func (s *serverStream) Header() (metadata.MD, error) {
	if s.s == nil {
		return nil, errors.New("client: the stream's header before its first message")
	}
	return s.s.Header()
}

func (s *serverStream) Trailer() metadata.MD {
	if s.s == nil {
		return nil
	}
	return s.s.Trailer()
}

func (s *serverStream) Context() context.Context {
	if s.s == nil {
		return s.ctx
	}
	return s.s.Context()
}

// sentKey marks a call's context with the flag sentHandler sets once the
// call's stream was opened on a connection: from then on the server may
// have received it, and it is not sent again.
type sentKey struct{}

type sentFlag struct{ atomic.Bool }

type sentHandler struct{}

func (sentHandler) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (sentHandler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (sentHandler) HandleConn(context.Context, stats.ConnStats) {}
func (sentHandler) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch s.(type) {
	case *stats.OutHeader, *stats.OutPayload:
		if f, ok := ctx.Value(sentKey{}).(*sentFlag); ok {
			f.Store(true)
		}
	}
}
