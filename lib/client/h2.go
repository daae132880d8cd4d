package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http2/hpack"

	"xce/lib/rpcstatus"
)

// h2Conn is a gRPC client connection: gRPC's wire protocol over one
// HTTP/2 connection, to the controller's local socket, a controller
// candidate over TLS (failover.go), or a job's task socket (blaunch).
// It is written here because a command makes one or two calls and exits:
// grpc-go's package initialisation and size alone cost as much, and its
// ClientConn first runs a resolver, a balancer and a connection state
// machine in their own goroutines and waits for the server's settings
// before it sends the call. Here the call goes out in the same write as
// the connection preface, and closing costs nothing.
//
// It implements what XCE's services use: unary, server-streaming and
// bidirectional calls, status details, deadlines and cancellation, and
// flow control in both directions.
type h2Conn struct {
	nc                net.Conn
	scheme, authority string

	wmu  sync.Mutex // one frame sequence at a time
	bw   *bufio.Writer
	fr   *h2Framer // its writes under wmu; its reads by the reader only
	henc *hpack.Encoder
	hbuf bytes.Buffer

	mu       sync.Mutex
	sendCond *sync.Cond // the send windows grew, or the connection ended
	streams  map[uint32]*h2Stream
	nextID   uint32
	sendWin  int64  // the connection's send window
	initWin  int64  // the server's initial stream window
	maxFrame uint32 // the largest frame payload the server accepts
	lastOK   uint32 // with goAway, the last stream the server will serve
	goAway   bool
	refused  *rpcstatus.Error // the reason a GOAWAY with an error gave: the calls' error once the connection ends
	err      error            // the connection's end; set once
	recvOwed uint32
}

// Our receive windows: large, so that a big listing streams without
// waiting on window updates; credit is returned in batches.
const (
	h2RecvWindow = 16 << 20
	h2Credit     = 4 << 20
	h2Authority  = "localhost" // what grpc-go sends for a unix: target
	h2MaxRecv    = 256 << 20   // as Dial's MaxCallRecvMsgSize
	h2MaxSend    = 64 << 20    // as Dial's MaxCallSendMsgSize
)

// dialH2 connects to a Unix socket. Nothing is sent until the first call.
// When nothing answers there, the connection is made ended: its calls
// fail with Unavailable, as grpc-go's do (a command tells the user then
// that the controller does not run).
func dialH2(sock string) *h2Conn {
	nc, err := net.Dial("unix", sock)
	if err != nil {
		return endedH2(rpcstatus.Errorf(rpcstatus.Unavailable, "connection error: desc = %q", "transport: Error while dialing: "+err.Error()))
	}
	return newH2(nc, "http", h2Authority)
}

// endedH2 is a connection that never was: its calls fail with err.
func endedH2(err error) *h2Conn {
	c := &h2Conn{err: err}
	c.sendCond = sync.NewCond(&c.mu)
	return c
}

// newH2 starts HTTP/2 on nc, a Unix socket or a TLS session; scheme and
// authority are the calls' (:scheme, :authority).
func newH2(nc net.Conn, scheme, authority string) *h2Conn {
	c := &h2Conn{
		nc:        nc,
		scheme:    scheme,
		authority: authority,
		bw:        bufio.NewWriterSize(nc, 16<<10),
		streams:   map[uint32]*h2Stream{},
		nextID:    1,
		sendWin:   65535,
		initWin:   65535,
		maxFrame:  16384,
	}
	c.sendCond = sync.NewCond(&c.mu)
	c.fr = newH2Framer(c.bw, bufio.NewReaderSize(nc, 32<<10), 1<<20, 16<<20)
	c.henc = hpack.NewEncoder(&c.hbuf)
	// The preface, our settings and the connection's window, buffered
	// until the first call's frames join them.
	c.fr.writePreface()
	c.fr.writeSettings(h2Setting{ID: h2SettingEnablePush, Val: 0}, h2Setting{ID: h2SettingInitialWindowSize, Val: h2RecvWindow})
	c.fr.writeWindowUpdate(0, h2RecvWindow-65535)
	go c.reader()
	return c
}

