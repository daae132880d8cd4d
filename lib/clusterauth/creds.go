package clusterauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"xce/lib/clusterauth/handshake"
)

// The proof, after the TLS 1.3 handshake and before HTTP/2. Both sides
// derive ek, 32 bytes of the TLS session's exporter under exporterLabel.
//
//	client -> server: version, role, HMAC-SHA256(token, "xce-cluster/1 " role-name || ek)
//	server -> client: version, statusOK, HMAC-SHA256(token, "xce-cluster/1 controller" || ek)
//	              or: version, statusRefused (or statusUnsupported), then close
//
// for the worker and replica roles. A user's command holds no token: the
// local xced or `xced worker` mints its proofs (MintUser) for the uid and
// gid of its socket's peer, and the frame carries them:
//
//	client -> server: version, 'U', uid (4 bytes BE), gid (4 bytes BE),
//	                  HMAC-SHA256(token, "xce-cluster/1 user" || uid || gid || ek)
//	server -> client: version, statusOK,
//	                  HMAC-SHA256(token, "xce-cluster/1 controller-to-user" || uid || gid || ek)
//
// The controller's answer to a user names the uid, so a user who has
// proofs minted for his own uid cannot pose as the controller to another.
//
// The server answers with its proof only after checking the client's. A
// relay between two TLS sessions sees two different ek, so it can neither
// replay nor forward a proof.
const (
	macLen = handshake.MACLen

	version1 = handshake.Version1

	statusOK          = handshake.StatusOK
	statusRefused     = handshake.StatusRefused
	statusUnsupported = handshake.StatusUnsupported

	// defaultHandshakeTimeout bounds TLS and the proof: a peer that says
	// nothing cannot hold a server's goroutine and descriptor longer.
	defaultHandshakeTimeout = 10 * time.Second

	authType = "xce-cluster"
)

// Role is the kind of peer a client says it is, in the proof's frame, so
// that workers, controller candidates and users' commands share the port.
type Role byte

const (
	// RoleWorker is an execution host's worker.
	RoleWorker Role = 'W'
	// RoleController is the server side, as the client's AuthInfo names it.
	RoleController Role = 'C'
	// RoleReplica is a controller candidate dialing another (replication):
	// the worker's proof under its own name, so neither passes for the other.
	RoleReplica Role = 'R'
	// RoleUser is a user's command, with proofs minted for its uid and gid
	// (MintUser, UserCredentials).
	RoleUser Role = 'U'
)

func (r Role) name() string {
	switch r {
	case RoleWorker:
		return "worker"
	case RoleController:
		return "controller"
	case RoleReplica:
		return "replica"
	case RoleUser:
		return "user"
	case RoleProvisioner:
		return "provisioner"
	}
	return fmt.Sprintf("role %#x", byte(r))
}

// String names the role.
func (r Role) String() string { return r.name() }

// The refusals (lib/clusterauth/handshake's), for errors.Is.
var (
	// ErrRefused: the controller refused this side's cluster token (the
	// token files differ). Retrying does not help; the worker should say
	// so and exit.
	ErrRefused = handshake.ErrRefused
	// ErrUnproven: the server did not prove it holds the cluster token: it
	// has another token, or it is not the controller (a man in the middle).
	ErrUnproven = handshake.ErrUnproven
	// ErrUserRefused: the controller refused a user's proof, minted by the
	// local xced or `xced worker`, whose cluster.token differs.
	ErrUserRefused = handshake.ErrUserRefused
)

// IsRefused says whether err, a handshake's error or the error of an RPC
// that failed because the connection's handshake did, is ErrRefused,
// ErrUnproven or ErrUserRefused: the token does not match, and retrying
// will not help.
func IsRefused(err error) bool { return handshake.IsRefused(err) }

// AuthInfo is a connection's peer as the proof established it: Role is
// the client's role on the server's side, RoleController on the client's.
// UID and GID are a RoleUser peer's, as its proof binds them.
type AuthInfo struct {
	credentials.CommonAuthInfo
	Role     Role
	UID, GID uint32
	State    tls.ConnectionState
}

// AuthType names the credentials.
func (AuthInfo) AuthType() string { return authType }

