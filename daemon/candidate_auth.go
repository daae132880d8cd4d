package main

import (
	"context"
	"net"
	"time"

	"google.golang.org/grpc"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/clusterauth"
	"xce/lib/controller"
	"xce/lib/peercred"
)

// replicaDialer opens raft's connections to the other candidates: TCP,
// then the cluster handshake as a replica.
func replicaDialer(tok clusterauth.Token) func(ctx context.Context, addr string) (net.Conn, error) {
	creds := clusterauth.ClientCredentialsRole(tok, clusterauth.RoleReplica)
	return func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		raw, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		conn, _, err := creds.ClientHandshake(ctx, addr, raw)
		if err != nil {
			raw.Close()
			return nil, err
		}
		return conn, nil
	}
}

// controllerServer is the leader's server on its Unix socket.
func controllerServer(ctl *controller.Controller, tok clusterauth.Token) rpcServer {
	return controller.NewServer(ctl, controller.WithMint(mintWith(tok)))
}

// registerUserService serves users' commands on the TCP port: the
// callers are known by the proofs their local xced minted.
func registerUserService(srv *grpc.Server, ctl *controller.Controller) {
	grpcapi.RegisterControllerServer(srv, controller.NewService(ctl))
}

// standbyServer is a standby's server on its Unix socket: it mints the
// credentials the commands need to reach the leader over TCP, and answers
// every other call with the leader's address.
func standbyServer(tok clusterauth.Token, notLeader func() error) *grpc.Server {
	srv := grpc.NewServer(grpc.Creds(peercred.Credentials()),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if info.FullMethod == grpcapi.Controller_Credential_FullMethodName {
				return handler(ctx, req)
			}
			return nil, notLeader()
		}),
		grpc.StreamInterceptor(func(any, grpc.ServerStream, *grpc.StreamServerInfo, grpc.StreamHandler) error {
			return notLeader()
		}))
	grpcapi.RegisterControllerServer(srv, &credentialService{mint: mintWith(tok)})
	return srv
}

// establishedProbe asks the other candidates, over their TCP ports as
// root of this host, whether one of them leads or knows a leader.
func establishedProbe(self string, candidates []string, tok clusterauth.Token) func() bool {
	return func() bool {
		mint := mintWith(tok)
		creds := clusterauth.UserCredentials(func(_ context.Context, ek []byte) (uint32, uint32, []byte, []byte, error) {
			up, cp, err := mint(0, 0, ek)
			return 0, 0, up, cp, err
		})
		for _, addr := range candidates {
			if addr == self {
				continue
			}
			conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
			if err != nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err = grpcapi.NewControllerClient(conn).Info(ctx, &api.ClusterInfoRequest{})
			cancel()
			conn.Close()
			if err == nil {
				return true
			}
			if leader, ok := grpcapi.LeaderOf(err); ok && leader != "" {
				return true
			}
		}
		return false
	}
}
