package clusterauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"xce/lib/clusterauth/handshake"
	"xce/lib/testenv"
)

// logBuf collects a logger's lines for a test to read while servers write.
type logBuf struct{ testenv.LockedBuffer }

func (l *logBuf) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waitLog waits (up to a generous bound, not a timing assertion) for want
// to be logged: a server logs from its handshake goroutine.
func waitLog(t *testing.T, l *logBuf, want string) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(l.String(), want) {
			return
		}
	}
	t.Errorf("log never had %q; it has:\n%s", want, l.String())
}

func mustToken(t *testing.T) Token {
	t.Helper()
	tok, err := newToken()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func mustCert(t *testing.T) tls.Certificate {
	t.Helper()
	c, err := EnsureCert(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// server is a real gRPC server (the health service) on 127.0.0.1:0.
type server struct {
	addr string
	log  logBuf
	mu   sync.Mutex
	seen []bool // PeerIsWorker of each RPC
}

func startServer(t *testing.T, cert tls.Certificate, tok Token, opts ...Option) *server {
	t.Helper()
	s := &server{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = lis.Addr().String()
	gs := grpc.NewServer(
		grpc.Creds(ServerCredentials(cert, tok, s.log.logger(), opts...)),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			s.mu.Lock()
			s.seen = append(s.seen, PeerIsWorker(ctx))
			s.mu.Unlock()
			return h(ctx, req)
		}))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	return s
}

// check makes one health RPC to addr with the client's credentials.
func check(t *testing.T, addr string, creds credentials.TransportCredentials) error {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

func TestRightTokenWorks(t *testing.T) {
	tok := mustToken(t)
	s := startServer(t, mustCert(t), tok)
	var clog logBuf
	if err := check(t, s.addr, ClientCredentials(tok, WithLogger(clog.logger()))); err != nil {
		t.Fatalf("RPC with the right token: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) != 1 || !s.seen[0] {
		t.Errorf("PeerIsWorker in the handler: %v, want [true]", s.seen)
	}
	if PeerIsWorker(context.Background()) {
		t.Error("PeerIsWorker without a peer")
	}
	if strings.Contains(s.log.String(), "bad cluster token") || clog.String() != "" {
		t.Errorf("logs on success: server %q client %q", s.log.String(), clog.String())
	}
}

func TestWrongTokenRefusedOnBothSides(t *testing.T) {
	tok, wrong := mustToken(t), mustToken(t)
	s := startServer(t, mustCert(t), tok)
	var clog logBuf
	var refused []error
	var mu sync.Mutex
	err := check(t, s.addr, ClientCredentials(wrong, WithLogger(clog.logger()), OnRefused(func(err error) {
		mu.Lock()
		refused = append(refused, err)
		mu.Unlock()
	})))
	if err == nil {
		t.Fatal("RPC with a wrong token succeeded")
	}
	if !IsRefused(err) {
		t.Errorf("IsRefused(%v) = false", err)
	}
	if !strings.Contains(err.Error(), "the controller refused the cluster token") {
		t.Errorf("RPC error does not say the token was refused: %v", err)
	}
	waitLog(t, &s.log, "bad cluster token")
	waitLog(t, &s.log, "peer=127.0.0.1:")
	if !strings.Contains(clog.String(), "the controller refused the cluster token") {
		t.Errorf("client log: %q", clog.String())
	}
	mu.Lock()
	if len(refused) == 0 || !errors.Is(refused[0], ErrRefused) {
		t.Errorf("OnRefused got %v, want ErrRefused", refused)
	}
	mu.Unlock()
	s.mu.Lock()
	if len(s.seen) != 0 {
		t.Errorf("a handler ran for a refused worker: %v", s.seen)
	}
	s.mu.Unlock()

	// The handshake itself returns an error errors.Is ErrRefused.
	raw, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ClientCredentials(wrong).ClientHandshake(context.Background(), s.addr, raw)
	if !errors.Is(err, ErrRefused) {
		t.Errorf("handshake with a wrong token: %v, want ErrRefused", err)
	}
	noSecret(t, []string{err.Error(), s.log.String(), clog.String()}, tok, wrong)
}

// rawClient speaks the proof by hand: TLS, then frame, then the answer.
func rawClient(t *testing.T, addr string, frame func(ek []byte) []byte) []byte {
	t.Helper()
	tc, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	ek, err := handshake.Exporter(tc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Write(frame(ek)); err != nil {
		t.Fatal(err)
	}
	tc.SetReadDeadline(time.Now().Add(20 * time.Second))
	ans, err := io.ReadAll(io.LimitReader(tc, 2+macLen))
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("reading the answer: %v", err)
	}
	return ans
}

func frameOf(role Role, mac []byte) []byte {
	return append([]byte{version1, byte(role)}, mac...)
}

// The server checks the proof: without it a client that does not verify
// the answer (not ours) would be let in. Each bad frame is refused.
func TestServerChecksTheProof(t *testing.T) {
	tok, wrong := mustToken(t), mustToken(t)
	s := startServer(t, mustCert(t), tok)
	for _, tc := range []struct {
		name  string
		frame func(ek []byte) []byte
		want  byte
	}{
		{"right", func(ek []byte) []byte { return frameOf(RoleWorker, proof(tok, RoleWorker, ek)) }, statusOK},
		{"wrong token", func(ek []byte) []byte { return frameOf(RoleWorker, proof(wrong, RoleWorker, ek)) }, statusRefused},
		{"zero mac", func(ek []byte) []byte { return frameOf(RoleWorker, make([]byte, macLen)) }, statusRefused},
		{"other session", func(ek []byte) []byte {
			return frameOf(RoleWorker, proof(tok, RoleWorker, make([]byte, handshake.EKLen)))
		}, statusRefused},
		{"controller's proof replayed", func(ek []byte) []byte { return frameOf(RoleWorker, proof(tok, RoleController, ek)) }, statusRefused},
		{"unknown role", func(ek []byte) []byte { return frameOf('X', proof(tok, RoleWorker, ek)) }, statusUnsupported},
		{"unknown version", func(ek []byte) []byte {
			f := frameOf(RoleWorker, proof(tok, RoleWorker, ek))
			f[0] = 9
			return f
		}, statusUnsupported},
	} {
		ans := rawClient(t, s.addr, tc.frame)
		if len(ans) < 2 || ans[0] != version1 || ans[1] != tc.want {
			t.Errorf("%s: answer %q, want status %q", tc.name, ans, tc.want)
			continue
		}
		if tc.want == statusOK && len(ans) != 2+macLen {
			t.Errorf("%s: answer of %d bytes", tc.name, len(ans))
		}
		if tc.want != statusOK && len(ans) != 2 {
			t.Errorf("%s: a refusal carried %d more bytes (the controller's proof?)", tc.name, len(ans)-2)
		}
	}
	waitLog(t, &s.log, "bad cluster token")
}

// fakeController completes TLS with its own certificate and answers a
// worker's proof with answer(ek).
func fakeController(t *testing.T, answer func(ek []byte) []byte) string {
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
				buf := make([]byte, 2+macLen)
				if _, err := io.ReadFull(tc, buf); err != nil {
					return
				}
				tc.Write(answer(ek))
				io.Copy(io.Discard, tc)
			}()
		}
	}()
	return lis.Addr().String()
}

// The client checks the controller's proof: a server that accepts any
// worker but does not hold the token is not trusted.
func TestClientChecksTheProof(t *testing.T) {
	tok, wrong := mustToken(t), mustToken(t)
	for _, tc := range []struct {
		name   string
		answer func(ek []byte) []byte
		want   error
	}{
		{"right", func(ek []byte) []byte { return frameOf(statusOK, proof(tok, RoleController, ek)) }, nil},
		{"wrong token", func(ek []byte) []byte { return frameOf(statusOK, proof(wrong, RoleController, ek)) }, ErrUnproven},
		{"zero mac", func(ek []byte) []byte { return frameOf(statusOK, make([]byte, macLen)) }, ErrUnproven},
		{"worker's proof reflected", func(ek []byte) []byte { return frameOf(statusOK, proof(tok, RoleWorker, ek)) }, ErrUnproven},
		{"refused", func(ek []byte) []byte { return []byte{version1, statusRefused} }, ErrRefused},
	} {
		addr := fakeController(t, tc.answer)
		raw, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		var clog logBuf
		conn, ai, err := ClientCredentials(tok, WithLogger(clog.logger())).ClientHandshake(context.Background(), addr, raw)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			if a, ok := ai.(AuthInfo); !ok || a.Role != RoleController || a.State.Version != tls.VersionTLS13 {
				t.Errorf("%s: AuthInfo %+v", tc.name, ai)
			}
			conn.Close()
			continue
		}
		if !errors.Is(err, tc.want) || conn != nil {
			t.Errorf("%s: handshake %v, %v; want %v", tc.name, conn, err, tc.want)
		}
		if want := map[error]string{ErrRefused: "refused the cluster token", ErrUnproven: "could not prove"}[tc.want]; !strings.Contains(clog.String(), want) {
			t.Errorf("%s: client log %q", tc.name, clog.String())
		}
		noSecret(t, []string{err.Error(), clog.String()}, tok, wrong)
	}

	// Through gRPC too: the RPC fails and says why.
	addr := fakeController(t, func(ek []byte) []byte { return frameOf(statusOK, make([]byte, macLen)) })
	err := check(t, addr, ClientCredentials(tok))
	if err == nil || !IsRefused(err) || !strings.Contains(err.Error(), "could not prove") {
		t.Errorf("RPC to a controller without the token: %v", err)
	}
}

