package clusterauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

func TestEnsureTokenCreatesOnceAndReuses(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0) // the file is 0600 whatever the umask
	defer syscall.Umask(old)
	tok, err := EnsureToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, TokenFile)
	if m := mode(t, path); m != 0o600 {
		t.Errorf("%s: mode %v, want -rw-------", path, m)
	}
	b, _ := os.ReadFile(path)
	if !regexp.MustCompile(`^[0-9a-f]{64}\n$`).Match(b) {
		t.Errorf("token file holds %d bytes, not one line of 64 hex digits", len(b))
	}
	again, err := EnsureToken(dir)
	if err != nil || again != tok {
		t.Errorf("second start: same token %v, err %v", again == tok, err)
	}
	loaded, err := LoadToken(path)
	if err != nil || loaded != tok {
		t.Errorf("LoadToken: same token %v, err %v", loaded == tok, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left in the directory: %v", entries)
	}
	other, _ := EnsureToken(t.TempDir())
	if other == tok {
		t.Error("two directories got the same token")
	}
}

func TestEnsureTokenDoesNotFollowALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, filepath.Join(dir, TokenFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureToken(dir); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("EnsureToken through a dangling link: %v", err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("a token was written through the link")
	}
}

func TestLoadTokenRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := EnsureToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	goodPath := filepath.Join(dir, TokenFile)
	content, _ := os.ReadFile(goodPath)
	write := func(name string, data []byte, perm os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(goodPath, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	cases := []struct{ path, want string }{
		{write("group", content, 0o640), "chmod 600"},
		{write("others", content, 0o604), "chmod 600"},
		{link, "symbolic link"},
		{fifo, "not a regular file"},
		{sub, "not a regular file"},
		{write("empty", nil, 0o600), "empty"},
		{write("short", content[:40], 0o600), "64 hex digits"},
		{write("garbled", bytes.Repeat([]byte("zz"), 32), 0o600), "64 hex digits"},
		{write("twice", append(append([]byte{}, content...), content...), 0o600), "64 hex digits"},
		{write("long", bytes.Repeat([]byte("a"), 4096), 0o600), "more than"},
		{filepath.Join(dir, "missing"), "no such file"},
	}
	if os.Geteuid() == 0 {
		p := write("nobody", content, 0o600)
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ path, want string }{p, "chown"})
	}
	for _, tc := range cases {
		tok, err := LoadToken(tc.path)
		if err == nil {
			t.Errorf("%s: loaded", tc.path)
			continue
		}
		if !tok.IsZero() || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: %v; want an error naming the file and saying %q", tc.path, err, tc.want)
		}
		noSecret(t, []string{err.Error()}, good)
	}
	// A token with a CRLF, as an editor may leave it, is read.
	crlf := write("crlf", append(bytes.TrimSpace(content), '\r', '\n'), 0o600)
	if tok, err := LoadToken(crlf); err != nil || tok != good {
		t.Errorf("token with CRLF: %v", err)
	}
}

func TestTokenIsRedacted(t *testing.T) {
	tok := mustToken(t)
	var texts []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T"} {
		texts = append(texts, fmt.Sprintf(verb, tok), fmt.Sprintf(verb, struct{ T Token }{tok}), fmt.Sprintf(verb, &tok))
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "token", tok, "wrapped", struct{ T Token }{tok})
	slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "token", tok, "ptr", &tok)
	texts = append(texts, buf.String(), tok.String())
	noSecret(t, texts, tok)
	if !strings.Contains(fmt.Sprint(tok), "redacted") {
		t.Errorf("Token prints as %q", fmt.Sprint(tok))
	}
}

func TestEnsureCertCreatesOnceAndReuses(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	c, err := EnsureCert(dir, []string{"ctl.example", "10.1.2.3", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	keyPath, certPath := filepath.Join(dir, KeyFile), filepath.Join(dir, CertFile)
	if m := mode(t, keyPath); m != 0o600 {
		t.Errorf("key mode %v, want -rw-------", m)
	}
	if m := mode(t, certPath); m != 0o644 {
		t.Errorf("certificate mode %v, want -rw-r--r--", m)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok {
		t.Errorf("key is a %T", leaf.PublicKey)
	}
	for _, h := range []string{"ctl.example", "localhost", "10.1.2.3", "127.0.0.1", "::1"} {
		if err := leaf.VerifyHostname(h); err != nil {
			t.Errorf("certificate does not name %s: %v", h, err)
		}
	}
	if len(leaf.DNSNames) != 2 || len(leaf.IPAddresses) != 3 || !leaf.IPAddresses[0].Equal(net.ParseIP("10.1.2.3")) {
		t.Errorf("names %v %v", leaf.DNSNames, leaf.IPAddresses)
	}
	if years := leaf.NotAfter.Sub(leaf.NotBefore).Hours() / 24 / 365; years < 10 {
		t.Errorf("valid for %.1f years", years)
	}

	again, err := EnsureCert(dir, []string{"other.example"})
	if err != nil || !bytes.Equal(again.Certificate[0], c.Certificate[0]) {
		t.Errorf("second start did not reuse the certificate: %v", err)
	}
	loaded, err := LoadCert(certPath, keyPath)
	if err != nil || !bytes.Equal(loaded.Certificate[0], c.Certificate[0]) {
		t.Errorf("LoadCert: %v", err)
	}

	// A key without its certificate (a crash between the two) keeps the key.
	os.Remove(certPath)
	re, err := EnsureCert(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	releaf, _ := x509.ParseCertificate(re.Certificate[0])
	if !leaf.PublicKey.(*ecdsa.PublicKey).Equal(releaf.PublicKey) {
		t.Error("a new key was made though the key file was there")
	}

	if err := os.Chmod(keyPath, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureCert(dir, nil); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("group-readable key: %v", err)
	}
	if _, err := LoadCert(certPath, keyPath); err == nil {
		t.Error("LoadCert took a group-readable key")
	}
	os.Chmod(keyPath, 0o600)
	if _, err := LoadCert(certPath, filepath.Join(dir, TokenFile+"-none")); err == nil {
		t.Error("LoadCert without a key")
	}
	if _, err := LoadCert(keyPath, keyPath); err == nil {
		t.Error("LoadCert of a key as a certificate")
	}
}
