package clusterauth_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"

	"google.golang.org/grpc"

	"xce/lib/clusterauth"
)

// The controller makes (first start) or reads its token and certificate
// and serves workers with the credentials; handlers of worker RPCs check
// PeerIsWorker.
func Example_controller() {
	dir, log := os.TempDir(), slog.Default()
	tok, err := clusterauth.EnsureToken(dir)
	if err != nil {
		log.Error("cluster token", "err", err)
		return
	}
	cert, err := clusterauth.EnsureCert(dir, []string{"ctl.example"})
	if err != nil {
		log.Error("cluster certificate", "err", err)
		return
	}
	srv := grpc.NewServer(grpc.Creds(clusterauth.ServerCredentials(cert, tok, log)))
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(lis)
	defer srv.Stop()
	_ = func(ctx context.Context) error { // in a worker RPC's handler
		if !clusterauth.PeerIsWorker(ctx) {
			return fmt.Errorf("not a worker")
		}
		return nil
	}
}

// The worker reads its --token-file and dials; a refusal is fatal.
func Example_worker() {
	log := slog.Default()
	tok, err := clusterauth.LoadToken("/etc/xce/cluster.token")
	if err != nil {
		fmt.Println(err) // names the file and what to do
		return
	}
	refused := make(chan error, 1)
	creds := clusterauth.ClientCredentials(tok, clusterauth.WithLogger(log), clusterauth.OnRefused(func(err error) {
		select {
		case refused <- err:
		default:
		}
	}))
	cc, err := grpc.NewClient("ctl.example:7869", grpc.WithTransportCredentials(creds))
	if err != nil {
		return
	}
	defer cc.Close()
	// ... open the stream; on an error e, clusterauth.IsRefused(e), or a
	// value on refused, means: print it and exit.
}
