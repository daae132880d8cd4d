// Package unixrpc serves gRPC services on the controller's Unix socket
// with a transport of its own instead of grpc-go's. Every command is a new
// process on a new connection with one call: grpc-go's server spends more
// on such a connection (a transport with its writer and keepalive
// goroutines, buffers, a handoff to a writer goroutine for every frame)
// than on the call itself. Here a connection is one goroutine that reads
// frames and a goroutine per call that writes its own answer, so a call
// costs one handoff.
//
// It speaks what gRPC over HTTP/2 needs and nothing more: unary and
// streaming methods of services registered as with grpc-go (it is a
// grpc.ServiceRegistrar), a caller's identity from the connection's
// TransportCredentials handshake (peercred's: peer.FromContext in the
// handlers works as under grpc-go), deadlines (grpc-timeout),
// flow control in both directions, cancellation (RST_STREAM, the
// connection's end) and grpc-go's status texts and codes. It does not do
// compression, TLS, interceptors or incoming metadata, none of which the
// socket's callers use; a compressed request is refused.
//
// Any local user may connect, so the server bounds what a connection can
// make it hold, as grpc-go's does and in places more tightly:
//
//   - Flow control is enforced on receipt. A stream's window (1 MiB) comes
//     back as its handler reads, or, for a message larger than that, as far
//     as the message needs; the connection's window (the largest request
//     plus 1 MiB) comes back only as the calls read or their unread bytes
//     are dropped. A peer that sends beyond either loses the connection
//     (GOAWAY FLOW_CONTROL_ERROR). A connection thus holds at most its
//     window of unread request bytes, 17 MiB for the controller's 16 MiB
//     requests, whatever its peer sends.
//
//   - Every message's length prefix is checked against MaxRecvMsgSize as
//     soon as it arrives, not only the first: the call ends with
//     ResourceExhausted and what follows is dropped.
//
//   - At most 100 calls run on a connection at once
//     (MaxConcurrentStreams, advertised in SETTINGS and enforced with
//     REFUSED_STREAM), and a uid holds at most 64 connections
//     (MaxConnsPerUID, the uid from the handshake's SO_PEERCRED); one more
//     is closed at once with a GOAWAY (ENHANCE_YOUR_CALM) that says why.
//     Root's connections and the server's own uid's are not counted: they
//     may stop the server anyway, and must never be locked out of it.
//
//   - A connection must send the HTTP/2 preface within 20 s, and one with
//     no call for 5 minutes is closed (IdleTimeout; GOAWAY, then close),
//     as is one a write to which has waited that long (its peer stopped
//     reading: the write would hold the connection's goroutines for ever).
//
//   - The accept loop backs off on EMFILE, ENFILE and other passing errors
//     and serves on once descriptors are freed, as net/http's does.
//
//   - A uid's connections share one budget of request bytes not yet read
//     (MaxBufferedPerUID, 32 MiB): each starts with a small window (256
//     KiB: half the budget over the 64 connections a uid may hold), and
//     grows it from the other half only while a request needs more, in
//     the order the connections asked; the growth comes back as the
//     request is read. Growth the budget cannot cover waits, and the
//     peer with it (it is granted no credit), rather than the server's
//     memory growing; the waiting touches only that uid's calls.
//
// A uid can so make the server hold at most that budget of requests not
// yet read (the controller's: 32 MiB raised to twice its 16 MiB largest
// request and a stream window, about 34 MiB), however it spreads them
// over connections and streams (without the budget it was 64 × 17 MiB);
// grpc-go's server has no bound per uid.
//
// Why not grpc-go's server again: these defences cost about 250 lines
// here, and the fast path keeps its cost (a window check per DATA frame,
// a timer per connection); grpc-go's server would cost the controller
// the CPU this package was written to save (see above: about a fifth of
// xced's CPU per command).
package unixrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"

	"xce/lib/peercred"
)

