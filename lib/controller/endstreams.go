package controller

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// endableStreams lets the controller end the streams running on its
// servers (EndStreams). A server's GracefulStop answers the unary calls in
// flight and then waits for every stream, and a stream ends only when its
// client goes (a worker's link, bwait, xcetop, an interactive job's
// terminal): a leader handing on its office, or a stopping xced, ends them
// itself, and their clients reconnect.
type endableStreams struct {
	ctx context.Context // done once EndStreams is called
	end context.CancelFunc
}

func newEndableStreams() endableStreams {
	ctx, end := context.WithCancel(context.Background())
	return endableStreams{ctx: ctx, end: end}
}

// intercept runs a stream's handler with a context that also ends with
// EndStreams; a stream ended so is answered Unavailable, the code a client
// reconnects on.
func (e endableStreams) intercept(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	stop := context.AfterFunc(e.ctx, cancel)
	defer stop()
	err := h(srv, ctxStream{ServerStream: ss, ctx: ctx})
	if e.ctx.Err() != nil && ss.Context().Err() == nil {
		return status.Error(codes.Unavailable, "the controller stopped serving; reconnect")
	}
	return err
}

// ctxStream is a server stream with its own context.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s ctxStream) Context() context.Context { return s.ctx }

// EndStreams ends the streams running on the controller's servers, and
// any started later, so that a GracefulStop waits only for the unary calls
// in flight.
func (c *Controller) EndStreams() { c.streams.end() }
