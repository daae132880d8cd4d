package controller

import (
	"context"
	"net"
	"os"
	"path/filepath"
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

// serveUnix serves srv (a unixrpc.Server, or a grpc.Server with peer
// credentials) on a socket in a temporary directory and dials it.
func serveUnix(t *testing.T, srv interface {
	Serve(net.Listener) error
	Stop()
}) grpcapi.ControllerClient {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "xced.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return grpcapi.NewControllerClient(cc)
}

func testToken(t *testing.T) clusterauth.Token {
	t.Helper()
	tok, err := clusterauth.EnsureToken(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestCredentialIsTheSocketsPeers(t *testing.T) {
	c, _ := newTestController(t, 2, 0)
	tok := testToken(t)
	mint := func(uid, gid uint32, ek []byte) ([]byte, []byte, error) {
		up, cp := clusterauth.MintUser(tok, uid, gid, ek)
		return up, cp, nil
	}
	cl := serveUnix(t, NewServer(c, WithMint(mint)))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ek := make([]byte, 32)
	ek[0] = 7
	r, err := cl.Credential(ctx, &rpc.CredentialRequest{Exporter: ek})
	if err != nil {
		t.Fatal(err)
	}
	up, cp := clusterauth.MintUser(tok, uint32(os.Getuid()), uint32(os.Getgid()), ek)
	if r.Uid != uint32(os.Getuid()) || r.Gid != uint32(os.Getgid()) || string(r.UserProof) != string(up) || string(r.ControllerProof) != string(cp) {
		t.Errorf("Credential = %+v; want this process's uid and gid and their proofs", r)
	}
	if _, err := cl.Credential(ctx, &rpc.CredentialRequest{Exporter: ek[:16]}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a 16-byte exporter: %v, want InvalidArgument", err)
	}
	plain := serveUnix(t, NewServer(c))
	if _, err := plain.Credential(ctx, &rpc.CredentialRequest{Exporter: ek}); status.Code(err) != codes.Unimplemented {
		t.Errorf("Credential without Mint: %v, want Unimplemented", err)
	}
}

// A command that got its proofs from the local socket is served over TCP
// as its own uid; Credential itself is refused over TCP.
func TestUserOverTCPIsTheMintedUID(t *testing.T) {
	c, _ := newTestController(t, 2, 0)
	tok := testToken(t)
	const uid, gid = 4242, 4343
	mint := func(_, _ uint32, ek []byte) ([]byte, []byte, error) {
		up, cp := clusterauth.MintUser(tok, uid, gid, ek)
		return up, cp, nil
	}
	cert, err := clusterauth.EnsureCert(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(clusterauth.ServerCredentials(cert, tok, nil)))
	grpcapi.RegisterControllerServer(srv, NewService(c, WithMint(mint)))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()
	creds := clusterauth.UserCredentials(func(_ context.Context, ek []byte) (uint32, uint32, []byte, []byte, error) {
		up, cp := clusterauth.MintUser(tok, uid, gid, ek)
		return uid, gid, up, cp, nil
	})
	cc, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	cl := grpcapi.NewControllerClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	info, err := cl.Info(ctx, &api.ClusterInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Uid != uid {
		t.Errorf("Info over TCP: uid %d, want %d", info.Uid, uid)
	}
	if _, err := cl.Credential(ctx, &rpc.CredentialRequest{Exporter: make([]byte, 32)}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("Credential over TCP: %v, want PermissionDenied", err)
	}
	// A worker's connection is no user.
	wc, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), grpc.WithTransportCredentials(clusterauth.ClientCredentials(tok)))
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	if _, err := grpcapi.NewControllerClient(wc).Info(ctx, &api.ClusterInfoRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("Info from a worker's connection: %v, want Unauthenticated", err)
	}
}
