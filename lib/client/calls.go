package client

import (
	"context"

	"xce/lib/api"
	"xce/lib/api/rpc"
)

// controllerService prefixes the Controller service's method names on the
// wire (lib/api/grpcapi's services.proto: package xce.api.v1).
const controllerService = "/xce.api.v1.Controller/"

// caller carries a Client's calls: the local socket's connection alone,
// or the failover among controller candidates.
type caller interface {
	Invoke(ctx context.Context, method string, in, out vtMessage) error
	// ServerStream sends in and returns the replies' stream.
	ServerStream(ctx context.Context, method string, in vtMessage) (recvStream, error)
	// BidiStream opens a bidirectional call (attach.go).
	BidiStream(ctx context.Context, method string, first, reply vtMessage) (*h2Stream, error)
	Close() error
}

// recvStream is a server-streaming call's replies: io.EOF after the last
// when the call succeeded, its status otherwise.
type recvStream interface {
	RecvMsg(m vtMessage) error
}

// unary calls the Controller's method with in and returns its reply.
func unary[R any, PR interface {
	*R
	vtMessage
}](ctx context.Context, c *Client, method string, in vtMessage) (*R, error) {
	out := PR(new(R))
	if err := c.cc.Invoke(ctx, controllerService+method, in, out); err != nil {
		return nil, err
	}
	return out, nil
}

// The Controller's unary calls (lib/api/grpcapi's services.proto says what
// each does; TestClientHasEveryMethod keeps this list complete).

func (c *Client) Submit(ctx context.Context, in *api.SubmitRequest) (*api.SubmitReply, error) {
	return unary[api.SubmitReply](ctx, c, "Submit", in)
}

func (c *Client) SubmitPack(ctx context.Context, in *api.SubmitPackRequest) (*api.SubmitPackReply, error) {
	return unary[api.SubmitPackReply](ctx, c, "SubmitPack", in)
}

func (c *Client) Signal(ctx context.Context, in *api.SignalRequest) (*api.SignalReply, error) {
	return unary[api.SignalReply](ctx, c, "Signal", in)
}

func (c *Client) ListQueues(ctx context.Context, in *api.ListQueuesRequest) (*api.ListQueuesReply, error) {
	return unary[api.ListQueuesReply](ctx, c, "ListQueues", in)
}

func (c *Client) ListHosts(ctx context.Context, in *api.ListHostsRequest) (*api.ListHostsReply, error) {
	return unary[api.ListHostsReply](ctx, c, "ListHosts", in)
}

func (c *Client) ListApps(ctx context.Context, in *api.ListAppsRequest) (*api.ListAppsReply, error) {
	return unary[api.ListAppsReply](ctx, c, "ListApps", in)
}

func (c *Client) Limits(ctx context.Context, in *api.LimitsRequest) (*api.LimitsReply, error) {
	return unary[api.LimitsReply](ctx, c, "Limits", in)
}

func (c *Client) Reservations(ctx context.Context, in *api.ReservationRequest) (*api.ReservationReply, error) {
	return unary[api.ReservationReply](ctx, c, "Reservations", in)
}

func (c *Client) JobGroups(ctx context.Context, in *api.JobGroupRequest) (*api.JobGroupReply, error) {
	return unary[api.JobGroupReply](ctx, c, "JobGroups", in)
}

func (c *Client) Claims(ctx context.Context, in *api.ClaimRequest) (*api.ClaimReply, error) {
	return unary[api.ClaimReply](ctx, c, "Claims", in)
}

func (c *Client) Reconfig(ctx context.Context, in *api.ReconfigRequest) (*api.ReconfigReply, error) {
	return unary[api.ReconfigReply](ctx, c, "Reconfig", in)
}

func (c *Client) Perfmon(ctx context.Context, in *api.PerfmonRequest) (*api.PerfmonReply, error) {
	return unary[api.PerfmonReply](ctx, c, "Perfmon", in)
}

func (c *Client) Control(ctx context.Context, in *api.ControlRequest) (*api.ControlReply, error) {
	return unary[api.ControlReply](ctx, c, "Control", in)
}

func (c *Client) Modify(ctx context.Context, in *api.ModifyRequest) (*api.ModifyReply, error) {
	return unary[api.ModifyReply](ctx, c, "Modify", in)
}

func (c *Client) Dependency(ctx context.Context, in *api.DependencyRequest) (*api.DependencyReply, error) {
	return unary[api.DependencyReply](ctx, c, "Dependency", in)
}

func (c *Client) Events(ctx context.Context, in *api.EventsRequest) (*api.EventsReply, error) {
	return unary[api.EventsReply](ctx, c, "Events", in)
}

func (c *Client) Info(ctx context.Context, in *api.ClusterInfoRequest) (*api.ClusterInfo, error) {
	return unary[api.ClusterInfo](ctx, c, "Info", in)
}

func (c *Client) Peek(ctx context.Context, in *rpc.PeekRequest) (*rpc.PeekReply, error) {
	return unary[rpc.PeekReply](ctx, c, "Peek", in)
}

func (c *Client) Credential(ctx context.Context, in *rpc.CredentialRequest) (*rpc.CredentialReply, error) {
	return unary[rpc.CredentialReply](ctx, c, "Credential", in)
}

// The server-streaming calls: Query and Accounting are read by QueryEach
// and Accounting (client.go, acct.go); Watch is the caller's.

// WatchStream is a Watch call's events.
type WatchStream struct{ s recvStream }

// Recv is the next event: io.EOF after the last when the call succeeded,
// its status otherwise.
func (w *WatchStream) Recv() (*api.WatchEvent, error) {
	ev := &api.WatchEvent{}
	if err := w.s.RecvMsg(ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// Watch follows jobs' changes.
func (c *Client) Watch(ctx context.Context, in *api.WatchRequest) (*WatchStream, error) {
	s, err := c.cc.ServerStream(ctx, controllerService+"Watch", in)
	if err != nil {
		return nil, err
	}
	return &WatchStream{s}, nil
}

func (c *Client) queryStream(ctx context.Context, in *api.QueryRequest) (recvStream, error) {
	return c.cc.ServerStream(ctx, controllerService+"Query", in)
}

func (c *Client) accountingStream(ctx context.Context, in *api.AcctRequest) (recvStream, error) {
	return c.cc.ServerStream(ctx, controllerService+"Accounting", in)
}
