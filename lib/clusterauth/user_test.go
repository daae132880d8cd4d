package clusterauth

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"xce/lib/clusterauth/handshake"
)

// peerSeen is what a handler saw of its peer.
type peerSeen struct {
	worker, replica, user bool
	uid, gid              uint32
}

// startRoleServer is startServer recording every role's view of the peer.
func startRoleServer(t *testing.T, tok Token) (addr string, log *logBuf, seen func() []peerSeen) {
	t.Helper()
	log = &logBuf{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var all []peerSeen
	gs := grpc.NewServer(
		grpc.Creds(ServerCredentials(mustCert(t), tok, log.logger())),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			uid, gid, user := PeerUser(ctx)
			mu.Lock()
			all = append(all, peerSeen{PeerIsWorker(ctx), PeerIsReplica(ctx), user, uid, gid})
			mu.Unlock()
			return h(ctx, req)
		}))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	return lis.Addr().String(), log, func() []peerSeen {
		mu.Lock()
		defer mu.Unlock()
		return append([]peerSeen(nil), all...)
	}
}

// minter mints for uid and gid with tok, as the local xced would.
func minter(tok Token, uid, gid uint32) UserMinter {
	return func(_ context.Context, ek []byte) (uint32, uint32, []byte, []byte, error) {
		up, cp := MintUser(tok, uid, gid, ek)
		return uid, gid, up, cp, nil
	}
}