// Close ends the connection and every call on it.
func (c *h2Conn) Close() error {
	c.fail(errClosing)
	return nil
}

// fail ends the connection with err (once) and every stream with it.
func (c *h2Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	if c.refused != nil {
		err = c.refused
	}
	c.err = err
	streams := c.streams
	c.streams = map[uint32]*h2Stream{}
	c.sendCond.Broadcast()
	c.mu.Unlock()
	if c.nc != nil {
		c.nc.Close()
	}
	for _, s := range streams {
		s.finish(asStatus(err))
	}
}

// write runs fn's frame writes under the write lock and sends them.
func (c *h2Conn) write(fn func() error) error { return c.writeBuf(fn, true) }

// writeBuf runs fn's frame writes under the write lock; with flush it
// sends them and whatever earlier calls left buffered. A call's headers,
// message and end go out in one write: each write wakes the server.
func (c *h2Conn) writeBuf(fn func() error, flush bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	err := fn()
	if errors.Is(err, errConnEnded) {
		return err // fn's: the connection had ended before
	}
	if err == nil && flush {
		err = c.bw.Flush()
	}
	if err != nil {
		closed := errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
		err = rpcstatus.Errorf(rpcstatus.Unavailable, "connection error: desc = %q", "transport: "+err.Error())
		if !closed {
			go c.fail(err)
		}
		// Else the server closed the connection: the reader reads what
		// it said last (a GOAWAY's reason) and ends it at its end.
	}
	return err
}

// reader reads the server's frames until the connection ends.
func (c *h2Conn) reader() {
	for {
		f, err := c.fr.readFrame()
		if err != nil {
			c.fail(rpcstatus.Errorf(rpcstatus.Unavailable, "error reading from server: %v", err))
			return
		}
		switch f.Type {
		case h2FrameHeaders:
			if s := c.stream(f.StreamID); s != nil {
				s.headers(f)
			}
		case h2FrameData:
			c.data(f)
		case h2FrameRSTStream:
			if s := c.stream(f.StreamID); s != nil {
				code := rstCode(f.ErrCode)
				if dl, ok := s.ctx.Deadline(); ok && code == rpcstatus.Canceled && !dl.After(time.Now()) {
					// The server ended it for the deadline it was given
					// (grpc-go says so too).
					s.finish(rpcstatus.New(rpcstatus.DeadlineExceeded, context.DeadlineExceeded.Error()))
					continue
				}
				s.finish(rpcstatus.New(code, fmt.Sprintf("stream terminated by RST_STREAM with error code: %v", f.ErrCode)))
			}
		case h2FrameSettings:
			if f.IsAck() {
				continue
			}
			tableSize := uint32(0)
			hasTable := false
			c.mu.Lock()
			for _, s := range f.Settings {
				switch s.ID {
				case h2SettingHeaderTableSize:
					tableSize, hasTable = s.Val, true
				case h2SettingInitialWindowSize:
					delta := int64(s.Val) - c.initWin
					c.initWin = int64(s.Val)
					for _, st := range c.streams {
						st.sendWin += delta
					}
				case h2SettingMaxFrameSize:
					c.maxFrame = s.Val
				}
			}
			c.sendCond.Broadcast()
			c.mu.Unlock()
			c.write(func() error {
				if hasTable {
					c.henc.SetMaxDynamicTableSizeLimit(tableSize)
				}
				return c.fr.writeSettingsAck()
			})
		case h2FrameWindowUpdate:
			c.mu.Lock()
			if f.StreamID == 0 {
				c.sendWin += int64(f.Increment)
			} else if s := c.streams[f.StreamID]; s != nil {
				s.sendWin += int64(f.Increment)
			}
			c.sendCond.Broadcast()
			c.mu.Unlock()
		case h2FramePing:
			if !f.IsAck() {
				data := f.PingData
				c.write(func() error { return c.fr.writePing(true, data) })
			}
		case h2FrameGoAway:
			why := "the connection is draining"
			var refused *rpcstatus.Error
			if f.ErrCode != h2ErrCodeNo && len(f.DebugData) > 0 {
				// The server refused the connection and says why (too
				// many connections from this user, say).
				why = fmt.Sprintf("the controller refused the connection: %s", goAwayText(f.DebugData))
				code := rpcstatus.Unavailable
				if f.ErrCode == h2ErrCodeEnhanceYourCalm {
					// A bound reached, not a controller down: commands
					// print the reason rather than "not running".
					code = rpcstatus.ResourceExhausted
				}
				refused = rpcstatus.New(code, why)
			}
			c.mu.Lock()
			c.goAway, c.lastOK = true, f.LastStreamID
			c.refused = refused
			var refusedStreams []*h2Stream
			for id, s := range c.streams {
				if id > f.LastStreamID {
					refusedStreams = append(refusedStreams, s)
					delete(c.streams, id)
				}
			}
			c.sendCond.Broadcast()
			c.mu.Unlock()
			for _, s := range refusedStreams {
				if refused != nil {
					s.finish(refused)
				} else {
					s.finish(rpcstatus.New(rpcstatus.Unavailable, why))
				}
			}
		}
	}
}

