package unixrpc

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"xce/lib/peercred"
)

// The tests here are a local user's attacks on the socket: each must end
// with the server whole and serving.

// rawConn is a client that writes what frames it likes, windows or not.
type rawConn struct {
	nc     net.Conn
	fr     *http2.Framer
	frames chan http2.Frame // the server's, until it closes (then closed)
}

func dialRaw(t *testing.T, sock string) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	r := &rawConn{nc: nc, fr: http2.NewFramer(nc, nc), frames: make(chan http2.Frame, 1024)}
	r.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	// A write fails on a connection the server refused at once: what it
	// said is read all the same.
	if _, err := io.WriteString(nc, http2.ClientPreface); err == nil {
		r.fr.WriteSettings()
	}
	go func() {
		defer close(r.frames)
		for {
			f, err := r.fr.ReadFrame()
			if err != nil {
				return
			}
			select {
			case r.frames <- copyFrame(f):
			default: // the test reads what it needs; the rest may go
			}
		}
	}()
	return r
}

// copyFrame keeps what the tests look at of a frame the framer will reuse.
func copyFrame(f http2.Frame) http2.Frame {
	switch f := f.(type) {
	case *http2.GoAwayFrame:
		g := *f
		return &g
	case *http2.RSTStreamFrame:
		g := *f
		return &g
	case *http2.WindowUpdateFrame:
		g := *f
		return &g
	case *http2.MetaHeadersFrame:
		return f // ReadFrame allocates a new one each time
	}
	h := f.Header()
	return &h
}

// open starts a call of method on stream id, its request to follow.
func (r *rawConn) open(t *testing.T, id uint32, method string) {
	t.Helper()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, hf := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", method},
		{":authority", "x"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		enc.WriteField(hpack.HeaderField{Name: hf[0], Value: hf[1]})
	}
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
}

// until reads the server's frames until ok says so; false when the
// connection ended or the wait was long first.
func (r *rawConn) until(ok func(http2.Frame) bool) bool {
	timeout := time.After(20 * time.Second)
	for {
		select {
		case f, open := <-r.frames:
			if !open {
				return false
			}
			if ok(f) {
				return true
			}
		case <-timeout:
			return false
		}
	}
}

// waitClosed reads until the server closes the connection and returns
// the GOAWAY it sent first, if any.
func (r *rawConn) waitClosed(t *testing.T) *http2.GoAwayFrame {
	t.Helper()
	var ga *http2.GoAwayFrame
	timeout := time.After(20 * time.Second)
	for {
		select {
		case f, open := <-r.frames:
			if !open {
				return ga
			}
			if g, ok := f.(*http2.GoAwayFrame); ok {
				ga = g
			}
		case <-timeout:
			t.Fatal("the server kept the connection")
		}
	}
}

func message(size uint32, body []byte) []byte {
	b := make([]byte, 5, 5+len(body))
	binary.BigEndian.PutUint32(b[1:], size)
	return append(b, body...)
}

