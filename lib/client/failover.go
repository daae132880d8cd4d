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
	"time"

	"xce/lib/api/rpc"
	"xce/lib/lsfenv"
	"xce/lib/rpcstatus"
	"xce/lib/tlsdial"
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

	// candidateDialTimeout bounds a connection to a candidate, TCP, TLS
	// and the proof: one that accepts but does not answer (a hung host)
	// costs that long, then the next is tried.
	candidateDialTimeout = 2 * time.Second
)

// failover is the connection of a client with controller candidates: it
// sends each call to the local socket while it is the leader, else over
// TCP to the leader, found by following the standbys' NotLeader answers,
// with the user's proof that the local socket (a candidate's or a
// worker's) mints. A call is sent again only when no leader can have
// acted on it: a NotLeader answer, or a connection that failed before the
// call was sent.
type failover struct {
	local     *h2Redialer
	localSock string
	cands     []string
	timeout   time.Duration

	mu       sync.Mutex
	conns    map[string]*h2Redialer
	cur      string // where the last call went
	localOff bool   // the local socket is a worker's, serving Credential only
	next     int    // the next candidate to try
	mintErr  error  // the last minting's failure
	closed   bool
}

func newFailover(localConn *h2Redialer, sock string, cands []string, timeout time.Duration) *failover {
	return &failover{local: localConn, localSock: sock, cands: cands, timeout: timeout, conns: map[string]*h2Redialer{}}
}

// mint asks the local socket for the user's proofs of one TLS session.
func (f *failover) mint(ctx context.Context, ek []byte) (uid, gid uint32, up, cp []byte, err error) {
	r := &rpc.CredentialReply{}
	err = f.local.Invoke(ctx, controllerService+"Credential", &rpc.CredentialRequest{Exporter: ek}, r)
	f.mu.Lock()
	f.mintErr = err
	f.mu.Unlock()
	if err != nil {
		return 0, 0, nil, nil, fmt.Errorf("no user credential from %s: %w", f.localSock, err)
	}
	return r.GetUid(), r.GetGid(), r.GetUserProof(), r.GetControllerProof(), nil
}

// dialCandidate connects to a candidate: TCP, then TLS and the user's
// proof, run by the xce-dial helper (lib/tlsdial), then HTTP/2 over the
// helper's relay. A failure is the connection's Unavailable status, as
// grpc-go words it, so that the call goes to the next candidate.
func (f *failover) dialCandidate(ctx context.Context, target string) *h2Conn {
	ctx, cancel := context.WithTimeout(ctx, candidateDialTimeout)
	defer cancel()
	// A helper that cannot be run fails the call at once: no candidate
	// can be reached, and waiting will not change that.
	start := startDialer
	if start == nil {
		helper, err := tlsdial.Helper()
		if err != nil {
			return endedH2(rpcstatus.New(rpcstatus.FailedPrecondition, err.Error()))
		}
		start = tlsdial.Exec(helper)
	}
	nc, err := tlsdial.Dial(ctx, start, target, candidateDialTimeout, f.mint)
	if err != nil {
		var de *tlsdial.Error
		errors.As(err, &de)
		switch {
		case de != nil && de.Stage == tlsdial.StageStart:
			return endedH2(rpcstatus.New(rpcstatus.FailedPrecondition, err.Error()))
		case de != nil && de.Stage == tlsdial.StageDial:
			return endedH2(rpcstatus.New(rpcstatus.Unavailable, "connection error: desc = transport: Error while dialing: "+err.Error()))
		}
		return endedH2(rpcstatus.New(rpcstatus.Unavailable, "connection error: desc = transport: authentication handshake failed: "+err.Error()))
	}
	return newH2(nc, "https", target)
}

// startDialer, when set, starts the helper in place of running xce-dial
// (the package's tests run its code in-process).
var startDialer tlsdial.Starter

// Close closes every connection.
func (f *failover) Close() error {
	f.mu.Lock()
	f.closed = true
	conns := f.conns
	f.conns = map[string]*h2Redialer{}
	f.mu.Unlock()
	for _, r := range conns {
		r.Close()
	}
	return f.local.Close()
}