func (c *h2Conn) stream(id uint32) *h2Stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.streams[id]
}

// data hands a DATA frame's payload to its stream and returns the credit.
func (c *h2Conn) data(f *h2Frame) {
	n := f.Length
	s := c.stream(f.StreamID)
	if s != nil {
		s.push(f.Data, f.StreamEnded())
	}
	c.mu.Lock()
	c.recvOwed += n
	owed := c.recvOwed
	var sowed uint32
	if s != nil && !f.StreamEnded() {
		s.recvOwed += n
		if s.recvOwed >= h2Credit {
			sowed, s.recvOwed = s.recvOwed, 0
		}
	}
	if owed >= h2Credit {
		c.recvOwed = 0
	} else {
		owed = 0
	}
	c.mu.Unlock()
	if owed > 0 || sowed > 0 {
		id := f.StreamID
		c.write(func() error {
			if owed > 0 {
				if err := c.fr.writeWindowUpdate(0, owed); err != nil {
					return err
				}
			}
			if sowed > 0 {
				return c.fr.writeWindowUpdate(id, sowed)
			}
			return nil
		})
	}
}

func rstCode(e h2ErrCode) rpcstatus.Code {
	switch e {
	case h2ErrCodeRefusedStream:
		return rpcstatus.Unavailable
	case h2ErrCodeCancel:
		return rpcstatus.Canceled
	case h2ErrCodeEnhanceYourCalm:
		return rpcstatus.ResourceExhausted
	case h2ErrCodeInadequateSecurity:
		return rpcstatus.PermissionDenied
	}
	return rpcstatus.Internal
}

// Invoke makes a unary call.
func (c *h2Conn) Invoke(ctx context.Context, method string, args, reply vtMessage) error {
	s, err := c.newStream(ctx, method)
	if err != nil {
		return err
	}
	return s.unary(args, reply)
}