// PeerIsWorker says whether the RPC's connection proved the cluster token
// as a worker. Handlers of worker RPCs check it, so a server that also
// serves other roles (or other credentials) cannot mistake them.
func PeerIsWorker(ctx context.Context) bool { return peerRole(ctx) == RoleWorker }

// PeerIsReplica says whether the RPC's connection proved the cluster
// token as a controller candidate (RoleReplica).
func PeerIsReplica(ctx context.Context) bool { return peerRole(ctx) == RoleReplica }

// PeerUser is the uid and gid of an RPC's RoleUser peer: a user's command
// over TCP, whose proof the controller checked. ok is false for any
// other peer.
func PeerUser(ctx context.Context) (uid, gid uint32, ok bool) {
	ai, found := peerAuth(ctx)
	if !found || ai.Role != RoleUser {
		return 0, 0, false
	}
	return ai.UID, ai.GID, true
}

func peerAuth(ctx context.Context) (AuthInfo, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return AuthInfo{}, false
	}
	ai, ok := p.AuthInfo.(AuthInfo)
	return ai, ok
}

func peerRole(ctx context.Context) Role {
	ai, ok := peerAuth(ctx)
	if !ok {
		return 0
	}
	return ai.Role
}

// An Option tunes credentials.
type Option func(*options)

type options struct {
	roots     *x509.CertPool
	log       *slog.Logger
	timeout   time.Duration
	onRefused func(error)
	provTok   Token // the server's RoleProvisioner token (provisioner.go)
}

// WithRootCAs (client) verifies the controller's certificate against
// pool and the dialed host name, for a site that configured certificates
// (or copied the controller's cluster.crt to the workers). Without it the
// token proof alone authenticates the controller.
func WithRootCAs(pool *x509.CertPool) Option { return func(o *options) { o.roots = pool } }

// WithLogger (client) logs refusals there; the server's logger is
// ServerCredentials' argument.
func WithLogger(log *slog.Logger) Option { return func(o *options) { o.log = log } }

// WithHandshakeTimeout bounds TLS and the proof (default 10s). The client
// also stops at its context's deadline.
func WithHandshakeTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// OnRefused (client) calls f with the error when the controller refuses
// the token or cannot prove it (IsRefused), as gRPC otherwise only retries.
func OnRefused(f func(error)) Option { return func(o *options) { o.onRefused = f } }

func newOptions(log *slog.Logger, opts []Option) options {
	o := options{log: log, timeout: defaultHandshakeTimeout}
	for _, f := range opts {
		f(&o)
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if o.timeout <= 0 {
		o.timeout = defaultHandshakeTimeout
	}
	return o
}

func proof(tok Token, role Role, ek []byte) []byte {
	m := hmac.New(sha256.New, tok.b[:])
	m.Write([]byte("xce-cluster/1 " + role.name()))
	m.Write(ek)
	return m.Sum(nil)
}

func userMAC(tok Token, label string, uid, gid uint32, ek []byte) []byte {
	m := hmac.New(sha256.New, tok.b[:])
	m.Write([]byte(label))
	m.Write(handshake.UserIDs(uid, gid))
	m.Write(ek)
	return m.Sum(nil)
}

const (
	userLabel             = "xce-cluster/1 user"
	controllerToUserLabel = "xce-cluster/1 controller-to-user"
)

// MintUser is what the local xced or `xced worker` gives a command of
// uid and gid (its socket's peer credentials) for the TLS session whose
// exporter is ek: the proof the command sends the controller, and the
// proof it checks the controller's answer against.
func MintUser(tok Token, uid, gid uint32, ek []byte) (userProof, controllerProof []byte) {
	return userMAC(tok, userLabel, uid, gid, ek), userMAC(tok, controllerToUserLabel, uid, gid, ek)
}

// ServerCredentials are the controller's: TLS 1.3 with cert, then the
// client's proof of tok checked and the controller's given. A refusal is
// logged on log with the peer's address; the handshake (TLS and proof)
// must end within the handshake timeout.
func ServerCredentials(cert tls.Certificate, tok Token, log *slog.Logger, opts ...Option) credentials.TransportCredentials {
	o := newOptions(log, opts)
	return &serverCreds{
		tok: tok,
		o:   o,
		cfg: &tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS13,
			NextProtos:   []string{"h2"},
		},
	}
}

