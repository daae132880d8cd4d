package replica

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc/credentials"
)

// Mux shares a candidate's TCP port between gRPC (workers, users'
// commands) and raft (the other candidates). Every connection first
// passes the cluster handshake (the server credentials given); the role
// its peer proved then sends it to raft or to gRPC, whose server takes
// the connection as already authenticated (Credentials).
type Mux struct {
	ln        net.Listener
	handshake credentials.TransportCredentials
	isReplica func(credentials.AuthInfo) bool
	dial      func(ctx context.Context, addr string) (net.Conn, error)

	raftConns chan net.Conn
	done      chan struct{}
	closeOnce sync.Once

	mu   sync.Mutex
	grpc *chanListener // the gRPC server's listener now (servers change with leadership)
}

// NewMux serves ln. dial opens an authenticated connection to another
// candidate's port as a replica (raft's outgoing connections). With no
// handshake (a Unix socket, whose gRPC server reads the peer's
// credentials itself) every connection goes to gRPC as it is: the mux
// only lets the servers behind the listener change.
func NewMux(ln net.Listener, handshake credentials.TransportCredentials, isReplica func(credentials.AuthInfo) bool, dial func(ctx context.Context, addr string) (net.Conn, error)) *Mux {
	m := &Mux{ln: ln, handshake: handshake, isReplica: isReplica, dial: dial, raftConns: make(chan net.Conn), done: make(chan struct{})}
	go m.serve()
	return m
}

func (m *Mux) serve() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			select {
			case <-m.done:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			slog.Error("candidate port", "err", err)
			return
		}
		go m.route(c)
	}
}

func (m *Mux) route(raw net.Conn) {
	if m.handshake == nil {
		m.toGRPC(raw)
		return
	}
	conn, info, err := m.handshake.ServerHandshake(raw)
	if err != nil {
		raw.Close()
		return
	}
	if m.isReplica(info) {
		select {
		case m.raftConns <- conn:
		case <-m.done:
			conn.Close()
		}
		return
	}
	m.toGRPC(&authedConn{Conn: conn, info: info})
}

// toGRPC hands a connection to the current gRPC listener.
func (m *Mux) toGRPC(conn net.Conn) {
	m.mu.Lock()
	l := m.grpc
	m.mu.Unlock()
	if l == nil || !l.put(conn) {
		conn.Close()
	}
}

// Listener returns a new listener for a gRPC server that takes the
// port's non-replica connections from now on (the previous listener gets
// no more). Serve it with grpc.Creds(Credentials()).
func (m *Mux) Listener() net.Listener {
	l := &chanListener{conns: make(chan net.Conn), done: make(chan struct{}), addr: m.ln.Addr()}
	m.mu.Lock()
	m.grpc = l
	m.mu.Unlock()
	return l
}

// Raft is the stream layer raft's transport uses.
func (m *Mux) Raft() raft.StreamLayer { return (*raftLayer)(m) }

// Close stops the port.
func (m *Mux) Close() error {
	m.closeOnce.Do(func() { close(m.done) })
	return m.ln.Close()
}

type raftLayer Mux

func (r *raftLayer) Accept() (net.Conn, error) {
	select {
	case c := <-r.raftConns:
		return c, nil
	case <-r.done:
		return nil, net.ErrClosed
	}
}

func (r *raftLayer) Close() error   { return (*Mux)(r).Close() }
func (r *raftLayer) Addr() net.Addr { return r.ln.Addr() }

func (r *raftLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return r.dial(ctx, string(address))
}

// chanListener is a net.Listener fed by the mux.
type chanListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	addr  net.Addr
}

func (l *chanListener) put(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// authedConn is a connection that passed the handshake, with its peer.
type authedConn struct {
	net.Conn
	info credentials.AuthInfo
}

// Credentials are the gRPC server credentials for the mux's listeners:
// the handshake is done, and the peer it established is passed on.
func Credentials() credentials.TransportCredentials { return passThrough{} }

type passThrough struct{}

func (passThrough) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	ac, ok := c.(*authedConn)
	if !ok {
		return nil, nil, errors.New("connection did not pass the cluster handshake")
	}
	return ac.Conn, ac.info, nil
}

func (passThrough) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("server-side credentials")
}

func (passThrough) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls"}
}
func (p passThrough) Clone() credentials.TransportCredentials { return p }
func (passThrough) OverrideServerName(string) error           { return nil }