// Server serves the registered services on Unix socket listeners.
type Server struct {
	creds   credentials.TransportCredentials
	maxRecv int
	maxSend int
	codec   encoding.CodecV2
	methods map[string]*method // by full name, /service/method

	maxStreams  uint32        // concurrent calls on one connection
	maxPerUID   int           // connections of one uid; 0: no bound
	idleTimeout time.Duration // a connection with no call closes after it; 0: never
	connWindow  int64         // a connection's receive window: what it may hold unread
	// maxBufPerUID bounds the windows of one uid's connections together
	// (0: no bound); baseWindow is what each starts with under it.
	maxBufPerUID int64
	baseWindow   int64
	// exempt says whether a uid's connections are not counted: root's
	// and the server's own, which can stop the server anyway.
	exempt func(uid uint32) bool

	// buffered is the request bytes received and not yet read, every
	// connection's together.
	buffered atomic.Int64

	mu        sync.Mutex
	listeners map[net.Listener]bool
	conns     map[*conn]bool
	perUID    map[uint32]int // connections by the peer's uid
	budgets   map[uint32]*budget
	draining  bool
	drained   *sync.Cond // signalled as conns empties

	// observe, when set, is told every call's method, outcome and time
	// (ObserveCalls).
	observe func(method string, err error, took time.Duration)
	// unaryInt and streamInt, when set, run around every call's
	// handler (UnaryInterceptor, StreamInterceptor).
	unaryInt  grpc.UnaryServerInterceptor
	streamInt grpc.StreamServerInterceptor

	handlers sync.WaitGroup // the calls' handlers running
	workers  *workers       // the goroutines connections and calls run on
}

type method struct {
	impl   any
	unary  grpc.MethodHandler
	stream *grpc.StreamDesc
}

// An Option tunes NewServer.
type Option func(*Server)

// MaxRecvMsgSize bounds a request message, as grpc.MaxRecvMsgSize does.
func MaxRecvMsgSize(n int) Option { return func(s *Server) { s.maxRecv = n } }

// MaxSendMsgSize bounds a reply message, as grpc.MaxSendMsgSize does.
func MaxSendMsgSize(n int) Option { return func(s *Server) { s.maxSend = n } }

// MaxConcurrentStreams bounds the calls one connection runs at once
// (SETTINGS_MAX_CONCURRENT_STREAMS); one more is refused (REFUSED_STREAM).
func MaxConcurrentStreams(n uint32) Option { return func(s *Server) { s.maxStreams = n } }

// MaxConnsPerUID bounds the connections a uid (its SO_PEERCRED) holds at
// once; one more is closed at once. Root's and the server's own uid are
// not bounded. 0: no bound.
func MaxConnsPerUID(n int) Option { return func(s *Server) { s.maxPerUID = n } }

// IdleTimeout closes a connection that has had no call for d (GOAWAY,
// then close); 0: never.
func IdleTimeout(d time.Duration) Option { return func(s *Server) { s.idleTimeout = d } }

// MaxBufferedPerUID bounds the request bytes a uid's connections
// together can make the server hold (their flow-control windows): a
// request that needs more than is left waits, its peer not granted the
// credit, until the uid's other calls read theirs or end. Root's and the
// server's own uid are not bounded. 0: no bound; a bound below two of a
// connection's windows (twice the largest request and a stream window)
// is raised to that, so that the largest request always fits in time.
func MaxBufferedPerUID(n int64) Option { return func(s *Server) { s.maxBufPerUID = n } }

// ObserveCalls has f told of every call once it has ended: its full
// method name, the error it ended with (nil: OK) and how long it ran, as
// a gRPC server's interceptor would be (metrics).
func ObserveCalls(f func(method string, err error, took time.Duration)) Option {
	return func(s *Server) { s.observe = f }
}

// UnaryInterceptor has i run around every unary call's handler, as
// grpc.UnaryInterceptor does for a grpc-go server: one interceptor, the
// same for both kinds of server.
func UnaryInterceptor(i grpc.UnaryServerInterceptor) Option {
	return func(s *Server) { s.unaryInt = i }
}

