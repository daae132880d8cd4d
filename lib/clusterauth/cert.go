package clusterauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"path/filepath"
	"time"
)

const (
	maxPEMFile = 1 << 20
	// certValidity is long: without a configured CA the certificate is
	// not what authenticates the controller (the token proof is), and a
	// cluster should not stop on the day it expires.
	certValidity = 20 * 365 * 24 * time.Hour
)

// EnsureCert returns the controller's certificate in dir: cluster.key
// (mode 0600) and cluster.crt read if they are there, else made on first
// start: an ECDSA P-256 key and a self-signed certificate naming hosts
// (host names or IP addresses) and localhost, 127.0.0.1 and ::1. A key
// without a certificate (a crash between the two) gets a new certificate
// for that key. A certificate is not remade when hosts change; remove both
// files to have one made for new names.
func EnsureCert(dir string, hosts []string) (tls.Certificate, error) {
	keyPath, certPath := filepath.Join(dir, KeyFile), filepath.Join(dir, CertFile)
	keyPEM, err := readSecret(keyPath, "TLS key file", maxPEMFile)
	if errors.Is(err, fs.ErrNotExist) {
		keyPEM, err = newKeyPEM()
		if err == nil {
			err = writeNew(keyPath, keyPEM, 0o600)
			if errors.Is(err, fs.ErrExist) {
				keyPEM, err = readSecret(keyPath, "TLS key file", maxPEMFile)
			} else if err != nil {
				err = fmt.Errorf("write TLS key file: %w", err)
			}
		}
	}
	if err != nil {
		return tls.Certificate{}, err
	}
	certPEM, err := readFile(certPath, "TLS certificate file", maxPEMFile, false)
	if errors.Is(err, fs.ErrNotExist) {
		certPEM, err = newCertPEM(keyPath, keyPEM, hosts)
		if err == nil {
			err = writeNew(certPath, certPEM, 0o644)
			if errors.Is(err, fs.ErrExist) {
				certPEM, err = readFile(certPath, "TLS certificate file", maxPEMFile, false)
			} else if err != nil {
				err = fmt.Errorf("write TLS certificate file: %w", err)
			}
		}
	}
	if err != nil {
		return tls.Certificate{}, err
	}
	return keyPair(certPath, keyPath, certPEM, keyPEM)
}

// LoadCert reads a configured certificate (PEM, its chain after it) and
// its key; the key file is refused unless it is the caller's or root's
// and closed to group and others.
func LoadCert(certFile, keyFile string) (tls.Certificate, error) {
	keyPEM, err := readSecret(keyFile, "TLS key file", maxPEMFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	certPEM, err := readFile(certFile, "TLS certificate file", maxPEMFile, false)
	if err != nil {
		return tls.Certificate{}, err
	}
	return keyPair(certFile, keyFile, certPEM, keyPEM)
}

func keyPair(certFile, keyFile string, certPEM, keyPEM []byte) (tls.Certificate, error) {
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS certificate %s with key %s: %w", certFile, keyFile, err)
	}
	return c, nil
}

func newKeyPEM() ([]byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate TLS key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("encode TLS key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func parseKey(keyPath string, keyPEM []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(keyPEM)
	if blk == nil {
		return nil, fmt.Errorf("TLS key file %s holds no PEM block", keyPath)
	}
	var k any
	var err error
	switch blk.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("TLS key file %s: %w", keyPath, err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("TLS key file %s: a %T cannot sign", keyPath, k)
	}
	return s, nil
}

func newCertPEM(keyPath string, keyPEM []byte, hosts []string) ([]byte, error) {
	key, err := parseKey(keyPath, keyPEM)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "xce cluster controller"},
		NotBefore:             now.Add(-time.Hour), // clocks a little behind
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	seen := map[string]bool{}
	for _, h := range append(append([]string(nil), hosts...), "localhost", "127.0.0.1", "::1") {
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("make TLS certificate: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
