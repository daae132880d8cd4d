package clusterauth

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// provServer serves health with the provisioner token accepted (when
// ptok is set) and reports each RPC's PeerIsProvisioner.
func provServer(t *testing.T, tok Token, opts ...Option) (addr string, seen chan bool) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen = make(chan bool, 10)
	var l logBuf
	gs := grpc.NewServer(grpc.Creds(ServerCredentials(mustCert(t), tok, l.logger(), opts...)),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			seen <- PeerIsProvisioner(ctx)
			return h(ctx, req)
		}))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	return lis.Addr().String(), seen
}

// The provisioner's role needs the provisioner token: a worker's cluster
// token cannot prove it, the provisioner token does not pass for a
// worker, and a server given no provisioner token refuses the role.
func TestProvisionerRole(t *testing.T) {
	tok, ptok := mustToken(t), mustToken(t)
	addr, seen := provServer(t, tok, WithProvisionerToken(ptok))
	if err := check(t, addr, ProvisionerCredentials(ptok)); err != nil {
		t.Fatalf("provisioner with its token: %v", err)
	}
	if !<-seen {
		t.Error("PeerIsProvisioner false for a provisioner")
	}
	if err := check(t, addr, ClientCredentials(tok)); err != nil {
		t.Fatalf("worker: %v", err)
	}
	if <-seen {
		t.Error("PeerIsProvisioner true for a worker")
	}
	for name, creds := range map[string]credentials.TransportCredentials{
		"the cluster token as provisioner": ProvisionerCredentials(tok),
		"the provisioner token as worker":  ClientCredentials(ptok),
		"the provisioner token as replica": ClientCredentialsRole(ptok, RoleReplica),
	} {
		if err := check(t, addr, creds); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	bare, _ := provServer(t, tok)
	if err := check(t, bare, ProvisionerCredentials(tok)); err == nil {
		t.Error("a server without a provisioner token accepted the role")
	}
	if err := check(t, bare, ProvisionerCredentials(ptok)); err == nil {
		t.Error("a server without a provisioner token accepted the role")
	}
}

func TestEnsureProvisionerToken(t *testing.T) {
	dir := t.TempDir()
	a, err := EnsureProvisionerToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := EnsureProvisionerToken(dir)
	if err != nil || b != a {
		t.Fatalf("second start: %v, same token %v", err, b == a)
	}
	c, err := EnsureToken(dir)
	if err != nil || c == a {
		t.Fatalf("cluster token: %v, same as the provisioner's %v", err, c == a)
	}
	if fi, err := os.Stat(filepath.Join(dir, ProvisionerTokenFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("provisioner.token: %v %v", fi, err)
	}
}
