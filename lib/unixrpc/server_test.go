package unixrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"xce/lib/peercred"
)

// The test service: Echo (unary), Repeat (server streaming) and Sum
// (client streaming), on wrapperspb.BytesValue, driven by the request.
type testService struct {
	cancelled chan string // what Echo "wait" saw when its context ended
	running   chan struct{}
}

var testDesc = grpc.ServiceDesc{
	ServiceName: "test.T",
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "Echo", Handler: echoHandler}},
	Streams: []grpc.StreamDesc{
		{StreamName: "Repeat", Handler: repeatHandler, ServerStreams: true},
		{StreamName: "Sum", Handler: sumHandler, ClientStreams: true},
	},
}

// echoHandler is Echo's handler as protoc-gen-go-grpc writes them: it
// runs the server's interceptor, when there is one, around the call.
func echoHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(wrapperspb.BytesValue)
	if err := dec(in); err != nil {
		return nil, err
	}
	ts := srv.(*testService)
	if interceptor == nil {
		return ts.echo(ctx, in)
	}
	return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/test.T/Echo"},
		func(ctx context.Context, req any) (any, error) { return ts.echo(ctx, req.(*wrapperspb.BytesValue)) })
}

func (ts *testService) echo(ctx context.Context, in *wrapperspb.BytesValue) (any, error) {
	switch string(in.Value) {
	case "wait":
		ts.running <- struct{}{}
		<-ctx.Done()
		ts.cancelled <- ctx.Err().Error()
		return nil, ctx.Err()
	case "fail":
		st, err := status.New(codes.FailedPrecondition, "100% not today\n").WithDetails(wrapperspb.String("detail"))
		if err != nil {
			return nil, err
		}
		return nil, st.Err()
	case "long":
		return nil, status.Error(codes.InvalidArgument, strings.Repeat("long message ", 4000))
	case "plain error":
		return nil, errors.New("a plain error")
	case "peer":
		uid, gid, ok := peercred.FromContext(ctx)
		return wrapperspb.Bytes(fmt.Appendf(nil, "%d %d %v", uid, gid, ok)), nil
	}
	return in, nil
}

// repeatHandler sends the request's bytes back "count" times, count
// being the request's first line.
func repeatHandler(_ any, stream grpc.ServerStream) error {
	in := new(wrapperspb.BytesValue)
	if err := stream.RecvMsg(in); err != nil {
		return err
	}
	head, body, _ := bytes.Cut(in.Value, []byte("\n"))
	n, _ := strconv.Atoi(string(head))
	for i := 0; i < n; i++ {
		if err := stream.SendMsg(wrapperspb.Bytes(body)); err != nil {
			return err
		}
	}
	return nil
}

// sumHandler answers the total length of the messages it was sent.
func sumHandler(_ any, stream grpc.ServerStream) error {
	total := 0
	for {
		in := new(wrapperspb.BytesValue)
		err := stream.RecvMsg(in)
		if err == io.EOF {
			return stream.SendMsg(wrapperspb.Bytes([]byte(strconv.Itoa(total))))
		}
		if err != nil {
			return err
		}
		total += len(in.Value)
	}
}

type fixture struct {
	srv  *Server
	svc  *testService
	sock string
	cc   *grpc.ClientConn
	done chan error
}

