package clusterauth

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// One port serves gRPC to workers and users and a raw protocol to
// replicas, each seen as the role it proved.
func TestMuxSplitsByRole(t *testing.T) {
	tok := mustToken(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var log logBuf
	m := NewMux(ln, ServerCredentials(mustCert(t), tok, log.logger()), func(r Role) bool { return r == RoleReplica })
	go m.Serve()
	defer m.Close()

	seen := make(chan Role, 4)
	gs := grpc.NewServer(grpc.Creds(Handshaken()), grpc.UnaryInterceptor(
		func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			seen <- peerRole(ctx)
			return h(ctx, req)
		}))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go gs.Serve(m.Main())
	defer gs.Stop()

	// The side: an echo of what each replica sends, after its role.
	go func() {
		for {
			c, err := m.Side().Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				ai, ok := AuthInfoOf(c)
				if !ok || ai.Role != RoleReplica {
					return
				}
				io.Copy(c, c)
			}()
		}
	}()

	addr := ln.Addr().String()
	if err := check(t, addr, ClientCredentials(tok)); err != nil {
		t.Errorf("worker through the mux: %v", err)
	}
	if err := check(t, addr, UserCredentials(minter(tok, 1000, 100))); err != nil {
		t.Errorf("user through the mux: %v", err)
	}
	for _, want := range []Role{RoleWorker, RoleUser} {
		select {
		case r := <-seen:
			if r != want {
				t.Errorf("gRPC saw %s, want %s", r, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no RPC seen")
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, ClientCredentialsRole(tok, RoleReplica))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Errorf("replica echo: %q, %v", buf, err)
	}
	// A wrong token gets nowhere, on either side.
	if _, err := Dial(ctx, addr, ClientCredentialsRole(mustToken(t), RoleReplica)); !IsRefused(err) {
		t.Errorf("replica with a wrong token: %v", err)
	}
	// A connection that skipped the mux is refused by Handshaken.
	a, b := net.Pipe()
	defer b.Close()
	if _, _, err := Handshaken().ServerHandshake(a); err == nil {
		t.Error("Handshaken took a raw connection")
	}
}