// StreamInterceptor has i run around every streaming call's handler, as
// grpc.StreamInterceptor does for a grpc-go server.
func StreamInterceptor(i grpc.StreamServerInterceptor) Option {
	return func(s *Server) { s.streamInt = i }
}

// The defaults. A command holds one connection for one call; a few
// dozen at once from one user is a busy script, not 64. 32 MiB of
// requests in flight for one user is two of the controller's largest
// (16 MiB) at once: enough for any real command, and it keeps what one
// user can make xced hold within issue 27's 50 MB of idle.
const (
	DefaultMaxConcurrentStreams = 100
	DefaultMaxConnsPerUID       = 64
	DefaultIdleTimeout          = 5 * time.Minute
	DefaultMaxBufferedPerUID    = 32 << 20
)

// NewServer returns a server whose connections are identified by creds'
// ServerHandshake (peercred.Credentials on a Unix socket).
func NewServer(creds credentials.TransportCredentials, opts ...Option) *Server {
	euid := uint32(os.Geteuid())
	s := &Server{
		creds:        creds,
		maxRecv:      4 << 20, // grpc-go's defaults
		maxSend:      1<<31 - 1,
		codec:        encoding.GetCodecV2("proto"),
		methods:      map[string]*method{},
		maxStreams:   DefaultMaxConcurrentStreams,
		maxPerUID:    DefaultMaxConnsPerUID,
		idleTimeout:  DefaultIdleTimeout,
		exempt:       func(uid uint32) bool { return uid == 0 || uid == euid },
		listeners:    map[net.Listener]bool{},
		conns:        map[*conn]bool{},
		perUID:       map[uint32]int{},
		budgets:      map[uint32]*budget{},
		maxBufPerUID: DefaultMaxBufferedPerUID,
		workers:      newWorkers(max(8, 4*runtime.GOMAXPROCS(0))),
	}
	s.drained = sync.NewCond(&s.mu)
	for _, o := range opts {
		o(s)
	}
	// Room for the largest message and a stream window besides, and no
	// more: the connection's window comes back only as the calls read.
	s.connWindow = min(int64(streamWindow)+int64(max(s.maxRecv, 0))+5, maxWindow)
	if s.maxBufPerUID > 0 {
		// Half the budget for the first windows of as many connections
		// as a uid may hold, half for the growth of large requests.
		s.maxBufPerUID = max(s.maxBufPerUID, 2*s.connWindow)
		s.baseWindow = min(max(65535, s.maxBufPerUID/(2*int64(s.budgetConns()))), s.connWindow)
	}
	return s
}

// budgetConns is how many connections' first windows a uid's budget sets
// aside: as many as the uid may hold, or the default bound where there is
// none (a uid with more then has more).
func (s *Server) budgetConns() int {
	if s.maxPerUID > 0 {
		return s.maxPerUID
	}
	return DefaultMaxConnsPerUID
}

// RegisterService registers a service and its implementation, as
// grpc.Server's does; it must be called before Serve.
func (s *Server) RegisterService(sd *grpc.ServiceDesc, impl any) {
	for i := range sd.Methods {
		m := &sd.Methods[i]
		s.methods["/"+sd.ServiceName+"/"+m.MethodName] = &method{impl: impl, unary: m.Handler}
	}
	for i := range sd.Streams {
		d := &sd.Streams[i]
		s.methods["/"+sd.ServiceName+"/"+d.StreamName] = &method{impl: impl, stream: d}
	}
}

// Serve accepts connections on l until l fails or the server stops; as
// grpc-go's, it returns nil after Stop or GracefulStop.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		l.Close()
		return nil
	}
	s.listeners[l] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			stopped := s.draining
			s.mu.Unlock()
			if stopped {
				return nil
			}
			if temporary(err) {
				// Out of descriptors, say: back off as net/http does
				// and serve on once some are closed.
				if delay == 0 {
					slog.Warn("unixrpc: accept failed; retrying", "addr", l.Addr(), "err", err)
				}
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("serve %s: %w", l.Addr(), err)
		}
		delay = 0
		s.workers.run(func() { s.serveConn(nc) })
	}
}