type serverCreds struct {
	tok Token
	o   options
	cfg *tls.Config
}

func (c *serverCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	addr := raw.RemoteAddr().String()
	if c.tok.IsZero() {
		raw.Close()
		return nil, nil, errors.New("clusterauth: server has no cluster token")
	}
	raw.SetDeadline(time.Now().Add(c.o.timeout))
	tc := tls.Server(raw, c.cfg)
	fail := func(stage string, err error) (net.Conn, credentials.AuthInfo, error) {
		// Logged before the peer can see the close.
		if errors.Is(err, os.ErrDeadlineExceeded) {
			c.o.log.Warn("cluster handshake timed out", "peer", addr, "stage", stage)
			err = errors.New("timed out")
		} else {
			c.o.log.Info("cluster handshake failed", "peer", addr, "stage", stage, "err", err)
		}
		tc.Close()
		return nil, nil, fmt.Errorf("clusterauth: %s from %s: %w", stage, addr, err)
	}
	if err := tc.Handshake(); err != nil {
		return fail("TLS handshake", err)
	}
	ek, err := handshake.Exporter(tc)
	if err != nil {
		return fail("TLS exporter", err)
	}
	var hdr [2]byte
	if _, err := io.ReadFull(tc, hdr[:]); err != nil {
		return fail("reading the cluster proof", err)
	}
	role := Role(hdr[1])
	known := role == RoleWorker || role == RoleReplica || role == RoleUser || role == RoleProvisioner && !c.o.provTok.IsZero()
	if hdr[0] != version1 || !known {
		c.o.log.Warn("cluster peer refused: unsupported version or role", "peer", addr, "version", hdr[0], "role", role)
		tc.Write([]byte{version1, statusUnsupported})
		// The rest of the frame is read (up to the deadline), so closing
		// with unread data does not reset the connection before the peer
		// reads the answer.
		io.CopyN(io.Discard, tc, macLen)
		tc.Close()
		return nil, nil, fmt.Errorf("clusterauth: %s: unsupported version %d or role %s", addr, hdr[0], role)
	}
	var uid, gid uint32
	want, answer := proof(c.tok, role, ek), proof(c.tok, RoleController, ek)
	if role == RoleProvisioner {
		// Its own token: the cluster token's holders (every worker)
		// cannot make this proof.
		want, answer = proof(c.o.provTok, role, ek), proof(c.o.provTok, RoleController, ek)
	}
	if role == RoleUser {
		var ids [8]byte
		if _, err := io.ReadFull(tc, ids[:]); err != nil {
			return fail("reading the user's proof", err)
		}
		uid, gid = binary.BigEndian.Uint32(ids[:4]), binary.BigEndian.Uint32(ids[4:])
		want, answer = MintUser(c.tok, uid, gid, ek)
	}
	got := make([]byte, macLen)
	if _, err := io.ReadFull(tc, got); err != nil {
		return fail("reading the cluster proof", err)
	}
	if !hmac.Equal(got, want) {
		if role == RoleUser {
			c.o.log.Warn("bad user proof", "peer", addr, "uid", uid, "gid", gid)
		} else {
			c.o.log.Warn("bad cluster token", "peer", addr, "role", role)
		}
		tc.Write([]byte{version1, statusRefused})
		tc.Close()
		return nil, nil, fmt.Errorf("clusterauth: %s %s: bad cluster token", role, addr)
	}
	if _, err := tc.Write(append([]byte{version1, statusOK}, answer...)); err != nil {
		return fail("answering the cluster proof", err)
	}
	raw.SetDeadline(time.Time{})
	return tc, AuthInfo{
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity},
		Role:           role,
		UID:            uid, GID: gid,
		State: tc.ConnectionState(),
	}, nil
}

func (c *serverCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("clusterauth: server credentials used by a client")
}

func (c *serverCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: authType}
}

func (c *serverCreds) Clone() credentials.TransportCredentials {
	n := *c
	n.cfg = c.cfg.Clone()
	return &n
}

func (c *serverCreds) OverrideServerName(string) error { return nil }

