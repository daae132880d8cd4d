package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"xce/lib/api/grpcapi"
	"xce/lib/config"
	"xce/lib/controller"
)

// serveWorkers serves the Cluster service to remote workers on a TCP
// address: TLS with the cluster's certificate, and only peers that prove
// they hold the cluster token (DIR/cluster.token, written on first start).
func serveWorkers(addr, dir, host string, cl *config.Cluster, ctl *controller.Controller) (stop func(), err error) {
	_, creds, err := clusterServerCredentials(dir, addr, host, cl)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := grpc.NewServer(append(workerServerOptions(creds), ctl.CallInterceptors()...)...)
	grpcapi.RegisterClusterServer(srv, ctl.ClusterService())
	// Users' commands on other hosts, known by the proofs their host's
	// xced minted.
	registerUserService(srv, ctl)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			slog.Error("worker listener", "addr", addr, "err", err)
		}
	}()
	slog.Info("serving workers", "addr", ln.Addr().String())
	return srv.Stop, nil
}

// workerServerOptions are those of the gRPC server on a controller's TCP
// port.
func workerServerOptions(creds credentials.TransportCredentials) []grpc.ServerOption {
	return []grpc.ServerOption{grpc.Creds(creds),
		grpc.MaxRecvMsgSize(controller.MaxRequestBytes), controller.CallWorkers(),
		// A worker that vanishes (its host died, the network split) is
		// found within seconds, not when TCP gives up.
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: workerKeepalive, Timeout: workerKeepalive}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: workerKeepalive / 2, PermitWithoutStream: true}),
	}
}

// workerKeepalive is how often each side of a worker's link checks that
// the other is there, and how long it waits for the answer.
const workerKeepalive = 5 * time.Second
