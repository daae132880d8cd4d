package main

import (
	"errors"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"xce/lib/agent"
)

// workerCredentials are what `xced worker` shows the controller: TLS and
// the cluster token read from tokenFile. Until cluster authentication is
// in, only XCE_INSECURE_CLUSTER=1 connects (plain TCP, no token).
func workerCredentials(tokenFile string) (grpc.DialOption, error) {
	if os.Getenv("XCE_INSECURE_CLUSTER") == "1" {
		return grpc.WithTransportCredentials(insecure.NewCredentials()), nil
	}
	return nil, errors.New("cluster authentication not built yet (XCE_INSECURE_CLUSTER=1 connects without it)")
}

// workerRefused says whether a connection error is the controller
// refusing this worker's credentials, which ends `xced worker`.
func workerRefused(err error) bool {
	return agent.Refused(err)
}
