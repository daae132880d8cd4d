// Package clusterauth owns how the controller and its workers know each
// other over TCP: the cluster token (a shared secret in DIR/cluster.token),
// the controller's TLS certificate (DIR/cluster.crt and DIR/cluster.key,
// made on first start or configured), and gRPC transport credentials that
// run TLS 1.3 and then a mutual proof of the token bound to that TLS
// session, before HTTP/2 starts, so no handler can forget the check.
//
// The token never appears in a log or an error: Token prints as
// "[redacted]" with any verb and in slog. It imports nothing of ours.
package clusterauth

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
)

// File names in the controller's state directory.
const (
	TokenFile = "cluster.token"
	CertFile  = "cluster.crt"
	KeyFile   = "cluster.key"
)

const (
	tokenBytes = 32
	// maxTokenFile caps what is read of a token file: 64 hex digits and a
	// newline, with room for a CR or spaces an editor added.
	maxTokenFile = 256
)

// Token is the cluster's shared secret. Its zero value is no token. It
// prints as "[redacted]" whatever the verb, and logs so in slog.
type Token struct {
	b   [tokenBytes]byte
	set bool
}

// IsZero says whether t holds no token.
func (t Token) IsZero() bool { return !t.set }

// String redacts the token.
func (t Token) String() string { return "[redacted]" }

// GoString redacts the token for %#v.
func (t Token) GoString() string { return "clusterauth.Token{[redacted]}" }

// Format redacts the token for every verb (%x and %d included).
func (t Token) Format(f fmt.State, verb rune) { fmt.Fprint(f, "[redacted]") }

// LogValue redacts the token in slog.
func (t Token) LogValue() slog.Value { return slog.StringValue("[redacted]") }

func newToken() (Token, error) {
	var t Token
	if _, err := rand.Read(t.b[:]); err != nil {
		return Token{}, fmt.Errorf("cluster token: %w", err)
	}
	t.set = true
	return t, nil
}

func (t Token) encode() []byte {
	return []byte(hex.EncodeToString(t.b[:]) + "\n")
}

// parseToken reads the file's content; its errors never quote it.
func parseToken(path string, b []byte) (Token, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return Token{}, fmt.Errorf("cluster token file %s is empty; copy %s from the controller's state directory", path, TokenFile)
	}
	var t Token
	if len(s) != 2*tokenBytes {
		return Token{}, fmt.Errorf("cluster token file %s does not hold a cluster token (want %d hex digits on one line); copy %s from the controller's state directory", path, 2*tokenBytes, TokenFile)
	}
	if _, err := hex.Decode(t.b[:], []byte(s)); err != nil {
		return Token{}, fmt.Errorf("cluster token file %s does not hold a cluster token (want %d hex digits on one line); copy %s from the controller's state directory", path, 2*tokenBytes, TokenFile)
	}
	t.set = true
	return t, nil
}

// LoadToken reads a token file, as the worker's --token-file. It refuses,
// naming the file and what to do, a link, anything but a regular file, a
// file owned by another user than the caller (or root), one group or
// others can access, and one that does not hold exactly one token.
func LoadToken(path string) (Token, error) {
	b, err := readSecret(path, "cluster token file", maxTokenFile)
	if err != nil {
		return Token{}, err
	}
	return parseToken(path, b)
}

// EnsureToken returns the token of the controller whose state directory is
// dir: read from dir/cluster.token, or, on first start, made (32 random
// bytes) and written there as one hex line, mode 0600. The file is
// written whole under a temporary name and linked into place, so a crash
// never leaves part of a token and an existing token is never replaced.
func EnsureToken(dir string) (Token, error) {
	path := filepath.Join(dir, TokenFile)
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
		// Another start made it first: use theirs.
		return LoadToken(path)
	case err != nil:
		return Token{}, fmt.Errorf("write cluster token: %w", err)
	}
	return t, nil
}
