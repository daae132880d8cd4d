package unixrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// The windows this side grants. A stream's window comes back as its
// handler reads, or, for a message larger than the window, as far as that
// message needs (its length checked against the largest a request may
// be); the connection's comes back as the calls read, or when a call's
// unread bytes are dropped. A peer that sends beyond a window loses the
// connection (FLOW_CONTROL_ERROR): a connection holds at most its window
// unread, whatever its peer does.
const (
	streamWindow = 1 << 20
	credit       = streamWindow / 4 // returned in batches of this
	maxWindow    = 1<<31 - 1
	// maxHeaderList bounds a request's headers (grpc-go's client sends a
	// few hundred bytes).
	maxHeaderList = 64 << 10
	// prefaceTimeout bounds how long a connection may stay silent before
	// it proves to speak HTTP/2.
	prefaceTimeout = 20 * time.Second
)

// conn is one client connection: serve reads its frames; the calls
// write their own frames under wmu.
type conn struct {
	s    *Server
	nc   net.Conn
	peer *peer.Peer
	ctx  context.Context // ends with the connection
	stop context.CancelFunc

	wmu sync.Mutex // the framer's writes, henc, hbuf
	// wsince is since when (on clock) the write lock has been held, 0
	// when it is not: a write that waits longer than the idle timeout
	// is a peer that stopped reading.
	wsince atomic.Int64
	br     *bufio.Reader
	bw     *bufio.Writer
	fr     *http2.Framer
	henc   *hpack.Encoder
	hbuf   bytes.Buffer

	mu       sync.Mutex
	sendCond *sync.Cond // windows grew, or the connection ended
	streams  map[uint32]*stream
	lastID   uint32 // the highest stream the client opened
	sendWin  int64  // the connection's send window
	initWin  int64  // the client's initial stream window
	maxFrame uint32
	recvWin  int64  // what the peer may still send, the connection's window
	recvOwed uint32 // connection credit not yet returned
	// allot is the connection's window: recvWin, and what the peer sent
	// that is not yet read or returned. Under a budget (its uid's) it is
	// base and what growth the calls' requests need; without one it stays
	// the server's connWindow.
	allot    int64
	budget   *budget // nil: the uid's connections are not bounded
	base     int64
	err      error // set when the connection ends
	draining bool  // GOAWAY sent: no new calls

	idle      *time.Timer // closes the connection once it has been idle for idleTimeout
	idleSince time.Time   // when its last call ended

	// under budget.mu
	want   int64 // growth waited for
	queued bool  // in the budget's waiting list
}

// connError ends the connection with a GOAWAY of its code.
type connError struct {
	code http2.ErrCode
	msg  string
}

func (e connError) Error() string { return e.msg }

// refuse closes a connection the server will not serve, with a GOAWAY
// that says why. It reads the preface first (waiting a second at most):
// the client has then written its first call, and reads the GOAWAY
// rather than failing its write on a connection already closed.
func refuse(nc net.Conn, why string) {
	nc.SetDeadline(time.Now().Add(time.Second))
	io.ReadFull(nc, make([]byte, len(http2.ClientPreface)))
	fr := http2.NewFramer(nc, nil)
	if fr.WriteSettings() == nil {
		fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, []byte(why))
	}
	nc.Close()
}

func newConn(s *Server, nc net.Conn, auth credentials.AuthInfo, b *budget) *conn {
	window := s.connWindow
	if b != nil {
		window = s.baseWindow
	}
	c := &conn{
		s:        s,
		nc:       nc,
		peer:     &peer.Peer{Addr: nc.RemoteAddr(), LocalAddr: nc.LocalAddr(), AuthInfo: auth},
		bw:       bufio.NewWriterSize(nc, 16<<10),
		streams:  map[uint32]*stream{},
		sendWin:  65535,
		initWin:  65535,
		maxFrame: 16384,
		recvWin:  window,
		allot:    window,
		budget:   b,
		base:     window,
	}
	c.sendCond = sync.NewCond(&c.mu)
	c.ctx, c.stop = context.WithCancel(peer.NewContext(background, c.peer))
	c.br = bufio.NewReaderSize(nc, 16<<10)
	c.fr = http2.NewFramer(c.bw, c.br)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = maxHeaderList
	c.henc = hpack.NewEncoder(&c.hbuf)
	return c
}

