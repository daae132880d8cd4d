package clusterauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"google.golang.org/grpc/credentials"
)

// Mux shares one port between a gRPC server and another protocol (the
// controllers' replication) by the role each peer proved: it accepts on
// a listener, runs the server credentials' handshake on every connection,
// and hands those of the roles side picks to Side, the others to Main.
// A gRPC server serves Main with grpc.Creds(Handshaken()), so that it
// does not handshake again and its handlers see the AuthInfo.
type Mux struct {
	ln         net.Listener
	creds      credentials.TransportCredentials
	side       func(Role) bool
	main, rest *muxListener
}

// NewMux splits ln's connections after creds' handshake (ServerCredentials):
// the roles for which side is true go to Side, the others to Main. Serve
// runs it.
func NewMux(ln net.Listener, creds credentials.TransportCredentials, side func(Role) bool) *Mux {
	return &Mux{ln: ln, creds: creds, side: side, main: newMuxListener(ln.Addr()), rest: newMuxListener(ln.Addr())}
}

// Main is the listener of the peers that are not Side's.
func (m *Mux) Main() net.Listener { return m.main }

// Side is the listener of the side roles' peers; AuthInfoOf tells each
// connection's peer.
func (m *Mux) Side() net.Listener { return m.rest }

// Serve accepts until the listener is closed (Close), then closes Main
// and Side and returns the accept error. Each handshake runs on its own
// goroutine, bounded by the credentials' handshake timeout.
func (m *Mux) Serve() error {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			m.main.Close()
			m.rest.Close()
			return err
		}
		go func() {
			conn, ai, err := m.creds.ServerHandshake(c)
			if err != nil {
				return // the credentials logged it and closed the connection
			}
			a, ok := ai.(AuthInfo)
			if !ok {
				conn.Close()
				return
			}
			to := m.main
			if m.side(a.Role) {
				to = m.rest
			}
			to.put(&authedConn{Conn: conn, ai: a})
		}()
	}
}

// Close closes the listener; Serve then closes Main and Side.
func (m *Mux) Close() error { return m.ln.Close() }

// authedConn is a connection whose handshake is done, with its peer.
type authedConn struct {
	net.Conn
	ai AuthInfo
}

// AuthInfoOf is the peer of a connection Mux handed out.
func AuthInfoOf(c net.Conn) (AuthInfo, bool) {
	ac, ok := c.(*authedConn)
	if !ok {
		return AuthInfo{}, false
	}
	return ac.ai, true
}

type muxListener struct {
	addr net.Addr
	ch   chan net.Conn
	once sync.Once
	done chan struct{}
}

func newMuxListener(addr net.Addr) *muxListener {
	return &muxListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *muxListener) put(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *muxListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops this side's accepts; the other side and the port go on.
func (l *muxListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *muxListener) Addr() net.Addr { return l.addr }

// Handshaken are the credentials of a gRPC server on Mux.Main: the
// connection is already authenticated, and its AuthInfo is passed on.
func Handshaken() credentials.TransportCredentials { return handshaken{} }

type handshaken struct{}

func (handshaken) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	ac, ok := c.(*authedConn)
	if !ok {
		c.Close()
		return nil, nil, errors.New("clusterauth: a connection that did not come through Mux")
	}
	return ac, ac.ai, nil
}

func (handshaken) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("clusterauth: Handshaken credentials used by a client")
}

func (handshaken) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: authType}
}
func (h handshaken) Clone() credentials.TransportCredentials { return h }
func (handshaken) OverrideServerName(string) error           { return nil }

// Dial opens a TCP connection to addr and runs creds' client handshake on
// it (ClientCredentialsRole(tok, RoleReplica), say): a connection of the
// side protocol to a Mux.
func Dial(ctx context.Context, addr string, creds credentials.TransportCredentials) (net.Conn, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("clusterauth: dial %s: %w", addr, err)
	}
	conn, _, err := creds.ClientHandshake(ctx, addr, raw)
	if err != nil {
		raw.Close()
		return nil, err
	}
	return conn, nil
}