func serve(t testing.TB, opts ...Option) *fixture {
	t.Helper()
	f := &fixture{
		srv:  NewServer(peercred.Credentials(), opts...),
		svc:  &testService{cancelled: make(chan string, 10), running: make(chan struct{}, 10)},
		sock: filepath.Join(t.TempDir(), "s.sock"),
		done: make(chan error, 1),
	}
	f.srv.RegisterService(&testDesc, f.svc)
	lis, err := net.Listen("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() { f.done <- f.srv.Serve(lis) }()
	t.Cleanup(f.srv.Stop)
	f.cc = f.dial(t)
	return f
}

func (f *fixture) dial(t testing.TB) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient("unix://"+f.sock, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func echo(ctx context.Context, cc *grpc.ClientConn, b []byte) ([]byte, error) {
	out := new(wrapperspb.BytesValue)
	err := cc.Invoke(ctx, "/test.T/Echo", wrapperspb.Bytes(b), out)
	return out.Value, err
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestUnary(t *testing.T) {
	f := serve(t, MaxRecvMsgSize(8<<20))
	ctx := ctxT(t)
	for _, n := range []int{0, 1, 16 << 10, 3 << 20} {
		// Larger than grpc-go's 64 KB windows: both sides wait on
		// window updates.
		in := bytes.Repeat([]byte{'x'}, n)
		got, err := echo(ctx, f.cc, in)
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("echo of %d bytes: %d bytes, %v", n, len(got), err)
		}
	}
	got, err := echo(ctx, f.cc, []byte("peer"))
	if want := fmt.Sprintf("%d %d true", os.Getuid(), os.Getgid()); err != nil || string(got) != want {
		t.Fatalf("peer: %q, %v; want %q", got, err, want)
	}
}

// TestInterceptors: the unary interceptor runs around each unary call
// with its method and request, and what it answers is the reply; the
// stream interceptor runs around each streaming call, and the stream it
// hands on is the one the handler uses.
func TestInterceptors(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	f := serve(t, UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		mu.Lock()
		seen = append(seen, info.FullMethod+" "+string(req.(*wrapperspb.BytesValue).Value))
		mu.Unlock()
		if string(req.(*wrapperspb.BytesValue).Value) == "refuse" {
			return nil, status.Error(codes.PermissionDenied, "refused by the interceptor")
		}
		return h(ctx, req)
	}), StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s client=%v server=%v", info.FullMethod, info.IsClientStream, info.IsServerStream))
		mu.Unlock()
		return h(srv, doubled{ss})
	}))
	ctx := ctxT(t)
	if got, err := echo(ctx, f.cc, []byte("hello")); err != nil || string(got) != "hello" {
		t.Fatalf("echo through the interceptor: %q, %v", got, err)
	}
	if _, err := echo(ctx, f.cc, []byte("refuse")); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a call the interceptor refuses: %v", err)
	}
	st, err := f.cc.NewStream(ctx, &testDesc.Streams[0], "/test.T/Repeat")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendMsg(wrapperspb.Bytes([]byte("1\nx"))); err != nil {
		t.Fatal(err)
	}
	st.CloseSend()
	for range 2 { // the interceptor's stream sends each message twice
		if out := new(wrapperspb.BytesValue); st.RecvMsg(out) != nil || string(out.Value) != "x" {
			t.Fatalf("stream: %q", out.Value)
		}
	}
	if err := st.RecvMsg(new(wrapperspb.BytesValue)); err != io.EOF {
		t.Fatalf("the stream's end: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/test.T/Echo hello", "/test.T/Echo refuse", "/test.T/Repeat client=false server=true"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("the interceptors saw %q, want %q", seen, want)
	}
}

// doubled is a server stream that sends every message twice.
type doubled struct{ grpc.ServerStream }

func (d doubled) SendMsg(m any) error {
	if err := d.ServerStream.SendMsg(m); err != nil {
		return err
	}
	return d.ServerStream.SendMsg(m)
}

func TestStatuses(t *testing.T) {
	f := serve(t, MaxRecvMsgSize(1<<20))
	ctx := ctxT(t)
	_, err := echo(ctx, f.cc, []byte("fail"))
	st := status.Convert(err)
	if st.Code() != codes.FailedPrecondition || st.Message() != "100% not today\n" || len(st.Details()) != 1 {
		t.Fatalf("fail: %v, details %v", err, st.Details())
	}
	if d, ok := st.Details()[0].(*wrapperspb.StringValue); !ok || d.Value != "detail" {
		t.Fatalf("detail: %#v", st.Details()[0])
	}
	for _, c := range []struct {
		method string
		in     []byte
		code   codes.Code
		msg    string
	}{
		{"/test.T/Echo", []byte("plain error"), codes.Unknown, "a plain error"},
		// 52 KB of trailers: HEADERS and CONTINUATION frames.
		{"/test.T/Echo", []byte("long"), codes.InvalidArgument, strings.Repeat("long message ", 4000)},
		{"/test.T/Echo", make([]byte, 1<<20+1), codes.ResourceExhausted, "grpc: received message larger than max (1048581 vs. 1048576)"},
		{"/test.T/Nope", nil, codes.Unimplemented, "unknown method Nope for service test.T"},
		{"/test.U/Echo", nil, codes.Unimplemented, "unknown service test.U"},
	} {
		err := f.cc.Invoke(ctx, c.method, wrapperspb.Bytes(c.in), new(wrapperspb.BytesValue))
		if st := status.Convert(err); st.Code() != c.code || st.Message() != c.msg {
			t.Errorf("%s: %v; want %v %q", c.method, err, c.code, c.msg)
		}
	}
	// The connection serves on after each.
	if _, err := echo(ctx, f.cc, []byte("ok")); err != nil {
		t.Fatal(err)
	}
}