// ClientCredentials are a worker's: TLS 1.3 to the controller (its
// certificate verified only WithRootCAs), then the worker's proof of tok
// given and the controller's checked. A refusal returns an error for
// which IsRefused holds (errors.Is ErrRefused or ErrUnproven) and is
// logged WithLogger.
func ClientCredentials(tok Token, opts ...Option) credentials.TransportCredentials {
	return ClientCredentialsRole(tok, RoleWorker, opts...)
}

// ClientCredentialsRole are ClientCredentials proving tok as role:
// RoleWorker or RoleReplica (a controller candidate dialing another). Their
// ClientHandshake runs on any net.Conn, so a caller that multiplexes the
// port by role (ServerCredentials' AuthInfo) can use them without gRPC.
func ClientCredentialsRole(tok Token, role Role, opts ...Option) credentials.TransportCredentials {
	return &clientCreds{tok: tok, role: role, o: newOptions(nil, opts)}
}

// A UserMinter gives a user's command its proofs for the TLS session
// whose exporter is ek (MintUser, done by the local xced or `xced worker`
// for the uid and gid of its socket's peer).
type UserMinter func(ctx context.Context, ek []byte) (uid, gid uint32, userProof, controllerProof []byte, err error)

// UserCredentials are a user's command's: TLS 1.3 to the controller, then
// the proofs mint gives for the session sent and checked (RoleUser). The
// command holds no token. A refusal returns an error for which IsRefused
// holds (ErrUserRefused, ErrUnproven); an error of mint fails the
// handshake with it, and is no refusal.
func UserCredentials(mint func(ctx context.Context, ek []byte) (uid, gid uint32, userProof, controllerProof []byte, err error), opts ...Option) credentials.TransportCredentials {
	return &clientCreds{role: RoleUser, mint: mint, o: newOptions(nil, opts)}
}

type clientCreds struct {
	tok        Token
	role       Role
	mint       UserMinter // RoleUser's
	o          options
	serverName string
}

func (c *clientCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (conn net.Conn, ai credentials.AuthInfo, err error) {
	switch {
	case c.role == RoleUser && c.mint == nil:
		raw.Close()
		return nil, nil, errors.New("clusterauth: user credentials without a minter")
	case c.role != RoleUser && c.tok.IsZero():
		raw.Close()
		return nil, nil, errors.New("clusterauth: client has no cluster token")
	case c.role != RoleUser && c.role != RoleWorker && c.role != RoleReplica && c.role != RoleProvisioner:
		raw.Close()
		return nil, nil, fmt.Errorf("clusterauth: a client cannot prove the %s role", c.role)
	}
	host := authority
	if c.serverName != "" {
		host = c.serverName
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	addr := raw.RemoteAddr().String()
	cfg := handshake.ClientConfig(host, c.o.roots)
	var tc *tls.Conn
	if c.role == RoleUser {
		tc, err = handshake.User(ctx, raw, cfg, c.o.timeout, c.mint)
	} else {
		tc, err = handshake.Client(ctx, raw, cfg, byte(c.role), c.o.timeout, func(_ context.Context, ek []byte) ([]byte, []byte, error, error) {
			return proof(c.tok, c.role, ek), proof(c.tok, RoleController, ek), ErrRefused, nil
		})
	}
	if err != nil {
		if IsRefused(err) {
			msg := "the controller refused the cluster token"
			if errors.Is(err, ErrUserRefused) {
				msg = "the controller refused the user's proof"
			}
			if errors.Is(err, ErrUnproven) {
				msg = "the controller could not prove it holds the cluster token"
			}
			c.o.log.Error(msg, "controller", addr, "err", err)
			if c.o.onRefused != nil {
				c.o.onRefused(err)
			}
		}
		return nil, nil, err
	}
	return tc, AuthInfo{
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity},
		Role:           RoleController,
		State:          tc.ConnectionState(),
	}, nil
}

func (c *clientCreds) ServerHandshake(net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("clusterauth: client credentials used by a server")
}

func (c *clientCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: authType}
}

func (c *clientCreds) Clone() credentials.TransportCredentials {
	n := *c
	return &n
}

// OverrideServerName sets the name the controller's certificate is
// checked against (WithRootCAs) instead of the dialed host.
func (c *clientCreds) OverrideServerName(name string) error {
	c.serverName = name
	return nil
}