// serve runs the connection until it ends.
func (c *conn) serve() {
	defer c.close(io.EOF)
	preface := make([]byte, len(http2.ClientPreface))
	c.nc.SetReadDeadline(time.Now().Add(prefaceTimeout))
	if _, err := io.ReadFull(c.br, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	c.nc.SetReadDeadline(time.Time{})
	if d := c.s.idleTimeout; d > 0 {
		c.mu.Lock()
		c.idleSince = time.Now()
		c.idle = time.AfterFunc(d, c.checkIdle)
		c.mu.Unlock()
	}
	if err := c.writeLater(func() error {
		if err := c.fr.WriteSettings(
			http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: c.s.maxStreams},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: streamWindow},
			http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: maxHeaderList},
		); err != nil {
			return err
		}
		if c.base <= 65535 {
			return nil
		}
		return c.fr.WriteWindowUpdate(0, uint32(c.base-65535))
	}); err != nil {
		return
	}
	for {
		if c.br.Buffered() == 0 && c.write(func() error { return nil }) != nil {
			return
		}
		f, err := c.fr.ReadFrame()
		if err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				// One stream's fault (bad headers): that stream ends.
				c.reset(se.StreamID, se.Code)
				continue
			}
			var ce http2.ConnectionError
			if errors.As(err, &ce) {
				c.goAway(http2.ErrCode(ce), "")
			}
			return
		}
		if err := c.frame(f); err != nil {
			code := http2.ErrCodeProtocol
			var ce connError
			if errors.As(err, &ce) {
				code = ce.code
			}
			c.goAway(code, err.Error())
			return
		}
	}
}

// frame handles one frame; an error ends the connection.
func (c *conn) frame(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.MetaHeadersFrame:
		return c.headers(f)
	case *http2.DataFrame:
		return c.data(f)
	case *http2.RSTStreamFrame:
		if st := c.stream(f.StreamID); st != nil {
			st.cancel(true)
		}
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		var tableSize uint32
		hasTable := false
		c.mu.Lock()
		err := f.ForeachSetting(func(s http2.Setting) error {
			switch s.ID {
			case http2.SettingHeaderTableSize:
				tableSize, hasTable = s.Val, true
			case http2.SettingInitialWindowSize:
				delta := int64(s.Val) - c.initWin
				c.initWin = int64(s.Val)
				for _, st := range c.streams {
					st.sendWin += delta
				}
			case http2.SettingMaxFrameSize:
				c.maxFrame = s.Val
			}
			return nil
		})
		c.sendCond.Broadcast()
		c.mu.Unlock()
		if err != nil {
			return err
		}
		c.writeLater(func() error {
			if hasTable {
				c.henc.SetMaxDynamicTableSizeLimit(tableSize)
			}
			return c.fr.WriteSettingsAck()
		})
	case *http2.WindowUpdateFrame:
		c.mu.Lock()
		if f.StreamID == 0 {
			c.sendWin += int64(f.Increment)
		} else if st := c.streams[f.StreamID]; st != nil {
			st.sendWin += int64(f.Increment)
		}
		c.sendCond.Broadcast()
		c.mu.Unlock()
	case *http2.PingFrame:
		if !f.IsAck() {
			data := f.Data
			c.writeLater(func() error { return c.fr.WritePing(true, data) })
		}
	case *http2.GoAwayFrame:
		// The client takes no more answers on new streams than it has
		// opened; the calls running go on.
	}
	return nil
}