func TestEachRoleIsSeenAsItself(t *testing.T) {
	tok := mustToken(t)
	addr, _, seen := startRoleServer(t, tok)
	for _, tc := range []struct {
		name  string
		creds func() error
		want  peerSeen
	}{
		{"worker", func() error { return check(t, addr, ClientCredentials(tok)) }, peerSeen{worker: true}},
		{"worker by role", func() error { return check(t, addr, ClientCredentialsRole(tok, RoleWorker)) }, peerSeen{worker: true}},
		{"replica", func() error { return check(t, addr, ClientCredentialsRole(tok, RoleReplica)) }, peerSeen{replica: true}},
		{"user", func() error { return check(t, addr, UserCredentials(minter(tok, 1234, 5678))) }, peerSeen{user: true, uid: 1234, gid: 5678}},
		{"root user", func() error { return check(t, addr, UserCredentials(minter(tok, 0, 0))) }, peerSeen{user: true}},
	} {
		before := len(seen())
		if err := tc.creds(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		s := seen()
		if len(s) != before+1 || s[before] != tc.want {
			t.Errorf("%s: the handler saw %+v, want %+v", tc.name, s[before:], tc.want)
		}
	}
	if _, _, ok := PeerUser(context.Background()); ok || PeerIsReplica(context.Background()) {
		t.Error("PeerUser or PeerIsReplica without a peer")
	}
}

func TestClientCannotClaimOtherRoles(t *testing.T) {
	tok := mustToken(t)
	for _, role := range []Role{RoleController, RoleUser, 'X'} {
		a, b := net.Pipe()
		_, _, err := ClientCredentialsRole(tok, role).ClientHandshake(context.Background(), "x:1", a)
		b.Close()
		if err == nil {
			t.Errorf("ClientCredentialsRole(%s) handshook", role)
		}
	}
	a, b := net.Pipe()
	defer b.Close()
	if _, _, err := UserCredentials(nil).ClientHandshake(context.Background(), "x:1", a); err == nil {
		t.Error("UserCredentials(nil) handshook")
	}
}

func userFrame(uid, gid uint32, mac []byte) []byte {
	return append(append([]byte{version1, byte(RoleUser)}, handshake.UserIDs(uid, gid)...), mac...)
}

// The server checks each role's proof: a proof for one role, uid, gid,
// token or session does not pass for another.
func TestServerChecksEachRolesProof(t *testing.T) {
	tok, wrong := mustToken(t), mustToken(t)
	addr, log, seen := startRoleServer(t, tok)
	up := func(tk Token, uid, gid uint32, ek []byte) []byte { p, _ := MintUser(tk, uid, gid, ek); return p }
	cpOf := func(tk Token, uid, gid uint32, ek []byte) []byte { _, c := MintUser(tk, uid, gid, ek); return c }
	for _, tc := range []struct {
		name   string
		frame  func(ek []byte) []byte
		want   byte
		answer func(ek []byte) []byte // the proof after statusOK
	}{
		{"replica", func(ek []byte) []byte { return frameOf(RoleReplica, proof(tok, RoleReplica, ek)) }, statusOK,
			func(ek []byte) []byte { return proof(tok, RoleController, ek) }},
		{"worker's proof as a replica", func(ek []byte) []byte { return frameOf(RoleReplica, proof(tok, RoleWorker, ek)) }, statusRefused, nil},
		{"replica's proof as a worker", func(ek []byte) []byte { return frameOf(RoleWorker, proof(tok, RoleReplica, ek)) }, statusRefused, nil},
		{"replica, wrong token", func(ek []byte) []byte { return frameOf(RoleReplica, proof(wrong, RoleReplica, ek)) }, statusRefused, nil},
		{"user", func(ek []byte) []byte { return userFrame(1000, 100, up(tok, 1000, 100, ek)) }, statusOK,
			func(ek []byte) []byte { return cpOf(tok, 1000, 100, ek) }},
		{"user claims uid 0 with uid 1000's proof", func(ek []byte) []byte { return userFrame(0, 100, up(tok, 1000, 100, ek)) }, statusRefused, nil},
		{"user claims gid 0 with gid 100's proof", func(ek []byte) []byte { return userFrame(1000, 0, up(tok, 1000, 100, ek)) }, statusRefused, nil},
		{"user's proof of another session", func(ek []byte) []byte { return userFrame(1000, 100, up(tok, 1000, 100, make([]byte, handshake.EKLen))) }, statusRefused, nil},
		{"user, wrong token", func(ek []byte) []byte { return userFrame(1000, 100, up(wrong, 1000, 100, ek)) }, statusRefused, nil},
		{"controller's answer as the user's proof", func(ek []byte) []byte { return userFrame(1000, 100, cpOf(tok, 1000, 100, ek)) }, statusRefused, nil},
		{"worker's proof as a user's", func(ek []byte) []byte { return userFrame(1000, 100, proof(tok, RoleWorker, ek)) }, statusRefused, nil},
		{"user's proof as a worker's", func(ek []byte) []byte { return frameOf(RoleWorker, up(tok, 1000, 100, ek)) }, statusRefused, nil},
		{"user, zero mac", func(ek []byte) []byte { return userFrame(1000, 100, make([]byte, macLen)) }, statusRefused, nil},
	} {
		var ek []byte
		ans := rawClient(t, addr, func(e []byte) []byte { ek = e; return tc.frame(e) })
		if len(ans) < 2 || ans[0] != version1 || ans[1] != tc.want {
			t.Errorf("%s: answer %q, want status %q", tc.name, ans, tc.want)
			continue
		}
		if tc.want != statusOK {
			if len(ans) != 2 {
				t.Errorf("%s: a refusal carried %d more bytes", tc.name, len(ans)-2)
			}
			continue
		}
		if string(ans[2:]) != string(tc.answer(ek)) {
			t.Errorf("%s: the server's proof is not the expected one", tc.name)
		}
	}
	waitLog(t, log, "bad user proof")
	waitLog(t, log, "bad cluster token")
	if s := seen(); len(s) != 0 {
		t.Errorf("handlers ran for raw clients: %+v", s)
	}
}

// fakeUserController completes TLS, reads a user's frame and answers it
// with answer(ek, uid, gid).
func fakeUserController(t *testing.T, answer func(ek []byte, uid, gid uint32) []byte) string {
	t.Helper()
	lis, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{mustCert(t)}, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				tc := c.(*tls.Conn)
				if tc.Handshake() != nil {
					return
				}
				ek, _ := handshake.Exporter(tc)
				buf := make([]byte, 2+8+macLen)
				if _, err := io.ReadFull(tc, buf); err != nil {
					return
				}
				uid, gid := binary.BigEndian.Uint32(buf[2:6]), binary.BigEndian.Uint32(buf[6:10])
				tc.Write(answer(ek, uid, gid))
				io.Copy(io.Discard, tc)
			}()
		}
	}()
	return lis.Addr().String()
}