// unary sends a unary call's request on the stream and reads its reply.
func (s *h2Stream) unary(args, reply vtMessage) error {
	if err := s.SendMsg(args); err != nil {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	if err := s.RecvMsg(reply); err != nil {
		if errors.Is(err, io.EOF) {
			return rpcstatus.New(rpcstatus.Internal, "cardinality violation: expected <Response> but got no message")
		}
		return err
	}
	// The status that follows the reply decides.
	if err := s.RecvMsg(reply); !errors.Is(err, io.EOF) {
		if err == nil {
			return rpcstatus.New(rpcstatus.Internal, "cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message")
		}
		return err
	}
	return nil
}

func (c *h2Conn) newStream(ctx context.Context, method string) (*h2Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, rpcstatus.FromContextError(err)
	}
	s := &h2Stream{c: c, ctx: ctx, wake: make(chan struct{}, 1)}
	err := c.writeBuf(func() error {
		c.mu.Lock()
		switch {
		case c.err != nil:
			c.mu.Unlock()
			return errConnEnded
		case c.goAway:
			c.mu.Unlock()
			return errConnEnded
		}
		s.id = c.nextID
		c.nextID += 2
		s.sendWin = c.initWin
		c.streams[s.id] = s
		maxFrame := c.maxFrame
		c.mu.Unlock()

		c.hbuf.Reset()
		hf := func(k, v string) { c.henc.WriteField(hpack.HeaderField{Name: k, Value: v}) }
		hf(":method", "POST")
		hf(":scheme", c.scheme)
		hf(":path", method)
		hf(":authority", c.authority)
		hf("content-type", "application/grpc")
		hf("user-agent", "xce")
		hf("te", "trailers")
		if dl, ok := ctx.Deadline(); ok {
			hf("grpc-timeout", encodeTimeout(time.Until(dl)))
		}
		return c.fr.writeHeaders(s.id, c.hbuf.Bytes(), maxFrame)
	}, false)
	if errors.Is(err, errConnEnded) {
		c.mu.Lock()
		err = c.err
		if err == nil && c.refused != nil {
			err = c.refused
		}
		c.mu.Unlock()
		if err == nil {
			err = rpcstatus.New(rpcstatus.Unavailable, "the connection is draining")
		}
		return nil, asStatus(err)
	}
	if err != nil {
		return nil, err
	}
	// No goroutine waits on the context: one more in a short command is
	// one more thread woken.
	unwatch := context.AfterFunc(ctx, s.cancelled)
	s.rmu.Lock()
	s.unwatch = unwatch
	ended := s.ended
	s.rmu.Unlock()
	if ended {
		unwatch() // finish ran first
	}
	return s, nil
}

var errConnEnded = errors.New("connection ended")

// asStatus is err as a call's status: Unknown unless it is one.
func asStatus(err error) *rpcstatus.Error {
	st, _ := rpcstatus.FromError(err)
	return st
}

// encodeTimeout writes a deadline as grpc-timeout wants it: at most eight
// digits and a unit.
func encodeTimeout(d time.Duration) string {
	if d <= 0 {
		return "0n"
	}
	for _, u := range []struct {
		unit string
		d    time.Duration
	}{{"n", time.Nanosecond}, {"u", time.Microsecond}, {"m", time.Millisecond}, {"S", time.Second}, {"M", time.Minute}} {
		if v := (d + u.d - 1) / u.d; v <= 99999999 {
			return strconv.FormatInt(int64(v), 10) + u.unit
		}
	}
	return strconv.FormatInt(int64((d+time.Hour-1)/time.Hour), 10) + "H"
}

// h2Stream is one call.
type h2Stream struct {
	c    *h2Conn
	id   uint32
	ctx  context.Context
	wake chan struct{} // something arrived

	// under c.mu
	sendWin  int64
	recvOwed uint32

	rmu      sync.Mutex
	unwatch  func() bool // stops cancelled's call when the context ends
	buf      []byte      // received, not yet read
	gotHead  bool
	ended    bool             // the server ended the stream, or it failed
	st       *rpcstatus.Error // set when ended
	sendDone bool
}

// cancelled ends the call, on the server too, when its context ends
// first.
func (s *h2Stream) cancelled() {
	s.rmu.Lock()
	ended := s.ended
	s.rmu.Unlock()
	if ended {
		return
	}
	s.finish(rpcstatus.FromContextError(s.ctx.Err()))
	id := s.id
	s.c.write(func() error { return s.c.fr.writeRSTStream(id, h2ErrCodeCancel) })
}

