package main

import (
	"fmt"
	"log/slog"
	"net"
	"path/filepath"

	"google.golang.org/grpc/credentials"

	"xce/lib/clusterauth"
	"xce/lib/config"
)

// clusterServerCredentials are the controller's side of the workers'
// port: TLS with the configured certificate or the one generated in DIR
// on first start, and the cluster token (DIR/cluster.token, written on
// first start), which every worker must prove it holds.
func clusterServerCredentials(dir, addr, host string, cl *config.Cluster) (clusterauth.Token, credentials.TransportCredentials, error) {
	tok, err := clusterauth.EnsureToken(dir)
	if err != nil {
		return tok, nil, err
	}
	// The provisioner daemons' own token (role P): a worker's copy of
	// cluster.token does not make a provisioner.
	ptok, err := clusterauth.EnsureProvisionerToken(dir)
	if err != nil {
		return tok, nil, err
	}
	var names []string
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" {
		names = append(names, h)
	}
	names = append(names, host)
	cert, err := clusterauth.EnsureCert(dir, names)
	if cl.TLSCertFile != "" {
		cert, err = clusterauth.LoadCert(cl.TLSCertFile, cl.TLSKeyFile)
	}
	if err != nil {
		return tok, nil, fmt.Errorf("cluster certificate: %w", err)
	}
	slog.Info("cluster token", "file", filepath.Join(dir, clusterauth.TokenFile))
	return tok, clusterauth.ServerCredentials(cert, tok, slog.Default(), clusterauth.WithProvisionerToken(ptok)), nil
}
