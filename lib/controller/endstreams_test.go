package controller

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/peercred"
)

// TestEndStreams: on both kinds of server the controller's streams keep
// a GracefulStop waiting until EndStreams, which ends them Unavailable
// (the code a client reconnects on), while a unary call is still
// answered; a stream opened after EndStreams ends at once.
func TestEndStreams(t *testing.T) {
	for _, kind := range []string{"unixrpc", "grpc-go"} {
		t.Run(kind, func(t *testing.T) {
			c, _ := newTestController(t, 2, 0)
			var srv interface {
				Serve(net.Listener) error
				GracefulStop()
				Stop()
			}
			if kind == "unixrpc" {
				srv = NewServer(c)
			} else {
				g := grpc.NewServer(append([]grpc.ServerOption{grpc.Creds(peercred.Credentials())}, c.CallInterceptors()...)...)
				grpcapi.RegisterControllerServer(g, NewService(c))
				srv = g
			}
			cl := serveUnix(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			watch, err := cl.Watch(ctx, &api.WatchRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cl.ListQueues(ctx, &api.ListQueuesRequest{}); err != nil {
				t.Fatalf("ListQueues (which also makes sure the stream is running): %v", err)
			}
			stopped := make(chan struct{})
			go func() { srv.GracefulStop(); close(stopped) }()
			select {
			case <-stopped:
				t.Fatal("GracefulStop returned while a stream ran")
			case <-time.After(200 * time.Millisecond):
			}
			c.EndStreams()
			if _, err := watch.Recv(); status.Code(err) != codes.Unavailable {
				t.Fatalf("the stream after EndStreams: %v, want Unavailable", err)
			}
			select {
			case <-stopped:
			case <-ctx.Done():
				t.Fatal("GracefulStop did not return after EndStreams")
			}
		})
	}
}

// TestStreamAfterEndStreams: a stream started after EndStreams (on a
// server still serving) ends at once, Unavailable.
func TestStreamAfterEndStreams(t *testing.T) {
	c, _ := newTestController(t, 2, 0)
	cl := serveUnix(t, NewServer(c))
	c.EndStreams()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watch, err := cl.Watch(ctx, &api.WatchRequest{})
	if err == nil {
		_, err = watch.Recv()
	}
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("a stream after EndStreams: %v, want Unavailable", err)
	}
	if _, err := cl.ListQueues(ctx, &api.ListQueuesRequest{}); err != nil {
		t.Fatalf("a unary call after EndStreams: %v", err)
	}
}
