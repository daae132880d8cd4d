package controller

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/clusterauth"
	"xce/lib/peercred"
	"xce/lib/unixrpc"
)

// Service is the gRPC face of the controller.
type Service struct {
	grpcapi.UnimplementedControllerServer
	c *Controller
	// Mint, when set, serves Credential: the proofs of a user's command
	// over TCP (clusterauth.MintUser with the cluster token).
	Mint func(uid, gid uint32, ek []byte) (userProof, controllerProof []byte, err error)
}

// A ServerOption tunes NewServer.
type ServerOption func(*Service)

// WithMint serves Credential on the socket with mint (the cluster token's
// clusterauth.MintUser): local commands get the proofs that let them
// reach the leader over TCP when this controller is a standby.
func WithMint(mint func(uid, gid uint32, ek []byte) (userProof, controllerProof []byte, err error)) ServerOption {
	return func(s *Service) { s.Mint = mint }
}

// NewServer returns the server of the controller's Unix socket, whose
// callers are identified by their socket credentials (SO_PEERCRED), never
// by a claim in the request. It is lib/unixrpc's, not grpc-go's: each
// command is a new connection with one call, which unixrpc serves for
// about half the controller's CPU.
func NewServer(c *Controller, opts ...ServerOption) *unixrpc.Server {
	s := unixrpc.NewServer(peercred.Credentials(), unixrpc.MaxRecvMsgSize(MaxRequestBytes), unixrpc.MaxSendMsgSize(64<<20),
		unixrpc.ObserveCalls(c.ObserveCall), unixrpc.StreamInterceptor(c.streams.intercept))
	svc := &Service{c: c}
	for _, o := range opts {
		o(svc)
	}
	grpcapi.RegisterControllerServer(s, svc)
	return s
}

// CallWorkers has a server run its calls on a pool of long-lived
// goroutines rather than on a new one per call: a new goroutine's stack
// grows by copying while a submission runs (6% of the controller's CPU
// under 32 submitting clients). A call that finds every worker busy still
// gets a goroutine of its own; the pool is sized for the many calls that
// wait on a synced commit at once.
func CallWorkers() grpc.ServerOption { return grpc.NumStreamWorkers(callWorkers) }

const callWorkers = 64

// NewService is the Controller service of c, for a server with other
// credentials (the --listen port): its callers are users whose commands
// proved their uid over TCP (clusterauth.PeerUser), or Unix socket peers.
func NewService(c *Controller, opts ...ServerOption) *Service {
	svc := &Service{c: c}
	for _, o := range opts {
		o(svc)
	}
	return svc
}

// MaxRequestBytes bounds one request a client sends: the largest is a
// submission, whose script (8 MiB) and environment (2 MiB, execve's own
// limit) checkSpec bounds on their own. gRPC refuses a larger message
// before decoding it (ResourceExhausted), so no client makes the
// controller hold more than this for one call.
const MaxRequestBytes = 16 << 20

// caller is who made the call: the peer of the Unix socket (SO_PEERCRED),
// or a user's command over TCP whose proof of its uid and gid, minted by
// the xced or `xced worker` of its host, the handshake checked.
func caller(ctx context.Context) (Caller, error) {
	if uid, gid, ok := peercred.FromContext(ctx); ok {
		return Caller{UID: uid, GID: gid}, nil
	}
	if uid, gid, ok := clusterauth.PeerUser(ctx); ok {
		return Caller{UID: uid, GID: gid, Remote: true}, nil
	}
	return Caller{}, status.Error(codes.Unauthenticated, "caller not identified by its socket credentials or a user's proof")
}

// Credential mints a user's proofs for the TLS session the command opened
// to another controller: for the socket's peer only, never over TCP, as
// a proof could otherwise be minted for a uid taken from another proof.
func (s *Service) Credential(ctx context.Context, req *rpc.CredentialRequest) (*rpc.CredentialReply, error) {
	return Credential(ctx, s.Mint, req)
}

// Credential is the Credential RPC with mint, for any server on a Unix
// socket with peercred.Credentials (xced's, `xced worker`'s).
func Credential(ctx context.Context, mint func(uid, gid uint32, ek []byte) ([]byte, []byte, error), req *rpc.CredentialRequest) (*rpc.CredentialReply, error) {
	if mint == nil {
		return nil, status.Error(codes.Unimplemented, "this controller mints no user credentials")
	}
	uid, gid, ok := peercred.FromContext(ctx)
	if !ok {
		return nil, status.Error(codes.PermissionDenied, "user credentials are given on the local socket only")
	}
	if len(req.GetExporter()) != 32 {
		return nil, status.Errorf(codes.InvalidArgument, "the exporter is %d bytes, not 32", len(req.GetExporter()))
	}
	up, cp, err := mint(uid, gid, req.GetExporter())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "mint user credentials: %v", err)
	}
	return &rpc.CredentialReply{Uid: uid, Gid: gid, UserProof: up, ControllerProof: cp}, nil
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

func (s *Service) SubmitPack(ctx context.Context, req *api.SubmitPackRequest) (*api.SubmitPackReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if len(req.Specs) > api.MaxPackJobs {
		return nil, status.Errorf(codes.InvalidArgument, "A job pack holds at most %d jobs (%d sent)", api.MaxPackJobs, len(req.Specs))
	}
	results := s.c.SubmitPack(who, req.Specs, req.StopOnError)
	reply := &api.SubmitPackReply{Results: make([]*api.SubmitResult, len(results))}
	for i, r := range results {
		if r.Err != nil {
			reply.Results[i] = &api.SubmitResult{Error: status.Convert(toStatus(r.Err)).Message()}
			continue
		}
		reply.Results[i] = &api.SubmitResult{Reply: r.Reply}
	}
	return reply, nil
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

// Limits is blimits; any user may see the limits, as in LSF.
func (s *Service) Limits(ctx context.Context, req *api.LimitsRequest) (*api.LimitsReply, error) {
	if _, err := caller(ctx); err != nil {
		return nil, err
	}
	return s.c.Limits(), nil
}

// Reservations is brsvadd, brsvs and brsvdel (resv.go).
func (s *Service) Reservations(ctx context.Context, req *api.ReservationRequest) (*api.ReservationReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return s.c.Reservations(who, req), nil
}

// JobGroups is bgadd, bgdel, bgmod and bjgroup (jobgroup.go).
func (s *Service) JobGroups(ctx context.Context, req *api.JobGroupRequest) (*api.JobGroupReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return s.c.JobGroups(who, req), nil
}

// Claims is bclaim (claim.go).
func (s *Service) Claims(ctx context.Context, req *api.ClaimRequest) (*api.ClaimReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return s.c.Claims(who, req), nil
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

func (s *Service) Perfmon(ctx context.Context, req *api.PerfmonRequest) (*api.PerfmonReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	reply, err := s.c.Perfmon(who, req)
	if err != nil {
		return nil, toStatus(err)
	}
	return reply, nil
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
