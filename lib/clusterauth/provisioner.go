package clusterauth

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"google.golang.org/grpc/credentials"
)

// The provisioner's credential. A provisioner daemon (`xced provisioner`)
// asks providers for hosts and records instances in the controller's
// store: more than a worker may do. So its proof is made with a token of
// its own, DIR/provisioner.token, not the cluster token: a worker holds
// cluster.token (every execution host has a copy), and a user's command
// holds nothing (its proofs are minted for RoleUser only), so neither can
// make a provisioner's proof. The frame is the worker's, with role 'P' and
// the provisioner token as the HMAC key on both sides.

// RoleProvisioner is a provisioner daemon, proving the provisioner token.
const RoleProvisioner Role = 'P'

// ProvisionerTokenFile is the provisioner token's name in the controller's
// state directory.
const ProvisionerTokenFile = "provisioner.token"

// WithProvisionerToken (server) accepts RoleProvisioner peers proving
// tok. Without it the server refuses the role.
func WithProvisionerToken(tok Token) Option { return func(o *options) { o.provTok = tok } }

// PeerIsProvisioner says whether the RPC's connection proved the
// provisioner token (RoleProvisioner).
func PeerIsProvisioner(ctx context.Context) bool { return peerRole(ctx) == RoleProvisioner }

// ProvisionerCredentials are a provisioner daemon's: TLS 1.3 to the
// controller, then the proof of tok (the controller's
// DIR/provisioner.token) as RoleProvisioner.
func ProvisionerCredentials(tok Token, opts ...Option) credentials.TransportCredentials {
	return &clientCreds{tok: tok, role: RoleProvisioner, o: newOptions(nil, opts)}
}

// EnsureProvisionerToken returns the provisioner token of the controller
// whose state directory is dir, made on first start as EnsureToken makes
// the cluster token. Controller candidates of one cluster must hold the
// same file, as they hold the same cluster.token.
func EnsureProvisionerToken(dir string) (Token, error) {
	path := filepath.Join(dir, ProvisionerTokenFile)
	t, err := LoadToken(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return t, err
	}
	t, err = newToken()
	if err != nil {
		return Token{}, err
	}
	switch err := writeNew(path, t.encode(), 0o600); {
	case errors.Is(err, fs.ErrExist):
		return LoadToken(path)
	case err != nil:
		return Token{}, err
	}
	return t, nil
}