func (s *h2Stream) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// finish ends the stream with st (the first end wins).
func (s *h2Stream) finish(st *rpcstatus.Error) {
	s.rmu.Lock()
	if s.ended {
		s.rmu.Unlock()
		return
	}
	s.ended, s.st = true, st
	unwatch := s.unwatch
	s.rmu.Unlock()
	s.c.mu.Lock()
	delete(s.c.streams, s.id)
	s.c.sendCond.Broadcast()
	s.c.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
	s.signal()
}

func (s *h2Stream) push(data []byte, end bool) {
	s.rmu.Lock()
	if !s.ended {
		if len(s.buf) == 0 && len(data) >= 5 {
			// A message begins: room for all of it at once, not a
			// doubling series of copies (a listing's parts are large).
			if n := binary.BigEndian.Uint32(data[1:5]); n <= h2MaxRecv && int(n)+5 > len(data) && cap(s.buf) < int(n)+5 {
				s.buf = make([]byte, 0, int(n)+5)
			}
		}
		s.buf = append(s.buf, data...)
	}
	s.rmu.Unlock()
	if end {
		s.finish(rpcstatus.New(rpcstatus.Internal, "server closed the stream without sending trailers"))
	}
	s.signal()
}

// headers reads the response headers or the trailers.
func (s *h2Stream) headers(f *h2Frame) {
	var grpcStatus, grpcMessage, details, httpStatus string
	hasStatus := false
	for _, hf := range f.Fields {
		switch hf.Name {
		case ":status":
			httpStatus = hf.Value
		case "grpc-status":
			grpcStatus, hasStatus = hf.Value, true
		case "grpc-message":
			grpcMessage = decodeGrpcMessage(hf.Value)
		case "grpc-status-details-bin":
			details = hf.Value
		}
	}
	s.rmu.Lock()
	first := !s.gotHead
	s.gotHead = true
	s.rmu.Unlock()
	if first && httpStatus != "" && httpStatus != "200" && !hasStatus {
		s.finish(rpcstatus.New(httpCode(httpStatus), "unexpected HTTP status code received from server: "+httpStatus))
		return
	}
	if !f.StreamEnded() {
		if !first {
			s.finish(rpcstatus.New(rpcstatus.Internal, "trailers without the end of the stream"))
		}
		s.signal()
		return
	}
	if !hasStatus {
		s.finish(rpcstatus.New(rpcstatus.Internal, "server closed the stream without sending trailers"))
		return
	}
	code, err := strconv.ParseUint(grpcStatus, 10, 32)
	if err != nil {
		s.finish(rpcstatus.New(rpcstatus.Internal, "transport: malformed grpc-status: "+grpcStatus))
		return
	}
	st := rpcstatus.New(rpcstatus.Code(code), grpcMessage)
	if details != "" {
		if b, err := decodeBin(details); err == nil {
			st = rpcstatus.WithDetails(rpcstatus.Code(code), grpcMessage, b)
		}
	}
	s.finish(st)
}

func httpCode(s string) rpcstatus.Code {
	switch s {
	case "400":
		return rpcstatus.Internal
	case "401":
		return rpcstatus.Unauthenticated
	case "403":
		return rpcstatus.PermissionDenied
	case "404":
		return rpcstatus.Unimplemented
	case "429", "502", "503", "504":
		return rpcstatus.Unavailable
	}
	return rpcstatus.Unknown
}

func decodeBin(v string) ([]byte, error) {
	if len(v)%4 == 0 {
		return base64.StdEncoding.DecodeString(v)
	}
	return base64.RawStdEncoding.DecodeString(v)
}