func TestDeadlineAndCancel(t *testing.T) {
	f := serve(t)
	ctx, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
	defer cancel()
	if _, err := echo(ctx, f.cc, []byte("wait")); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("deadline: %v", err)
	}
	// The server's own deadline, or the client's reset at its deadline,
	// whichever comes first.
	if got := <-f.svc.cancelled; got != context.DeadlineExceeded.Error() && got != context.Canceled.Error() {
		t.Fatalf("handler saw %q", got)
	}
	<-f.svc.running

	ctx, cancel = context.WithCancel(ctxT(t))
	errc := make(chan error, 1)
	go func() { _, err := echo(ctx, f.cc, []byte("wait")); errc <- err }()
	<-f.svc.running
	cancel()
	if err := <-errc; status.Code(err) != codes.Canceled {
		t.Fatalf("cancel: %v", err)
	}
	if got := <-f.svc.cancelled; got != context.Canceled.Error() {
		t.Fatalf("handler saw %q", got)
	}
}

func TestServerStreaming(t *testing.T) {
	f := serve(t)
	ctx := ctxT(t)
	body := bytes.Repeat([]byte("0123456789"), 10_000)
	stream, err := f.cc.NewStream(ctx, &testDesc.Streams[0], "/test.T/Repeat")
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SendMsg(wrapperspb.Bytes(append([]byte("200\n"), body...))); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		m := new(wrapperspb.BytesValue)
		err := stream.RecvMsg(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m.Value, body) {
			t.Fatalf("message %d: %d bytes", n, len(m.Value))
		}
		n++
		if n%50 == 0 {
			time.Sleep(20 * time.Millisecond) // a slow reader: the server waits on its window
		}
	}
	if n != 200 {
		t.Fatalf("%d messages, want 200", n)
	}
}