// watchBuffered samples the server's unread request bytes until stop is
// closed and sends the most it saw.
func watchBuffered(s *Server, stop chan struct{}) chan int64 {
	peak := make(chan int64, 1)
	go func() {
		var most int64
		for {
			most = max(most, s.buffered.Load())
			select {
			case <-stop:
				peak <- max(most, s.buffered.Load())
				return
			default:
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	return peak
}

// A stream declares a 1-byte message, then sends DATA without end,
// windows ignored: the server closes the connection with
// FLOW_CONTROL_ERROR once the stream's window is spent, and holds no more
// than the window meanwhile.
func TestFloodOneStream(t *testing.T) {
	f := serve(t)
	r := dialRaw(t, f.sock)
	r.open(t, 1, "/test.T/Echo")
	stop := make(chan struct{})
	peak := watchBuffered(f.srv, stop)
	const most = 32 << 20 // what the test sends at most
	chunk := make([]byte, 16<<10)
	sent := 0
	err := r.fr.WriteData(1, false, message(1, []byte("x")))
	for err == nil && sent < most {
		err = r.fr.WriteData(1, false, chunk)
		if err == nil {
			sent += len(chunk)
		}
	}
	close(stop)
	if err == nil {
		t.Fatalf("the server took %d MB on one stream without closing the connection", sent>>20)
	}
	ga := r.waitClosed(t)
	if ga == nil || ga.ErrCode != http2.ErrCodeFlowControl {
		t.Fatalf("closed with %v, want a GOAWAY with FLOW_CONTROL_ERROR", ga)
	}
	if p := <-peak; p > streamWindow {
		t.Errorf("the server held %d bytes of one stream, more than its window (%d)", p, streamWindow)
	}
	t.Logf("%d KB sent before the server closed the connection", sent>>10)
	// The connection is gone, its bytes with it; the server serves on.
	waitFor(t, "the connection's bytes released", func() bool { return f.srv.buffered.Load() == 0 })
	if _, err := echo(ctxT(t), f.cc, []byte("x")); err != nil {
		t.Fatal(err)
	}
}

// The same flood spread over many streams, each within its own window:
// the connection's window bounds them together.
func TestFloodManyStreams(t *testing.T) {
	f := serve(t, MaxRecvMsgSize(1<<20))
	r := dialRaw(t, f.sock)
	stop := make(chan struct{})
	peak := watchBuffered(f.srv, stop)
	chunk := make([]byte, 16<<10)
	sent := 0
	var err error
	for id := uint32(1); err == nil && id < 200; id += 2 {
		r.open(t, id, "/test.T/Echo")
		for i := 0; err == nil && i < streamWindow/len(chunk); i++ {
			if err = r.fr.WriteData(id, false, chunk); err == nil {
				sent += len(chunk)
			}
		}
	}
	close(stop)
	if err == nil {
		t.Fatalf("the server took %d MB on one connection without closing it", sent>>20)
	}
	if ga := r.waitClosed(t); ga == nil || ga.ErrCode != http2.ErrCodeFlowControl {
		t.Fatalf("closed with %v, want a GOAWAY with FLOW_CONTROL_ERROR", ga)
	}
	if p := <-peak; p > f.srv.connWindow {
		t.Errorf("the server held %d bytes of one connection, more than its window (%d)", p, f.srv.connWindow)
	}
	t.Logf("%d KB sent before the server closed the connection", sent>>10)
}

// After a small first message, every message declares more than the
// largest request: the call ends with ResourceExhausted at the first,
// and nothing of the rest is kept.
func TestOversizedLaterMessages(t *testing.T) {
	for _, method := range []string{"/test.T/Echo", "/test.T/Sum"} {
		t.Run(method, func(t *testing.T) {
			const maxRecv = 1 << 20
			f := serve(t, MaxRecvMsgSize(maxRecv))
			r := dialRaw(t, f.sock)
			r.open(t, 1, method)
			// A small first message, a BytesValue of no bytes.
			if err := r.fr.WriteData(1, false, message(2, []byte{0x0a, 0})); err != nil {
				t.Fatal(err)
			}
			huge := message(maxRecv+1, make([]byte, 8<<10))
			for i := 0; i < 64; i++ {
				if err := r.fr.WriteData(1, false, huge); err != nil {
					break // the server may close once it answered
				}
			}
			var got string
			if !r.until(func(fr http2.Frame) bool {
				if h, ok := fr.(*http2.MetaHeadersFrame); ok && h.StreamID == 1 {
					got = h.PseudoValue("status")
					for _, hf := range h.RegularFields() {
						if hf.Name == "grpc-status" {
							got = hf.Value
							return true
						}
					}
				}
				return false
			}) {
				t.Fatalf("no status for the call (last headers %q)", got)
			}
			if want := strconv.Itoa(8); got != want { // ResourceExhausted
				t.Fatalf("grpc-status %s, want %s", got, want)
			}
			waitFor(t, "the call's bytes released", func() bool { return f.srv.buffered.Load() == 0 })
		})
	}
}

// One uid holds at most its connections; one more is closed with a
// GOAWAY that says why, and once one closes a new one is served. The
// uids exempt (root's, the server's) are not counted.
func TestConnsPerUID(t *testing.T) {
	countAll := Option(func(s *Server) { s.exempt = func(uint32) bool { return false } })
	f := serve(t, MaxConnsPerUID(3), countAll)
	uid := uint32(os.Geteuid())
	perUID := func() int {
		f.srv.mu.Lock()
		defer f.srv.mu.Unlock()
		return f.srv.perUID[uid]
	}
	var held []*rawConn
	for i := 0; i < 3; i++ {
		held = append(held, dialRaw(t, f.sock))
		waitFor(t, "a connection counted", func() bool { return perUID() == i+1 })
	}
	for i := 0; i < 5; i++ {
		ga := dialRaw(t, f.sock).waitClosed(t)
		if ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm || !bytes.Contains(ga.DebugData(), []byte("too many connections")) {
			t.Fatalf("connection over the bound: closed with %v", ga)
		}
	}
	if n := perUID(); n != 3 {
		t.Fatalf("%d connections counted, want 3", n)
	}
	held[0].nc.Close()
	waitFor(t, "a closed connection uncounted", func() bool { return perUID() == 2 })
	if _, err := echo(ctxT(t), f.dial(t), []byte("x")); err != nil {
		t.Fatalf("a new connection under the bound: %v", err)
	}

	// The server's own uid is exempt by default.
	g := serve(t, MaxConnsPerUID(1))
	for i := 0; i < 3; i++ {
		dialRaw(t, g.sock)
	}
	if _, err := echo(ctxT(t), g.cc, []byte("x")); err != nil {
		t.Fatalf("the server's own uid was bounded: %v", err)
	}
}

// Calls beyond the streams a connection may run at once are refused.
func TestMaxConcurrentStreams(t *testing.T) {
	f := serve(t, MaxConcurrentStreams(2))
	r := dialRaw(t, f.sock)
	if !r.until(func(fr http2.Frame) bool {
		s, ok := fr.(*http2.FrameHeader)
		return ok && s.Type == http2.FrameSettings && s.Flags&http2.FlagSettingsAck == 0
	}) {
		t.Fatal("no SETTINGS")
	}
	for id := uint32(1); id <= 5; id += 2 {
		r.open(t, id, "/test.T/Echo") // requests left open: the calls wait
	}
	if !r.until(func(fr http2.Frame) bool {
		rst, ok := fr.(*http2.RSTStreamFrame)
		return ok && rst.StreamID == 5 && rst.ErrCode == http2.ErrCodeRefusedStream
	}) {
		t.Fatal("the third stream was not refused")
	}
}

// A connection with no call is closed after the idle timeout; one whose
// call runs longer is not.
func TestIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	f := serve(t, IdleTimeout(idle))
	ga := dialRaw(t, f.sock).waitClosed(t)
	if ga == nil || ga.ErrCode != http2.ErrCodeNo {
		t.Fatalf("closed with %v, want a GOAWAY", ga)
	}

	errc := make(chan error, 1)
	go func() { _, err := echo(ctxT(t), f.cc, []byte("wait")); errc <- err }()
	<-f.svc.running
	time.Sleep(5 * idle)
	select {
	case got := <-f.svc.cancelled:
		t.Fatalf("a running call was cut: %s", got)
	default:
	}
	f.srv.Stop()
	<-errc
}

// A client that sends PINGs and never reads the acks: the server's
// writes stop, and so does its reading; the idle check closes the
// connection rather than keep it, and its goroutine, for ever.
func TestStalledReader(t *testing.T) {
	const idle = 200 * time.Millisecond
	f := serve(t, IdleTimeout(idle))
	nc, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fr := http2.NewFramer(nc, nil)
	io.WriteString(nc, http2.ClientPreface)
	sent := 0
	for ; sent < 1<<20; sent++ { // 17 MB of PINGs at most
		nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
		if err := fr.WritePing(false, [8]byte{}); err != nil {
			break // the server stopped reading, or closed
		}
	}
	if sent == 1<<20 {
		t.Fatal("the server read every PING although nothing read its acks")
	}
	waitFor(t, "the stalled connection closed", func() bool {
		f.srv.mu.Lock()
		defer f.srv.mu.Unlock()
		return len(f.srv.conns) == 0
	})
}

// failingListener fails its first accepts as a process out of
// descriptors does.
type failingListener struct {
	net.Listener
	fails atomic.Int32
}

func (l *failingListener) Accept() (net.Conn, error) {
	if n := l.fails.Add(-1); n >= 0 {
		errno := []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED}[n%3]
		return nil, &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", errno)}
	}
	return l.Listener.Accept()
}

// Out of descriptors, the accept loop backs off and serves on.
func TestAcceptOutOfDescriptors(t *testing.T) {
	srv := NewServer(peercred.Credentials())
	srv.RegisterService(&testDesc, &testService{})
	sock := t.TempDir() + "/s.sock"
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	fl := &failingListener{Listener: ln}
	fl.fails.Store(7)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(fl) }()
	defer srv.Stop()
	fx := &fixture{sock: sock}
	if _, err := echo(ctxT(t), fx.dial(t), []byte("x")); err != nil {
		t.Fatalf("after EMFILE: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned: %v", err)
	default:
	}
	srv.Stop()
	if err := <-done; err != nil {
		t.Fatalf("Serve after Stop: %v", err)
	}
}
