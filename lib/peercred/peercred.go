// Package peercred identifies the peer of a Unix socket by the kernel's
// SO_PEERCRED, recorded when the connection is accepted: gRPC
// TransportCredentials for a server on a Unix socket, whose handlers then
// read the caller's uid and gid with FromContext, never from a claim in
// the request.
package peercred

import (
	"context"
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// AuthType is the AuthType of the connections' AuthInfo.
const AuthType = "peercred"

// Credentials returns the TransportCredentials of a server on a Unix
// socket. A client may use them too: it learns nothing of the server.
func Credentials() credentials.TransportCredentials { return creds{} }

type creds struct{}

// Info is the AuthInfo of a Unix socket connection: on the server's side
// the peer's uid and gid, on the client's side nothing (OK false).
type Info struct {
	credentials.CommonAuthInfo
	UID, GID uint32
	OK       bool
}

// AuthType names the credentials.
func (Info) AuthType() string { return AuthType }

func (creds) ClientHandshake(_ context.Context, _ string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return conn, Info{}, nil
}

func (creds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	uid, gid, err := Of(conn)
	if err != nil {
		return nil, nil, err
	}
	return conn, Info{
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity},
		UID:            uid, GID: gid, OK: true,
	}, nil
}

// Of reads the uid and gid of a Unix socket connection's peer.
func Of(conn net.Conn) (uid, gid uint32, err error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, 0, errors.New("peer credentials need a Unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if serr != nil {
		return 0, 0, fmt.Errorf("read peer credentials: %w", serr)
	}
	return cred.Uid, cred.Gid, nil
}

func (creds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: AuthType}
}
func (c creds) Clone() credentials.TransportCredentials { return c }
func (creds) OverrideServerName(string) error           { return nil }

// FromContext is the uid and gid of an RPC's caller on a server with
// Credentials; ok is false when the RPC came another way.
func FromContext(ctx context.Context) (uid, gid uint32, ok bool) {
	p, found := peer.FromContext(ctx)
	if !found {
		return 0, 0, false
	}
	pi, isInfo := p.AuthInfo.(Info)
	if !isInfo || !pi.OK {
		return 0, 0, false
	}
	return pi.UID, pi.GID, true
}