// relay terminates the worker's TLS with its own certificate, opens its
// own TLS session to the controller, and forwards the bytes both ways:
// a man in the middle that holds no token.
func relay(t *testing.T, to string) string {
	t.Helper()
	lis, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{mustCert(t)}, MinVersion: tls.VersionTLS13, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			in, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := tls.Dial("tcp", to, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13, NextProtos: []string{"h2"}})
				if err != nil {
					return
				}
				defer out.Close()
				go func() {
					io.Copy(out, in)
					out.Close()
				}()
				io.Copy(in, out)
			}()
		}
	}()
	return lis.Addr().String()
}

func TestRelayingManInTheMiddleFails(t *testing.T) {
	tok := mustToken(t)
	s := startServer(t, mustCert(t), tok)
	mitm := relay(t, s.addr)
	err := check(t, mitm, ClientCredentials(tok))
	if err == nil {
		t.Fatal("RPC through a relaying man in the middle succeeded")
	}
	if !IsRefused(err) {
		t.Errorf("RPC through the relay: %v, want a refusal", err)
	}
	// The controller refused the forwarded proof (another TLS session).
	waitLog(t, &s.log, "bad cluster token")
	s.mu.Lock()
	if len(s.seen) != 0 {
		t.Errorf("a handler ran through the relay: %v", s.seen)
	}
	s.mu.Unlock()
	// The same worker straight to the controller works.
	if err := check(t, s.addr, ClientCredentials(tok)); err != nil {
		t.Errorf("direct RPC: %v", err)
	}
}

