package peercred

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
)

func TestFromContextIsTheCaller(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		uid, gid uint32
		ok       bool
	}
	got := make(chan seen, 1)
	srv := grpc.NewServer(grpc.Creds(Credentials()), grpc.UnaryInterceptor(
		func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			u, g, ok := FromContext(ctx)
			got <- seen{u, g, ok}
			return h(ctx, req)
		}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	defer srv.Stop()
	cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(Credentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if !s.ok || s.uid != uint32(os.Getuid()) || s.gid != uint32(os.Getgid()) {
		t.Errorf("FromContext = %d, %d, %v; want %d, %d, true", s.uid, s.gid, s.ok, os.Getuid(), os.Getgid())
	}
	if _, _, ok := FromContext(context.Background()); ok {
		t.Error("FromContext without a peer says ok")
	}
	if _, _, ok := FromContext(peer.NewContext(context.Background(), &peer.Peer{AuthInfo: Info{}})); ok {
		t.Error("FromContext of a client side's Info says ok")
	}
}

func TestServerHandshakeNeedsAUnixSocket(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, _, err := Credentials().ServerHandshake(a); err == nil {
		t.Error("a pipe passed")
	}
}