// headers opens a call.
func (c *conn) headers(f *http2.MetaHeadersFrame) error {
	id := f.StreamID
	c.mu.Lock()
	if st := c.streams[id]; st != nil {
		// Trailers from the client: its side of the stream ends.
		c.mu.Unlock()
		if !f.StreamEnded() {
			return fmt.Errorf("stream %d: headers after the request began", id)
		}
		st.recvEnd()
		return nil
	}
	if id%2 == 0 || id <= c.lastID {
		c.mu.Unlock()
		if id%2 == 0 {
			return fmt.Errorf("stream %d: even stream id from the client", id)
		}
		return nil // a stream that ended: a late frame
	}
	c.lastID = id
	if c.draining || c.err != nil {
		c.mu.Unlock()
		c.reset(id, http2.ErrCodeRefusedStream)
		return nil
	}
	if uint32(len(c.streams)) >= c.s.maxStreams {
		c.mu.Unlock()
		c.reset(id, http2.ErrCodeRefusedStream)
		return nil
	}
	st := &stream{c: c, id: id, sendWin: c.initWin, recvWin: streamWindow}
	st.recvCond = sync.NewCond(&st.rmu)
	c.streams[id] = st
	c.mu.Unlock()

	var path, contentType, timeout, encoding string
	for _, hf := range f.RegularFields() {
		switch hf.Name {
		case "content-type":
			contentType = hf.Value
		case "grpc-timeout":
			timeout = hf.Value
		case "grpc-encoding":
			encoding = hf.Value
		}
	}
	for _, hf := range f.PseudoFields() {
		if hf.Name == ":path" {
			path = hf.Value
		}
	}
	ctx := c.ctx
	var cancel context.CancelFunc
	if timeout != "" {
		d, err := decodeTimeout(timeout)
		if err != nil {
			ctx, cancel = context.WithCancel(ctx)
			st.ctx, st.stop = ctx, cancel
			st.fail(status.Newf(codes.Internal, "transport: malformed grpc-timeout: %v", err))
			return nil
		}
		ctx, cancel = context.WithTimeout(ctx, d)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	st.ctx, st.stop = ctx, cancel
	if !isGRPC(contentType) {
		st.fail(status.Newf(codes.Internal, "transport: invalid content-type %q", contentType))
		return nil
	}
	if encoding != "" && encoding != "identity" {
		st.fail(status.Newf(codes.Unimplemented, "grpc: Decompressor is not installed for grpc-encoding %q", encoding))
		return nil
	}
	m, bad := c.s.lookup(path)
	if bad != nil {
		st.fail(bad)
		return nil
	}
	st.method, st.name = m, path
	if f.StreamEnded() {
		st.recvEnd()
	}
	if m.stream != nil && m.stream.ClientStreams {
		// Its handler reads the messages as they come.
		st.rmu.Lock()
		start := !st.started
		st.started = true
		st.rmu.Unlock()
		if start {
			c.s.handlers.Add(1)
			c.s.workers.run(st.run)
		}
	}
	return nil
}

func isGRPC(ct string) bool {
	const base = "application/grpc"
	if len(ct) < len(base) || ct[:len(base)] != base {
		return false
	}
	return len(ct) == len(base) || ct[len(base)] == '+' || ct[len(base)] == ';'
}

// data adds a DATA frame's payload to its stream, within the windows.
func (c *conn) data(f *http2.DataFrame) error {
	n := f.Length
	c.mu.Lock()
	st := c.streams[f.StreamID]
	if st == nil && (f.StreamID%2 == 0 || f.StreamID > c.lastID) {
		c.mu.Unlock()
		return fmt.Errorf("DATA on stream %d, which was never opened", f.StreamID)
	}
	if int64(n) > c.recvWin {
		win := c.recvWin
		c.mu.Unlock()
		return connError{http2.ErrCodeFlowControl, fmt.Sprintf("DATA of %d bytes on stream %d beyond the connection's window (%d)", n, f.StreamID, win)}
	}
	c.recvWin -= int64(n)
	c.mu.Unlock()
	freed, update, short := n, uint32(0), int64(0) // a stream that ended drops what comes
	if st != nil {
		var err error
		if freed, update, short, err = st.push(f.Data(), n, f.StreamEnded()); err != nil {
			return err
		}
	}
	c.giveBack(freed, f.StreamID, update, false)
	if short > 0 && c.budget != nil {
		// The message being received needs more than the connection's
		// window lets the peer send: ask the uid's budget for it.
		c.mu.Lock()
		need := min(short-c.recvWin, c.s.connWindow-c.allot)
		c.mu.Unlock()
		if need > 0 {
			c.budget.ask(c, need)
		}
	}
	return nil
}

// giveBack returns n bytes of the connection's window, and update bytes
// of stream id's; flush sends them now, else the reader sends them before
// it waits for frames.
func (c *conn) giveBack(n, id, update uint32, flush bool) {
	var owed uint32
	var back int64 // window given back to the budget rather than the peer
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.recvOwed += n
	if c.recvOwed >= credit {
		owed, c.recvOwed = c.recvOwed, 0
		if c.budget != nil && c.allot > c.base {
			// The growth a request needed goes back as it is read.
			back = min(int64(owed), c.allot-c.base)
			c.allot -= back
			owed -= uint32(back)
		}
		c.recvWin += int64(owed)
	}
	c.mu.Unlock()
	if back > 0 {
		c.budget.release(back)
	}
	if owed == 0 && update == 0 {
		return
	}
	fn := func() error {
		if owed > 0 {
			if err := c.fr.WriteWindowUpdate(0, owed); err != nil {
				return err
			}
		}
		if update > 0 {
			return c.fr.WriteWindowUpdate(id, update)
		}
		return nil
	}
	if flush {
		c.write(fn)
	} else {
		c.writeLater(fn)
	}
}

// checkIdle closes the connection once it has had no call for the idle
// timeout, else looks again when it may have.
func (c *conn) checkIdle() {
	d := c.s.idleTimeout
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	if since := c.wsince.Load(); since != 0 && clock()-time.Duration(since) > d {
		// A write has waited the whole timeout: the peer stopped
		// reading. Closing ends the write.
		c.mu.Unlock()
		c.close(errStalled)
		return
	}
	if len(c.streams) > 0 {
		c.idle.Reset(d)
		c.mu.Unlock()
		return
	}
	if left := d - time.Since(c.idleSince); left > 0 {
		c.idle.Reset(left)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	// A write blocked on a peer that does not read must not hold the
	// close up.
	c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	c.goAway(http2.ErrCodeNo, "idle")
	c.close(errIdle)
}

var (
	errIdle    = errors.New("the connection was idle")
	errStalled = errors.New("the peer stopped reading")
)

func (c *conn) stream(id uint32) *stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.streams[id]
}

// lockW takes the write lock.
func (c *conn) lockW() {
	c.wmu.Lock()
	c.wsince.Store(int64(clock()))
}

func (c *conn) unlockW() {
	c.wsince.Store(0)
	c.wmu.Unlock()
}

// clock is a monotonic clock, never 0.
func clock() time.Duration { return time.Since(epoch) + 1 }

var epoch = time.Now()

// write runs fn's frame writes under the write lock and sends them. A
// failed write ends the connection.
func (c *conn) write(fn func() error) error {
	c.lockW()
	err := fn()
	if err == nil {
		err = c.bw.Flush()
	}
	c.unlockW()
	if err != nil {
		c.close(err)
	}
	return err
}

// writeHeaderBlock writes a header block (under wmu) as a HEADERS frame
// and as many CONTINUATION frames as the client's frame size needs: a
// long error message or its details may not fit one frame.
func (c *conn) writeHeaderBlock(id uint32, block []byte, endStream bool) error {
	c.mu.Lock()
	max := int(c.maxFrame)
	c.mu.Unlock()
	first := block
	if len(first) > max {
		first = block[:max]
	}
	block = block[len(first):]
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndHeaders: len(block) == 0, EndStream: endStream}); err != nil {
		return err
	}
	for len(block) > 0 {
		n := min(len(block), max)
		if err := c.fr.WriteContinuation(id, n == len(block), block[:n]); err != nil {
			return err
		}
		block = block[n:]
	}
	return nil
}

