package main

import (
	"context"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/clusterauth"
)

// The worker's socket mints the caller's proofs and serves nothing else.
func TestWorkerCredentialSocket(t *testing.T) {
	dir := t.TempDir()
	tok, err := clusterauth.EnsureToken(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sock, stop, err := serveCredentials(dir, tok)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	want := os.FileMode(0o600)
	if os.Geteuid() == 0 {
		want = 0o666
	}
	if fi.Mode().Perm() != want {
		t.Errorf("socket mode %v, want %v", fi.Mode().Perm(), want)
	}
	cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	cl := grpcapi.NewControllerClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ek := make([]byte, 32)
	r, err := cl.Credential(ctx, &rpc.CredentialRequest{Exporter: ek})
	if err != nil {
		t.Fatal(err)
	}
	up, cp := clusterauth.MintUser(tok, uint32(os.Getuid()), uint32(os.Getgid()), ek)
	if r.Uid != uint32(os.Getuid()) || r.Gid != uint32(os.Getgid()) || string(r.UserProof) != string(up) || string(r.ControllerProof) != string(cp) {
		t.Errorf("Credential = %+v", r)
	}
	if _, err := cl.Info(ctx, &api.ClusterInfoRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("Info on the worker's socket: %v, want Unimplemented", err)
	}
	stop()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left after stop: %v", err)
	}
}