func TestSilentClientTimesOut(t *testing.T) {
	tok := mustToken(t)
	s := startServer(t, mustCert(t), tok, WithHandshakeTimeout(200*time.Millisecond))
	// Says nothing at all, then completes TLS but sends no proof.
	raw, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := raw.Read(make([]byte, 1)); isTimeout(err) {
		t.Errorf("the server kept a silent connection open: %v", err)
	}
	waitLog(t, &s.log, "stage=\"TLS handshake\"")

	tc, err := tls.Dial("tcp", s.addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	tc.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := tc.Read(make([]byte, 1)); isTimeout(err) || err == nil {
		t.Errorf("the server kept a connection without a proof open: %v", err)
	}
	waitLog(t, &s.log, "stage=\"reading the cluster proof\"")
	waitLog(t, &s.log, "cluster handshake timed out")
	// A worker still gets in.
	if err := check(t, s.addr, ClientCredentials(tok)); err != nil {
		t.Errorf("RPC after the silent clients: %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestRootCAsVerifyTheController(t *testing.T) {
	dir := t.TempDir()
	cert, err := EnsureCert(dir, []string{"ctl.example"})
	if err != nil {
		t.Fatal(err)
	}
	tok := mustToken(t)
	s := startServer(t, cert, tok)
	leaf, _ := x509.ParseCertificate(cert.Certificate[0])
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	if err := check(t, s.addr, ClientCredentials(tok, WithRootCAs(pool))); err != nil {
		t.Errorf("RPC verifying the controller's own certificate: %v", err)
	}
	other := x509.NewCertPool()
	ol, _ := x509.ParseCertificate(mustCert(t).Certificate[0])
	other.AddCert(ol)
	err = check(t, s.addr, ClientCredentials(tok, WithRootCAs(other)))
	if err == nil || IsRefused(err) {
		t.Errorf("RPC verifying against another certificate: %v, want a TLS failure", err)
	}
}

// noSecret fails if a token's hex (or raw bytes) is in any of texts.
func noSecret(t *testing.T, texts []string, toks ...Token) {
	t.Helper()
	for _, tok := range toks {
		h := hex.EncodeToString(tok.b[:])
		for _, s := range texts {
			if strings.Contains(strings.ToLower(s), h) || strings.Contains(s, string(tok.b[:])) || strings.Contains(s, h[:16]) {
				t.Errorf("a token is in %q", s)
			}
		}
	}
}

// BenchmarkHandshake is one connection's TLS 1.3 handshake and proof, both
// sides, over an in-memory pipe: the CPU a (re)connecting worker costs.
func BenchmarkHandshake(b *testing.B) {
	tok := Token{set: true}
	cert, err := EnsureCert(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	sc, cc := ServerCredentials(cert, tok, nil), ClientCredentials(tok)
	for b.Loop() {
		p1, p2 := net.Pipe()
		done := make(chan error, 1)
		go func() {
			_, _, err := sc.ServerHandshake(p1)
			p1.Close() // not the TLS close: both would write on the pipe
			done <- err
		}()
		_, _, err := cc.ClientHandshake(context.Background(), "x:1", p2)
		if err != nil {
			b.Fatal(err)
		}
		p2.Close()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}
