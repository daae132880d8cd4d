package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"google.golang.org/grpc"

	"xce/lib/agent"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/client"
	"xce/lib/clusterauth"
	"xce/lib/controller"
	"xce/lib/peercred"
)

// workerCredentials are what `xced worker` shows the controller: TLS and
// a proof that it holds the cluster token tok (read from --token-file,
// the controller's DIR/cluster.token copied to this host).
func workerCredentials(tok clusterauth.Token) grpc.DialOption {
	return grpc.WithTransportCredentials(clusterauth.ClientCredentials(tok, clusterauth.WithLogger(slog.Default())))
}

// workerRefused says whether a connection error is the controller
// refusing this worker's token (or failing to prove it holds it), which
// ends `xced worker`.
func workerRefused(err error) bool {
	return clusterauth.IsRefused(err) || agent.Refused(err)
}

// credentialService mints, on a Unix socket, the proofs with which a
// command on this host reaches the controller over TCP as its caller's
// uid and gid (lib/client): the worker's socket, and a standby
// candidate's. Every other call is Unimplemented, which tells the command
// to go to the controllers (a standby's server answers those itself).
type credentialService struct {
	grpcapi.UnimplementedControllerServer
	mint func(uid, gid uint32, ek []byte) ([]byte, []byte, error)
}

func (s *credentialService) Credential(ctx context.Context, req *rpc.CredentialRequest) (*rpc.CredentialReply, error) {
	return controller.Credential(ctx, s.mint, req)
}

// mintWith mints the proofs of a local user's command with the cluster
// token.
func mintWith(tok clusterauth.Token) func(uid, gid uint32, ek []byte) ([]byte, []byte, error) {
	return func(uid, gid uint32, ek []byte) ([]byte, []byte, error) {
		up, cp := clusterauth.MintUser(tok, uid, gid, ek)
		return up, cp, nil
	}
}

// serveCredentials serves the credential socket DIR/xced.sock: anyone on
// the host may connect when the worker runs as root (each gets proofs for
// its own uid only, from SO_PEERCRED), else only the worker's user.
func serveCredentials(dir string, tok clusterauth.Token) (sock string, stop func(), err error) {
	sock = filepath.Join(dir, client.SocketName)
	ln, err := listenSocket(sock)
	if err != nil {
		return "", nil, err
	}
	srv := grpc.NewServer(grpc.Creds(peercred.Credentials()), grpc.MaxRecvMsgSize(1<<20))
	grpcapi.RegisterControllerServer(srv, &credentialService{mint: mintWith(tok)})
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			slog.Error("credential socket", "socket", sock, "err", err)
		}
	}()
	return sock, func() { srv.Stop(); os.Remove(sock) }, nil
}