// writeLater runs fn's frame writes under the write lock and leaves them
// buffered: the reader sends what it wrote before it waits for the next
// frames, so that the answers to a burst of frames go out in one write.
func (c *conn) writeLater(fn func() error) error {
	c.lockW()
	err := fn()
	c.unlockW()
	if err != nil {
		c.close(err)
	}
	return err
}

// reset ends a stream on the client's side with code.
func (c *conn) reset(id uint32, code http2.ErrCode) {
	c.writeLater(func() error { return c.fr.WriteRSTStream(id, code) })
}

func (c *conn) goAway(code http2.ErrCode, debug string) {
	c.mu.Lock()
	last := c.lastID
	c.mu.Unlock()
	c.write(func() error { return c.fr.WriteGoAway(last, code, []byte(debug)) })
}

// drain sends GOAWAY: the calls running finish, then the connection
// closes; a new one is refused.
func (c *conn) drain() {
	c.mu.Lock()
	if c.draining || c.err != nil {
		c.mu.Unlock()
		return
	}
	c.draining = true
	idle := len(c.streams) == 0
	c.mu.Unlock()
	c.goAway(http2.ErrCodeNo, "")
	if idle {
		c.close(errServerStopped)
	}
}

// close ends the connection (once) and cancels its calls.
func (c *conn) close(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	grown := c.allot - c.base
	c.allot = c.base
	streams := make([]*stream, 0, len(c.streams))
	for _, st := range c.streams {
		streams = append(streams, st)
	}
	c.sendCond.Broadcast()
	if c.idle != nil {
		c.idle.Stop()
	}
	c.mu.Unlock()
	c.stop()
	c.nc.Close()
	if c.budget != nil {
		c.budget.leave(c, grown)
	}
	for _, st := range streams {
		st.cancel(false)
	}
}