// temporary says whether an accept error passes: out of descriptors or
// memory, a connection aborted before it was accepted, a timeout.
func temporary(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Stop closes the listeners and every connection at once: calls still
// running see their contexts cancelled.
func (s *Server) Stop() {
	s.mu.Lock()
	s.draining = true
	for l := range s.listeners {
		l.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close(errServerStopped)
	}
	s.waitConns()
	s.workers.stop()
}

// GracefulStop closes the listeners, tells every connection to take no
// new call (GOAWAY) and returns when the calls running have ended, those
// whose client went away too: the caller may close what they use.
func (s *Server) GracefulStop() {
	s.mu.Lock()
	s.draining = true
	for l := range s.listeners {
		l.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.drain()
	}
	s.waitConns()
	s.handlers.Wait()
	s.workers.stop()
}

func (s *Server) waitConns() {
	s.mu.Lock()
	for len(s.conns) > 0 {
		s.drained.Wait()
	}
	s.mu.Unlock()
}

var errServerStopped = errors.New("the server stopped")

func (s *Server) serveConn(nc net.Conn) {
	nc, auth, err := s.creds.ServerHandshake(nc)
	if err != nil {
		slog.Debug("unixrpc: handshake refused", "err", err)
		if nc != nil {
			nc.Close()
		}
		return
	}
	uid, bounded := uint32(0), false
	if pi, ok := auth.(peercred.Info); ok && pi.OK && !s.exempt(pi.UID) {
		uid, bounded = pi.UID, true
	}
	counted := bounded && s.maxPerUID > 0
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		nc.Close()
		return
	}
	if counted && s.perUID[uid] >= s.maxPerUID {
		s.mu.Unlock()
		refuse(nc, fmt.Sprintf("too many connections from uid %d (at most %d)", uid, s.maxPerUID))
		return
	}
	if counted {
		s.perUID[uid]++
	}
	var b *budget
	if bounded && s.maxBufPerUID > 0 {
		if b = s.budgets[uid]; b == nil {
			b = &budget{limit: s.maxBufPerUID - s.baseWindow*int64(s.budgetConns())}
			s.budgets[uid] = b
		}
		b.conns++
	}
	c := newConn(s, nc, auth, b)
	s.conns[c] = true
	s.mu.Unlock()
	c.serve()
	s.mu.Lock()
	delete(s.conns, c)
	if counted {
		if s.perUID[uid]--; s.perUID[uid] == 0 {
			delete(s.perUID, uid)
		}
	}
	if b != nil {
		if b.conns--; b.conns == 0 {
			delete(s.budgets, uid)
		}
	}
	s.drained.Broadcast()
	s.mu.Unlock()
}

// lookup is the method of a full name, or the status grpc-go answers an
// unknown one with.
func (s *Server) lookup(name string) (*method, *status.Status) {
	if m := s.methods[name]; m != nil {
		return m, nil
	}
	service, meth := splitMethod(name)
	if service == "" {
		return nil, status.Newf(codes.Unimplemented, "malformed method name: %q", name)
	}
	for full := range s.methods {
		if sv, _ := splitMethod(full); sv == service {
			return nil, status.Newf(codes.Unimplemented, "unknown method %v for service %v", meth, service)
		}
	}
	return nil, status.Newf(codes.Unimplemented, "unknown service %v", service)
}

func splitMethod(name string) (service, meth string) {
	if len(name) < 2 || name[0] != '/' {
		return "", ""
	}
	for i := len(name) - 1; i > 0; i-- {
		if name[i] == '/' {
			return name[1:i], name[i+1:]
		}
	}
	return "", ""
}

// statusOf is a handler's error as the status it ends the call with,
// by grpc-go's rules: a status error as it is, a context's error as its
// code, anything else Unknown with its text.
func statusOf(err error) *status.Status {
	if st, ok := status.FromError(err); ok {
		return st
	}
	return status.FromContextError(err)
}

// background is the root of the calls' contexts.
var background = context.Background()
