package main

import (
	"log/slog"

	"google.golang.org/grpc"

	"xce/lib/agent"
	"xce/lib/clusterauth"
)

// workerCredentials are what `xced worker` shows the controller: TLS and
// a proof that it holds the cluster token read from tokenFile (the
// controller's DIR/cluster.token, copied to this host).
func workerCredentials(tokenFile string) (grpc.DialOption, error) {
	tok, err := clusterauth.LoadToken(tokenFile)
	if err != nil {
		return nil, err
	}
	return grpc.WithTransportCredentials(clusterauth.ClientCredentials(tok, clusterauth.WithLogger(slog.Default()))), nil
}

// workerRefused says whether a connection error is the controller
// refusing this worker's token (or failing to prove it holds it), which
// ends `xced worker`.
func workerRefused(err error) bool {
	return clusterauth.IsRefused(err) || agent.Refused(err)
}
