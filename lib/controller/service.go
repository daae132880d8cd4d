package controller

import (
	"context"
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/rpc"
)

// Service is the gRPC face of the controller.
type Service struct {
	rpc.UnimplementedControllerServer
	c *Controller
}

// NewServer returns a gRPC server whose callers are identified by their
// Unix socket credentials (SO_PEERCRED), never by a claim in the request.
func NewServer(c *Controller) *grpc.Server {
	s := grpc.NewServer(grpc.Creds(peerCreds{}), grpc.MaxRecvMsgSize(MaxRequestBytes), grpc.MaxSendMsgSize(64<<20))
	rpc.RegisterControllerServer(s, &Service{c: c})
	return s
}

// MaxRequestBytes bounds one request a client sends: the largest is a
// submission, whose script (8 MiB) and environment (2 MiB, execve's own
// limit) checkSpec bounds on their own. gRPC refuses a larger message
// before decoding it (ResourceExhausted), so no client makes the
// controller hold more than this for one call.
const MaxRequestBytes = 16 << 20

// peerCreds is a TransportCredentials for Unix sockets that records the
// peer's uid and gid at connection time.
type peerCreds struct{}

// peerInfo is the AuthInfo of a Unix socket connection.
type peerInfo struct {
	credentials.CommonAuthInfo
	uid, gid uint32
}

func (peerInfo) AuthType() string { return "peercred" }

func (peerCreds) ClientHandshake(_ context.Context, _ string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return conn, peerInfo{}, nil
}

func (peerCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil, nil, errors.New("peer credentials need a Unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, nil, err
	}
	if serr != nil {
		return nil, nil, fmt.Errorf("read peer credentials: %w", serr)
	}
	return conn, peerInfo{
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity},
		uid:            cred.Uid, gid: cred.Gid,
	}, nil
}

func (peerCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "peercred"}
}
func (p peerCreds) Clone() credentials.TransportCredentials { return p }
func (peerCreds) OverrideServerName(string) error           { return nil }

func caller(ctx context.Context) (Caller, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Caller{}, status.Error(codes.Unauthenticated, "no peer")
	}
	pi, ok := p.AuthInfo.(peerInfo)
	if !ok {
		return Caller{}, status.Error(codes.Unauthenticated, "caller not identified by its socket credentials")
	}
	return Caller{UID: pi.uid, GID: pi.gid}, nil
}

func toStatus(err error) error {
	var ue *UserError
	if errors.As(err, &ue) {
		if ue.Permission {
			return status.Error(codes.PermissionDenied, ue.Msg)
		}
		if ue.Busy {
			return status.Error(codes.ResourceExhausted, ue.Msg)
		}
		return status.Error(codes.InvalidArgument, ue.Msg)
	}
	return status.Error(codes.Internal, err.Error())
}

func (s *Service) Submit(ctx context.Context, req *api.SubmitRequest) (*api.SubmitReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.c.Submit(who, req.Spec)
	if err != nil {
		return nil, toStatus(err)
	}
	return r, nil
}

// queryChunk bounds one streamed reply message.
const queryChunk = 5000

func (s *Service) Query(req *api.QueryRequest, stream grpc.ServerStreamingServer[api.QueryReply]) error {
	who, err := caller(stream.Context())
	if err != nil {
		return err
	}
	// A QueryReplyEncoded is a QueryReply on the wire; the reply is built
	// and sent part by part, never held whole.
	return s.c.QueryParts(who, req, queryChunk, func(p *api.QueryReplyEncoded) error { return stream.SendMsg(p) })
}

func (s *Service) Signal(ctx context.Context, req *api.SignalRequest) (*api.SignalReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return s.c.Signal(who, req), nil
}

func (s *Service) Watch(req *api.WatchRequest, stream grpc.ServerStreamingServer[api.WatchEvent]) error {
	if _, err := caller(stream.Context()); err != nil {
		return err
	}
	ch, cancel := s.c.Watch(req.Refs, req.Initial)
	defer cancel()
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case j, ok := <-ch:
			if !ok {
				return status.Error(codes.ResourceExhausted, "watcher fell behind; reconnect")
			}
			if err := stream.Send(&api.WatchEvent{Job: j}); err != nil {
				return err
			}
		}
	}
}

func (s *Service) ListQueues(ctx context.Context, req *api.ListQueuesRequest) (*api.ListQueuesReply, error) {
	if _, err := caller(ctx); err != nil {
		return nil, err
	}
	qs, err := s.c.ListQueues(req)
	if err != nil {
		return nil, toStatus(err)
	}
	return &api.ListQueuesReply{Queues: qs}, nil
}

func (s *Service) ListHosts(ctx context.Context, req *api.ListHostsRequest) (*api.ListHostsReply, error) {
	if _, err := caller(ctx); err != nil {
		return nil, err
	}
	reply, err := s.c.ListHosts(req)
	if err != nil {
		return nil, toStatus(err)
	}
	return reply, nil
}

func (s *Service) ListApps(ctx context.Context, req *api.ListAppsRequest) (*api.ListAppsReply, error) {
	if _, err := caller(ctx); err != nil {
		return nil, err
	}
	apps, err := s.c.Apps(req.Names)
	if err != nil {
		return nil, toStatus(err)
	}
	return &api.ListAppsReply{Apps: apps}, nil
}

func (s *Service) Reconfig(ctx context.Context, req *api.ReconfigRequest) (*api.ReconfigReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	notes, err := s.c.Reconfig(who, req.CheckOnly)
	if err != nil {
		return nil, toStatus(err)
	}
	return &api.ReconfigReply{Changes: notes}, nil
}

func (s *Service) Control(ctx context.Context, req *api.ControlRequest) (*api.ControlReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return s.c.Control(who, req), nil
}

func (s *Service) Modify(ctx context.Context, req *api.ModifyRequest) (*api.ModifyReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return s.c.Modify(who, req), nil
}

func (s *Service) Dependency(ctx context.Context, req *api.DependencyRequest) (*api.DependencyReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	st, err := s.c.Dependency(who, req.Expression)
	if err != nil {
		return nil, toStatus(err)
	}
	return &api.DependencyReply{Status: st}, nil
}

func (s *Service) Events(ctx context.Context, req *api.EventsRequest) (*api.EventsReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	evs, err := s.c.Events(who, req.Refs)
	if err != nil {
		return nil, toStatus(err)
	}
	return &api.EventsReply{Events: evs}, nil
}

func (s *Service) Info(ctx context.Context, _ *api.ClusterInfoRequest) (*api.ClusterInfo, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return s.c.Info(who), nil
}

func (s *Service) Peek(ctx context.Context, req *rpc.PeekRequest) (*rpc.PeekReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.c.Peek(who, req)
	if err != nil {
		return nil, toStatus(err)
	}
	return r, nil
}