func (f *failover) conn(target string) *h2Redialer {
	if target == local {
		return f.local
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.conns[target]
	if r == nil {
		r = &h2Redialer{dial: func(ctx context.Context) *h2Conn { return f.dialCandidate(ctx, target) }}
		if f.closed {
			r.closed = true
		} else {
			f.conns[target] = r
		}
	}
	return r
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
	if leader, ok := rpcstatus.LeaderOf(err); ok {
		if leader != "" && leader != target {
			return leader, false, true
		}
		return f.nextLocked(), target != local, true
	}
	code := rpcstatus.CodeOf(err)
	if target == local && code == rpcstatus.Unimplemented {
		// A worker's socket: it mints, the controllers serve.
		f.localOff = true
		return f.nextLocked(), false, true
	}
	if code != rpcstatus.Unavailable || sent || tlsdial.IsRefused(err) {
		return "", false, false
	}
	if f.mintErr != nil {
		switch rpcstatus.CodeOf(f.mintErr) {
		case rpcstatus.Unimplemented, rpcstatus.PermissionDenied, rpcstatus.InvalidArgument, rpcstatus.Unauthenticated:
			return "", false, false // the local socket will not mint: no candidate can be reached
		}
	}
	return f.nextLocked(), true, true
}

// do runs call, and again where after says, until it succeeds, fails for
// good, ctx ends or the failover timeout passes. call says whether the
// call reached a connection (from then on a leader may have acted on it).
func (f *failover) do(ctx context.Context, call func(ctx context.Context, r *h2Redialer) (sent bool, err error)) error {
	target := f.current()
	var deadline time.Time
	wait := minRetryWait
	hops := 0
	for {
		sent, err := call(ctx, f.conn(target))
		if err == nil || errors.Is(err, io.EOF) {
			f.mu.Lock()
			f.cur = target
			f.mu.Unlock()
			return err
		}
		next, backoff, retry := f.after(target, err, sent)
		if !retry && sent && rpcstatus.CodeOf(err) == rpcstatus.Unavailable {
			// Not "no controller answered": one had the call, and its
			// outcome is unknown (a leader that handed its office on, or
			// died, while it answered).
			where := target
			if where == local {
				where = f.localSock
			}
			return rpcstatus.Errorf(rpcstatus.Aborted, "the controller at %s had the request but did not answer it (%s); it may or may not have been carried out: check (bjobs) before sending it again", where, rpcstatus.MessageOf(err))
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
func (f *failover) Invoke(ctx context.Context, method string, in, out vtMessage) error {
	return f.do(ctx, func(ctx context.Context, r *h2Redialer) (bool, error) {
		s, err := r.NewStream(ctx, method)
		if err != nil {
			return false, err
		}
		return true, s.unary(in, out)
	})
}

// ServerStream opens a server-streaming call (Query, Watch, Accounting)
// at its first RecvMsg, so that a standby's NotLeader there sends it to
// the leader.
func (f *failover) ServerStream(ctx context.Context, method string, in vtMessage) (recvStream, error) {
	return &failoverStream{f: f, ctx: ctx, method: method, req: in}, nil
}

// failoverStream is a server-streaming call, opened on the first RecvMsg.
type failoverStream struct {
	f      *failover
	ctx    context.Context
	method string
	req    vtMessage

	s   *h2Stream // once a message (or the end) came
	err error     // the opening's failure, for ever after
}

func (s *failoverStream) RecvMsg(m vtMessage) error {
	if s.s != nil {
		return s.s.RecvMsg(m)
	}
	if s.err != nil {
		return s.err
	}
	s.err = s.f.do(s.ctx, func(ctx context.Context, r *h2Redialer) (bool, error) {
		cs, err := r.conn(ctx).serverStream(ctx, s.method, s.req)
		if err != nil {
			return false, err
		}
		err = cs.RecvMsg(m)
		if err == nil || errors.Is(err, io.EOF) {
			s.s = cs
		}
		// Every server stream (Query, Watch, Accounting) only reads:
		// until its first message came, sending it again elsewhere
		// cannot do anything twice, so a connection lost before then
		// (a leader handing over) is retried like one never reached.
		return s.s != nil, err
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