func TestClientStreaming(t *testing.T) {
	f := serve(t)
	stream, err := f.cc.NewStream(ctxT(t), &testDesc.Streams[1], "/test.T/Sum")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := stream.SendMsg(wrapperspb.Bytes(make([]byte, 10_000))); err != nil {
			t.Fatal(err)
		}
	}
	stream.CloseSend()
	m := new(wrapperspb.BytesValue)
	if err := stream.RecvMsg(m); err != nil || string(m.Value) != "1000000" {
		t.Fatalf("sum: %q, %v", m.Value, err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	f := serve(t)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for g := 0; g < 50; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				in := []byte(fmt.Sprintf("%d-%d", g, i))
				got, err := echo(ctx, f.cc, in)
				if err == nil && !bytes.Equal(got, in) {
					err = fmt.Errorf("%q came back as %q", in, got)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestGracefulStop(t *testing.T) {
	f := serve(t)
	ctx := ctxT(t)
	if _, err := echo(ctx, f.cc, []byte("x")); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { _, err := echo(ctx, f.cc, []byte("wait")); errc <- err }()
	<-f.svc.running
	stopped := make(chan struct{})
	go func() { f.srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("GracefulStop returned while a call ran")
	case <-time.After(100 * time.Millisecond):
	}
	// A new connection is refused while the server drains.
	if _, err := echo(ctx, f.dial(t), []byte("x")); status.Code(err) != codes.Unavailable {
		t.Fatalf("call while draining: %v", err)
	}
	f.srv.Stop() // cancels the call left
	<-stopped
	if err := <-errc; err == nil {
		t.Fatal("the call cut by Stop succeeded")
	}
	if err := <-f.done; err != nil {
		t.Fatalf("Serve after stop: %v", err)
	}
}

// A peer that does not speak HTTP/2, or breaks its rules, loses its
// connection; the server serves on.
func TestBadPeers(t *testing.T) {
	f := serve(t)
	for _, junk := range []string{
		"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x00\x00\x00\x00\x00\x00" + // SETTINGS
			"\x00\x00\x01\x01\x05\x00\x00\x00\x02\x82", // HEADERS on stream 2 (even)
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x04\x00\x01\x00\x00\x00\x07abcd", // DATA on a stream never opened
	} {
		nc, err := net.Dial("unix", f.sock)
		if err != nil {
			t.Fatal(err)
		}
		nc.Write([]byte(junk))
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(nc); err != nil {
			t.Errorf("%q: the server kept the connection: %v", junk, err)
		}
		nc.Close()
	}
	if _, err := echo(ctxT(t), f.cc, []byte("x")); err != nil {
		t.Fatal(err)
	}
}

// A client that goes away mid-stream ends the call: the handler's sends
// fail and the connection is released.
func TestClientGone(t *testing.T) {
	f := serve(t)
	cc := f.dial(t)
	stream, err := cc.NewStream(ctxT(t), &testDesc.Streams[0], "/test.T/Repeat")
	if err != nil {
		t.Fatal(err)
	}
	stream.SendMsg(wrapperspb.Bytes(append([]byte("1000000\n"), make([]byte, 10_000)...)))
	stream.CloseSend()
	if err := stream.RecvMsg(new(wrapperspb.BytesValue)); err != nil {
		t.Fatal(err)
	}
	cc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.srv.mu.Lock()
		n := len(f.srv.conns)
		f.srv.mu.Unlock()
		if n <= 1 { // f.cc's, if it connected
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still served", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTimeouts(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"1S", time.Second, false}, {"99999999n", 99999999, false}, {"5M", 5 * time.Minute, false},
		{"2H", 2 * time.Hour, false}, {"10m", 10 * time.Millisecond, false}, {"7u", 7 * time.Microsecond, false},
		{"S", 0, true}, {"1x", 0, true}, {"-1S", 0, true}, {"123456789S", 0, true},
	} {
		got, err := decodeTimeout(c.in)
		if (err != nil) != c.bad || !c.bad && got != c.want {
			t.Errorf("decodeTimeout(%q) = %v, %v", c.in, got, err)
		}
	}
	if got := encodeGrpcMessage("a%b\nc é"); got != "a%25b%0Ac %C3%A9" {
		t.Errorf("encodeGrpcMessage: %q", got)
	}
}

// FuzzConn feeds a connection arbitrary frames after the preface: the
// server must neither crash nor hold the connection, or its bytes, once
// the peer has gone, and must serve on. testdata/fuzz/FuzzConn holds
// seeds shaped as attacks (floods, lengths over the bound, many streams).
func FuzzConn(f *testing.F) {
	preface := "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	f.Add([]byte("\x00\x00\x00\x04\x00\x00\x00\x00\x00"))                                      // SETTINGS
	f.Add([]byte("\x00\x00\x01\x01\x05\x00\x00\x00\x02\x82"))                                  // HEADERS, even stream
	f.Add([]byte("\x00\x00\x04\x00\x01\x00\x00\x00\x07abcd"))                                  // DATA, unopened stream
	f.Add([]byte("\x00\x00\x08\x06\x00\x00\x00\x00\x00pingpong"))                              // PING
	f.Add([]byte("\x00\x00\x04\x08\x00\x00\x00\x00\x00\x7f\xff\xff\xff"))                      // WINDOW_UPDATE overflow
	f.Add([]byte("\x00\x00\x05\x01\x04\x00\x00\x00\x01\x83\x86\x44\x01/\x00\x00\x04\x03\x00")) // HEADERS, then junk
	fx := serve(f)
	f.Fuzz(func(t *testing.T, frames []byte) {
		nc, err := net.Dial("unix", fx.sock)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		// Read as the frames go: the server's answers to them must not
		// fill the socket and stop it reading.
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		read := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, nc); read <- err }()
		nc.Write(append([]byte(preface), frames...))
		nc.(*net.UnixConn).CloseWrite()
		if err := <-read; err != nil {
			t.Fatalf("the server kept a connection whose peer had stopped writing: %v", err)
		}
		// What the connection held went with it.
		waitFor(t, "the connection's unread bytes released", func() bool { return fx.srv.buffered.Load() == 0 })
		if _, err := echo(ctxT(t), fx.cc, []byte("x")); err != nil {
			t.Fatalf("the server stopped serving: %v", err)
		}
	})
}