// The user's command checks the controller's answer against the proof its
// minter gave: a user who has proofs minted for his own uid (he can, on
// any host) cannot pose as the controller to another user.
func TestUserChecksTheControllersProof(t *testing.T) {
	tok, wrong := mustToken(t), mustToken(t)
	const victim, attacker = 1000, 2000
	for _, tc := range []struct {
		name   string
		answer func(ek []byte, uid, gid uint32) []byte
		want   error
	}{
		{"right", func(ek []byte, uid, gid uint32) []byte {
			_, cp := MintUser(tok, uid, gid, ek)
			return frameOf(statusOK, cp)
		}, nil},
		{"the attacker's own controller proof", func(ek []byte, uid, gid uint32) []byte {
			_, cp := MintUser(tok, attacker, gid, ek)
			return frameOf(statusOK, cp)
		}, ErrUnproven},
		{"controller proof of another session", func(ek []byte, uid, gid uint32) []byte {
			_, cp := MintUser(tok, uid, gid, make([]byte, handshake.EKLen))
			return frameOf(statusOK, cp)
		}, ErrUnproven},
		{"the worker's controller proof", func(ek []byte, uid, gid uint32) []byte {
			return frameOf(statusOK, proof(tok, RoleController, ek))
		}, ErrUnproven},
		{"user's proof reflected", func(ek []byte, uid, gid uint32) []byte {
			up, _ := MintUser(tok, uid, gid, ek)
			return frameOf(statusOK, up)
		}, ErrUnproven},
		{"wrong token", func(ek []byte, uid, gid uint32) []byte {
			_, cp := MintUser(wrong, uid, gid, ek)
			return frameOf(statusOK, cp)
		}, ErrUnproven},
		{"refused", func([]byte, uint32, uint32) []byte { return []byte{version1, statusRefused} }, ErrUserRefused},
	} {
		addr := fakeUserController(t, tc.answer)
		raw, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn, ai, err := UserCredentials(minter(tok, victim, 100)).ClientHandshake(context.Background(), addr, raw)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			if a, ok := ai.(AuthInfo); !ok || a.Role != RoleController {
				t.Errorf("%s: AuthInfo %+v", tc.name, ai)
			}
			conn.Close()
			continue
		}
		if !errors.Is(err, tc.want) || conn != nil || !IsRefused(err) {
			t.Errorf("%s: handshake %v, %v; want %v", tc.name, conn, err, tc.want)
		}
		if err != nil {
			noSecret(t, []string{err.Error()}, tok, wrong)
		}
	}
}

func TestMinterErrorIsNoRefusal(t *testing.T) {
	tok := mustToken(t)
	addr, _, seen := startRoleServer(t, tok)
	boom := errors.New("no local xced")
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = UserCredentials(func(context.Context, []byte) (uint32, uint32, []byte, []byte, error) {
		return 0, 0, nil, nil, boom
	}).ClientHandshake(context.Background(), addr, raw)
	if !errors.Is(err, boom) || IsRefused(err) {
		t.Errorf("handshake with a failing minter: %v", err)
	}
	// A minter of another cluster's token: refused, and said so.
	err = check(t, addr, UserCredentials(minter(mustToken(t), 1000, 100)))
	if !IsRefused(err) || !strings.Contains(err.Error(), "refused the user's proof") {
		t.Errorf("RPC with a foreign minter: %v", err)
	}
	if s := seen(); len(s) != 0 {
		t.Errorf("handlers ran: %+v", s)
	}
}

// A relay between two TLS sessions cannot forward a user's proof: the
// session's exporter differs, and the command's minter mints for its own.
func TestUserThroughARelayFails(t *testing.T) {
	tok := mustToken(t)
	addr, log, seen := startRoleServer(t, tok)
	mitm := relay(t, addr)
	err := check(t, mitm, UserCredentials(minter(tok, 1000, 100)))
	if err == nil || !IsRefused(err) {
		t.Fatalf("RPC through a relay: %v, want a refusal", err)
	}
	waitLog(t, log, "bad user proof")
	if s := seen(); len(s) != 0 {
		t.Errorf("a handler ran through the relay: %+v", s)
	}
	if err := check(t, addr, UserCredentials(minter(tok, 1000, 100))); err != nil {
		t.Errorf("direct RPC: %v", err)
	}
}
