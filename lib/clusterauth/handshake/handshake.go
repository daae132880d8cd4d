// Package handshake owns the client's side of the cluster proof that
// follows the TLS 1.3 handshake on the controller's port (lib/clusterauth
// describes the protocol), on any net.Conn and without gRPC: xce-dial
// runs it for a user's command that reaches a controller over TCP
// (ServeDial; the commands themselves link no TLS, see lib/tlsdial),
// lib/clusterauth's gRPC credentials wrap it for workers and controller
// candidates.
package handshake

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"xce/lib/tlsdial"
)

const (
	// ExporterLabel is the TLS exporter label both sides derive ek under.
	ExporterLabel = "EXPORTER-xce-cluster"
	// EKLen is the length of ek.
	EKLen = 32
	// MACLen is the length of each proof.
	MACLen = sha256.Size

	// Version1 is the protocol's version byte.
	Version1 = 1

	// The server's answer after the version byte.
	StatusOK          = 'A'
	StatusRefused     = 'R'
	StatusUnsupported = 'U'

	// RoleUser is a user's command's role byte.
	RoleUser = 'U'
)

// The refusals: the token does not match, and retrying will not help.
// They are defined in lib/tlsdial, which commands link without TLS.
var (
	ErrRefused     = tlsdial.ErrRefused
	ErrUnproven    = tlsdial.ErrUnproven
	ErrUserRefused = tlsdial.ErrUserRefused
)

// IsRefused says whether err is, or carries as text, one of the
// refusals (tlsdial.IsRefused).
func IsRefused(err error) bool { return tlsdial.IsRefused(err) }

// Exporter is the session's ek.
func Exporter(tc *tls.Conn) ([]byte, error) {
	st := tc.ConnectionState()
	return st.ExportKeyingMaterial(ExporterLabel, nil, EKLen)
}

// UserIDs is the uid and gid as the user's frame and proofs carry them.
func UserIDs(uid, gid uint32) []byte {
	var b [8]byte
	binary.BigEndian.PutUint32(b[:4], uid)
	binary.BigEndian.PutUint32(b[4:], gid)
	return b[:]
}

// A Prover gives, for the session's ek, the frame to send after the
// version and role bytes, the controller's proof to expect back, and the
// error to wrap when the controller refuses the frame.
type Prover func(ctx context.Context, ek []byte) (frame, want []byte, refused error, err error)

// Client runs TLS 1.3 over raw (cfg as given, at least TLS 1.3 and "h2")
// and then the proof for role, within timeout and ctx. On failure raw is
// closed.
func Client(ctx context.Context, raw net.Conn, cfg *tls.Config, role byte, timeout time.Duration, prove Prover) (conn *tls.Conn, err error) {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	raw.SetDeadline(deadline)
	// Cancellation interrupts the reads below as the deadline does.
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	addr := raw.RemoteAddr().String()
	tc := tls.Client(raw, cfg)
	defer func() {
		if !stop() && err == nil {
			err = ctx.Err()
		}
		if err != nil {
			conn = nil
			tc.Close()
		}
	}()
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("clusterauth: TLS handshake with %s: %w", addr, err)
	}
	ek, err := Exporter(tc)
	if err != nil {
		return nil, fmt.Errorf("clusterauth: TLS exporter with %s: %w", addr, err)
	}
	body, want, refused, err := prove(ctx, ek)
	if err != nil {
		return nil, err
	}
	frame := append([]byte{Version1, role}, body...)
	if _, err := tc.Write(frame); err != nil {
		return nil, fmt.Errorf("clusterauth: sending the cluster proof to %s: %w", addr, err)
	}
	var hdr [2]byte
	if _, err := io.ReadFull(tc, hdr[:]); err != nil {
		// Closed without an answer is not a refusal: a controller that is
		// stopping does so too, and the client should try again.
		return nil, fmt.Errorf("clusterauth: reading the cluster proof from %s: %w", addr, err)
	}
	switch {
	case hdr[0] != Version1:
		return nil, fmt.Errorf("clusterauth: %s answered with version %d: %w", addr, hdr[0], ErrUnproven)
	case hdr[1] == StatusRefused:
		return nil, fmt.Errorf("clusterauth: %s: %w", addr, refused)
	case hdr[1] == StatusUnsupported:
		return nil, fmt.Errorf("clusterauth: %s does not support the role %#x of protocol version %d", addr, role, Version1)
	case hdr[1] != StatusOK:
		return nil, fmt.Errorf("clusterauth: %s answered with status %#x: %w", addr, hdr[1], ErrUnproven)
	}
	got := make([]byte, MACLen)
	if _, err := io.ReadFull(tc, got); err != nil {
		return nil, fmt.Errorf("clusterauth: reading the cluster proof from %s: %w", addr, err)
	}
	if !hmac.Equal(got, want) {
		return nil, fmt.Errorf("clusterauth: %s: %w", addr, ErrUnproven)
	}
	raw.SetDeadline(time.Time{})
	return tc, nil
}