// ended removes a finished stream, dropping what it left unread; a
// draining connection closes after its last.
func (c *conn) ended(st *stream) {
	st.rmu.Lock()
	freed := st.dropLocked()
	st.rmu.Unlock()
	c.mu.Lock()
	delete(c.streams, st.id)
	if len(c.streams) == 0 {
		c.idleSince = time.Now()
	}
	last := c.draining && len(c.streams) == 0
	c.mu.Unlock()
	if freed > 0 {
		c.giveBack(freed, 0, 0, true)
	}
	if last {
		c.close(errServerStopped)
	}
}

// decodeTimeout reads grpc-timeout: up to eight digits and a unit.
func decodeTimeout(s string) (time.Duration, error) {
	if len(s) < 2 || len(s) > 9 {
		return 0, fmt.Errorf("bad timeout %q", s)
	}
	v, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad timeout %q", s)
	}
	var unit time.Duration
	switch s[len(s)-1] {
	case 'H':
		unit = time.Hour
	case 'M':
		unit = time.Minute
	case 'S':
		unit = time.Second
	case 'm':
		unit = time.Millisecond
	case 'u':
		unit = time.Microsecond
	case 'n':
		unit = time.Nanosecond
	default:
		return 0, fmt.Errorf("bad timeout unit in %q", s)
	}
	if v > int64(1<<63-1)/int64(unit) {
		return 1<<63 - 1, nil
	}
	return time.Duration(v) * unit, nil
}
