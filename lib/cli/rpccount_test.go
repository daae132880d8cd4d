package cli

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/client"
)

// fakeController answers Submit and Query and records every call made to
// it, unary or streamed.
type fakeController struct {
	grpcapi.UnimplementedControllerServer
	mu    sync.Mutex
	calls []string
}

func (f *fakeController) record(method string) {
	f.mu.Lock()
	f.calls = append(f.calls, filepath.Base(method))
	f.mu.Unlock()
}

func (f *fakeController) Submit(context.Context, *api.SubmitRequest) (*api.SubmitReply, error) {
	return &api.SubmitReply{JobId: 7, Queue: "normal", DefaultQueue: true}, nil
}

func (f *fakeController) Query(req *api.QueryRequest, s grpc.ServerStreamingServer[api.QueryReply]) error {
	return s.Send(&api.QueryReply{})
}

// serveFake starts a fake controller on a socket in a fresh XCE_DIR.
func serveFake(t *testing.T) *fakeController {
	dir := t.TempDir()
	t.Setenv("XCE_DIR", dir)
	ln, err := net.Listen("unix", filepath.Join(dir, client.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeController{}
	srv := grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			f.record(info.FullMethod)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			f.record(info.FullMethod)
			return h(srv, ss)
		}))
	grpcapi.RegisterControllerServer(srv, f)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return f
}

// A plain submission is one call to the controller, and so is a query of
// one job: nothing is asked beforehand (the cluster, the queues, the
// parameters) that would cost a round trip each time a command runs.
func TestOneCallPerCommand(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"bsub", []string{"-H", "true"}, "Submit"},
		{"bjobs", []string{"7"}, "Query"},
		{"bjobs", []string{"-l", "7"}, "Query"},
		{"bjobs", []string{"-o", "jobid stat", "-json", "7", "8", "9"}, "Query"},
	} {
		f := serveFake(t)
		var out bytes.Buffer
		old := sys
		sys.stdout, sys.stderr = &out, &out
		Main(tc.cmd, tc.args)
		sys = old
		if strings.Join(f.calls, " ") != tc.want {
			t.Errorf("%s %v made calls %v, want [%s]\n%s", tc.cmd, tc.args, f.calls, tc.want, out.String())
		}
	}
}