// User runs Client for a user's command, whose proofs mint gives for the
// session (the local socket's Credential call).
func User(ctx context.Context, raw net.Conn, cfg *tls.Config, timeout time.Duration,
	mint func(ctx context.Context, ek []byte) (uid, gid uint32, userProof, controllerProof []byte, err error)) (*tls.Conn, error) {
	addr := raw.RemoteAddr().String()
	return Client(ctx, raw, cfg, RoleUser, timeout, func(ctx context.Context, ek []byte) ([]byte, []byte, error, error) {
		uid, gid, up, cp, err := mint(ctx, ek)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("clusterauth: the user's proof for %s: %w", addr, err)
		}
		if len(up) != MACLen || len(cp) != MACLen {
			return nil, nil, nil, fmt.Errorf("clusterauth: the user's proofs for %s are %d and %d bytes, not %d", addr, len(up), len(cp), MACLen)
		}
		return append(UserIDs(uid, gid), up...), cp, ErrUserRefused, nil
	})
}

// ClientConfig is the TLS configuration of a client's session with the
// controller at host: TLS 1.3 and HTTP/2, the certificate checked against
// roots when given. Without roots the controller is authenticated by its
// proof of the token, bound to this session, not by its certificate.
func ClientConfig(host string, roots *x509.CertPool) *tls.Config {
	return &tls.Config{
		ServerName:         host,
		MinVersion:         tls.VersionTLS13,
		NextProtos:         []string{"h2"},
		RootCAs:            roots,
		InsecureSkipVerify: roots == nil,
	}
}

// ServeDial is xce-dial (lib/tlsdial): it connects to target over TCP,
// runs TLS and the user's proof within timeout, with the proofs that the
// command on the other end of in and out mints, and then relays the
// session between the pipe and the controller until either side ends it.
// Its failures are written to out as the protocol's fail line too.
func ServeDial(ctx context.Context, target string, timeout time.Duration, in io.Reader, out io.Writer) error {
	br := bufio.NewReaderSize(in, 4096)
	fail := func(stage string, err error) error {
		tlsdial.WriteLine(out, "fail", stage, err.Error())
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(dctx, "tcp", target)
	if err != nil {
		return fail(tlsdial.StageDial, err)
	}
	host := target
	if h, _, err := net.SplitHostPort(target); err == nil {
		host = h
	}
	// The controller is authenticated by its proof of the cluster token,
	// bound to this session, not by its certificate.
	tc, err := User(dctx, nc, ClientConfig(host, nil), timeout, func(ctx context.Context, ek []byte) (uint32, uint32, []byte, []byte, error) {
		if err := tlsdial.WriteLine(out, "ek", hex.EncodeToString(ek)); err != nil {
			return 0, 0, nil, nil, err
		}
		word, rest, err := tlsdial.ReadLine(br)
		switch {
		case err != nil:
			return 0, 0, nil, nil, fmt.Errorf("reading the command's proof: %w", err)
		case word == "nomint":
			return 0, 0, nil, nil, errors.New(rest)
		case word != "proof":
			return 0, 0, nil, nil, fmt.Errorf("the command sent %q, not a proof", word)
		}
		return tlsdial.ParseProof(rest)
	})
	if err != nil {
		return fail(tlsdial.StageHandshake, err)
	}
	defer tc.Close()
	if err := tlsdial.WriteLine(out, "ok"); err != nil {
		return err
	}
	// The command's end of the pipe closing ends the session; the
	// controller's closing ends the helper.
	go func() {
		io.Copy(tc, br)
		tc.Close()
	}()
	_, err = io.Copy(out, tc)
	return err
}