// decodeGrpcMessage undoes grpc-message's percent-encoding.
func decodeGrpcMessage(msg string) string {
	if !strings.Contains(msg, "%") {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		if msg[i] == '%' && i+2 < len(msg) {
			if v, err := strconv.ParseUint(msg[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(msg[i])
	}
	return b.String()
}

// SendMsg sends one message, within the server's flow-control windows.
// When the call has ended (the server refused the message, say), it
// returns nil, as grpc-go's does for calls that send once: the status
// comes from RecvMsg.
func (s *h2Stream) SendMsg(m vtMessage) error {
	if err := s.sendMsg(m); !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

func (s *h2Stream) sendMsg(m vtMessage) error {
	size := m.SizeVT()
	if size > h2MaxSend {
		return rpcstatus.Errorf(rpcstatus.ResourceExhausted, "grpc: trying to send message larger than max (%d vs. %d)", size, h2MaxSend)
	}
	frame := make([]byte, 5+size)
	binary.BigEndian.PutUint32(frame[1:], uint32(size))
	if _, err := m.MarshalToSizedBufferVT(frame[5:]); err != nil {
		return rpcstatus.Errorf(rpcstatus.Internal, "grpc: error while marshaling: %v", err)
	}
	for len(frame) > 0 {
		n, err := s.reserve(len(frame), false)
		if err == nil && n == 0 {
			// Out of window: what is buffered must reach the server
			// for it to grant more.
			if err := s.c.flush(); err != nil {
				return s.sendErr(err)
			}
			n, err = s.reserve(len(frame), true)
		}
		if err != nil {
			return err
		}
		chunk := frame[:n]
		frame = frame[n:]
		if err := s.c.writeBuf(func() error { return s.c.fr.writeData(s.id, false, chunk) }, false); err != nil {
			return s.sendErr(err)
		}
	}
	return nil
}

// flush sends what is buffered.
func (c *h2Conn) flush() error { return c.write(func() error { return nil }) }

// reserve takes up to want bytes of send window; with wait it waits for
// some, else it may take none.
func (s *h2Stream) reserve(want int, wait bool) (int, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.err != nil {
			return 0, s.sendErr(c.err)
		}
		s.rmu.Lock()
		ended := s.ended
		s.rmu.Unlock()
		if ended {
			return 0, s.sendErr(io.EOF)
		}
		if n := min(int64(want), c.sendWin, s.sendWin, int64(c.maxFrame)); n > 0 {
			c.sendWin -= n
			s.sendWin -= n
			return int(n), nil
		}
		if !wait {
			return 0, nil
		}
		c.sendCond.Wait()
	}
}

// sendErr is the error a send returns: the call's status when it ended
// (grpc-go's SendMsg returns io.EOF and RecvMsg the status; a unary call
// and a client that sends once get the status either way).
func (s *h2Stream) sendErr(err error) error {
	s.rmu.Lock()
	st := s.st
	s.rmu.Unlock()
	if st != nil {
		return io.EOF
	}
	return asStatus(err)
}

// CloseSend ends the call's requests.
func (s *h2Stream) CloseSend() error {
	if s.sendDone {
		return nil
	}
	s.sendDone = true
	s.rmu.Lock()
	ended := s.ended
	s.rmu.Unlock()
	if ended {
		return nil // nothing more to tell a stream the server ended
	}
	s.c.write(func() error { return s.c.fr.writeData(s.id, true, nil) })
	return nil // as grpc-go: the call's outcome comes from RecvMsg
}

// RecvMsg reads the next message; io.EOF after the last one when the call
// succeeded, its status otherwise.
func (s *h2Stream) RecvMsg(m vtMessage) error {
	for {
		s.rmu.Lock()
		if len(s.buf) >= 5 {
			if s.buf[0] != 0 {
				s.rmu.Unlock()
				return rpcstatus.New(rpcstatus.Internal, "grpc: compressed message from the server, which this client does not accept")
			}
			n := binary.BigEndian.Uint32(s.buf[1:5])
			if n > h2MaxRecv {
				s.rmu.Unlock()
				s.cancel()
				return rpcstatus.Errorf(rpcstatus.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", n, h2MaxRecv)
			}
			if uint32(len(s.buf)-5) >= n {
				msg := s.buf[5 : 5+n]
				s.buf = s.buf[5+n:]
				if len(s.buf) == 0 {
					s.buf = nil
				}
				s.rmu.Unlock()
				return s.decode(msg, m)
			}
		}
		if s.ended {
			st := s.st
			partial := len(s.buf) > 0
			s.rmu.Unlock()
			if st.Code() == rpcstatus.OK {
				if partial {
					return rpcstatus.New(rpcstatus.Internal, "grpc: the stream ended within a message")
				}
				return io.EOF
			}
			return st
		}
		s.rmu.Unlock()
		s.c.flush() // the call's frames; a failure ends the stream
		<-s.wake
	}
}

func (s *h2Stream) decode(msg []byte, m vtMessage) error {
	if err := m.UnmarshalVT(msg); err != nil {
		return rpcstatus.Errorf(rpcstatus.Internal, "grpc: failed to unmarshal the received message: %v", err)
	}
	return nil
}

// cancel ends the call here and on the server.
func (s *h2Stream) cancel() {
	s.finish(rpcstatus.New(rpcstatus.Canceled, "grpc: the client cancelled the call"))
	id := s.id
	s.c.write(func() error { return s.c.fr.writeRSTStream(id, h2ErrCodeCancel) })
}

// h2Redialer makes calls on one h2Conn, and on a new one once it failed
// or the server drains it: as grpc-go's ClientConn reconnects, a caller
// that tries again after a controller restart (bsub -K, bwait) reaches
// the new controller. The first connection is made at the first call.
type h2Redialer struct {
	dial   func(ctx context.Context) *h2Conn
	mu     sync.Mutex
	cur    *h2Conn
	closed bool
}

func newH2Redialer(sock string) *h2Redialer {
	return &h2Redialer{dial: func(context.Context) *h2Conn { return dialH2(sock) }}
}

// conn is the connection for a call, dialed under the redialer's lock
// (one dial for concurrent callers).
func (r *h2Redialer) conn(ctx context.Context) *h2Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed && r.cur == nil:
		r.cur = endedH2(errClosing)
	case !r.closed && (r.cur == nil || r.cur.ended()):
		r.cur = r.dial(ctx)
	}
	return r.cur
}

var errClosing = rpcstatus.New(rpcstatus.Canceled, "grpc: the client connection is closing")

// ended says whether the connection takes no more calls.
func (c *h2Conn) ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil || c.goAway
}

// Invoke makes a unary call.
func (r *h2Redialer) Invoke(ctx context.Context, method string, args, reply vtMessage) error {
	return r.conn(ctx).Invoke(ctx, method, args, reply)
}

// NewStream opens a streaming call.
func (r *h2Redialer) NewStream(ctx context.Context, method string) (*h2Stream, error) {
	return r.conn(ctx).newStream(ctx, method)
}

// ServerStream opens a server-streaming call with its one request.
func (r *h2Redialer) ServerStream(ctx context.Context, method string, in vtMessage) (recvStream, error) {
	return r.conn(ctx).serverStream(ctx, method, in)
}

func (c *h2Conn) serverStream(ctx context.Context, method string, in vtMessage) (*h2Stream, error) {
	s, err := c.newStream(ctx, method)
	if err != nil {
		return nil, err
	}
	if err := s.SendMsg(in); err != nil {
		s.cancel()
		return nil, err
	}
	s.CloseSend()
	return s, nil
}

// Close ends the connection; later calls fail.
func (r *h2Redialer) Close() error {
	r.mu.Lock()
	r.closed = true
	c := r.cur
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Close()
}

// goAwayText is a GOAWAY's debug data as a message may carry it: printable
// ASCII, at most 200 bytes.
func goAwayText(b []byte) string {
	b = b[:min(len(b), 200)]
	out := make([]byte, len(b))
	for i, c := range b {
		if c < ' ' || c > '~' {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}
