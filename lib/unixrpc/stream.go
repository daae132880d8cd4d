package unixrpc

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// stream is one call. Its handler's goroutine is the only one that
// writes its frames; the connection's reader feeds it the request.
type stream struct {
	c      *conn
	id     uint32
	ctx    context.Context
	stop   context.CancelFunc
	method *method
	name   string

	// under c.mu
	sendWin int64

	rmu       sync.Mutex
	recvCond  *sync.Cond // the request grew, ended, or the call was cancelled
	buf       []byte     // received, not yet read
	next      int        // where in buf the next message whose length is unchecked begins
	recvWin   int64      // what the client may still send on the stream
	discard   bool       // what comes is dropped: the call ended or its request broke a limit
	recvDone  bool       // the client ended its side
	recvErr   error      // the request broke a limit
	started   bool       // run is running or has run (or never will)
	cancelled bool       // the context ended: reset, or the connection ended
	gone      bool       // the client reset the stream: nothing more to send

	// the handler's goroutine's only
	headerSent bool
	header     metadata.MD
	trailer    metadata.MD
	out        []byte // the last message's frame, reused
}

// push appends a DATA frame's payload, n bytes in the windows with its
// padding; end is the client's END_STREAM. It returns the bytes of the
// connection's window freed at once (padding, or what is dropped), the
// stream window to return, and how many bytes the message being received
// still needs; an error when the client sent beyond the stream's window.
func (st *stream) push(data []byte, n uint32, end bool) (freed, update uint32, short int64, err error) {
	st.rmu.Lock()
	if int64(n) > st.recvWin {
		win := st.recvWin
		st.rmu.Unlock()
		return 0, 0, 0, connError{http2.ErrCodeFlowControl, fmt.Sprintf("DATA of %d bytes beyond stream %d's window (%d)", n, st.id, win)}
	}
	st.recvWin -= int64(n)
	if st.cancelled || st.recvDone || st.discard {
		st.rmu.Unlock()
		return n, 0, 0, nil
	}
	freed = n - uint32(len(data))
	st.buf = append(st.buf, data...)
	st.c.s.buffered.Add(int64(len(data)))
	// Every message's length is checked as soon as it is known, not
	// only the first's: the window a message larger than the stream's is
	// given depends on it.
	for st.next+5 <= len(st.buf) {
		size := binary.BigEndian.Uint32(st.buf[st.next+1:])
		if int64(size) > int64(st.c.s.maxRecv) {
			// The call ends with this status: at once when no handler
			// runs, else from the handler's RecvMsg.
			freed += st.dropLocked()
			st.recvErr = status.Newf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", size, st.c.s.maxRecv).Err()
			st.recvDone = st.recvDone || end
			running := st.started
			st.started = true
			st.recvCond.Broadcast()
			st.rmu.Unlock()
			if !running {
				st.finish(st.recvErr)
			}
			return freed, 0, 0, nil
		}
		st.next += 5 + int(size)
	}
	if st.next > cap(st.buf) {
		// The buffer for a large message at once, rather than by doubling.
		b := make([]byte, len(st.buf), st.next)
		copy(b, st.buf)
		st.buf = b
	}
	if !end {
		update = st.grantLocked()
		short = int64(st.next - len(st.buf))
	}
	st.recvCond.Broadcast()
	st.rmu.Unlock()
	if end {
		st.recvEnd()
	}
	return freed, update, short, nil
}

// grantLocked is the stream window to give the client now: enough that
// what it may send and what is unread make the stream's window, or the
// whole of the message being received when that is larger. None once the
// client or the call has ended the request.
func (st *stream) grantLocked() uint32 {
	if st.cancelled || st.recvDone || st.discard {
		return 0
	}
	limit, need := int64(streamWindow), int64(0)
	if len(st.buf) >= 5 {
		need = min(5+int64(binary.BigEndian.Uint32(st.buf[1:5])), maxWindow)
		limit = max(limit, need)
	}
	have := int64(len(st.buf)) + st.recvWin
	g := limit - have
	if g <= 0 || g < credit && have >= need {
		return 0 // in batches, unless the message waits on it
	}
	st.recvWin += g
	return uint32(g)
}

// dropLocked drops what is unread, and what comes, and says how much it
// dropped.
func (st *stream) dropLocked() uint32 {
	n := len(st.buf)
	st.buf, st.next, st.discard = nil, 0, true
	st.c.s.buffered.Add(-int64(n))
	return uint32(n)
}

// recvEnd marks the client's side ended and starts a call that waited
// for its whole request.
func (st *stream) recvEnd() {
	st.rmu.Lock()
	st.recvDone = true
	start := !st.started && st.method != nil && !st.cancelled
	if start {
		st.started = true
	}
	st.recvCond.Broadcast()
	st.rmu.Unlock()
	if start {
		st.c.s.handlers.Add(1)
		st.c.s.workers.run(st.run)
	}
}

// fail ends a call that never reached a handler with s.
func (st *stream) fail(s *status.Status) {
	st.rmu.Lock()
	st.started = true
	st.rmu.Unlock()
	st.finish(s.Err())
}

// cancel ends the call's context; byClient says the client reset the
// stream, which then takes no more frames.
func (st *stream) cancel(byClient bool) {
	if st.stop != nil {
		st.stop()
	}
	st.rmu.Lock()
	st.gone = st.gone || byClient
	st.cancelled = true
	idle := !st.started
	st.started = true
	freed := st.dropLocked()
	st.recvCond.Broadcast()
	st.rmu.Unlock()
	st.c.mu.Lock()
	st.c.sendCond.Broadcast()
	st.c.mu.Unlock()
	if idle {
		st.c.ended(st)
	}
	if freed > 0 {
		st.c.giveBack(freed, 0, 0, true)
	}
}

func (st *stream) run() {
	defer st.c.s.handlers.Done()
	var err error
	if obs := st.c.s.observe; obs != nil {
		start := time.Now()
		defer func() { obs(st.name, err, time.Since(start)) }()
	}
	m := st.method
	if m.unary != nil {
		var reply any
		reply, err = m.unary(m.impl, st.ctx, st.decodeOne, st.c.s.unaryInt)
		if err == nil {
			err = st.sendMsg(reply, false)
		}
	} else if si := st.c.s.streamInt; si != nil {
		err = si(m.impl, st, &grpc.StreamServerInfo{FullMethod: st.name,
			IsClientStream: m.stream.ClientStreams, IsServerStream: m.stream.ServerStreams}, m.stream.Handler)
	} else {
		err = m.stream.Handler(m.impl, st)
	}
	st.finish(err)
}

// decodeOne decodes a unary call's request: exactly one message.
func (st *stream) decodeOne(v any) error {
	if err := st.RecvMsg(v); err != nil {
		if err == io.EOF {
			return status.Error(codes.Internal, "grpc: the request has no message")
		}
		return err
	}
	st.rmu.Lock()
	extra := len(st.buf) > 0
	st.rmu.Unlock()
	if extra {
		return status.Error(codes.Internal, "grpc: client streaming protocol violation: get <nil>, want <EOF>")
	}
	return nil
}

// RecvMsg reads the next request message into m.
func (st *stream) RecvMsg(m any) error {
	st.rmu.Lock()
	for {
		if st.recvErr != nil {
			st.rmu.Unlock()
			return st.recvErr
		}
		if st.cancelled {
			st.rmu.Unlock()
			return statusOf(st.ctx.Err()).Err()
		}
		if len(st.buf) >= 5 {
			n := binary.BigEndian.Uint32(st.buf[1:5])
			if uint32(len(st.buf)-5) >= n {
				if st.buf[0] != 0 {
					st.rmu.Unlock()
					return status.Error(codes.Internal, "grpc: compressed flag set with identity or empty encoding")
				}
				msg := st.buf[5 : 5+n]
				st.buf = st.buf[5+n:]
				st.next -= 5 + int(n)
				if len(st.buf) == 0 {
					st.buf = nil
				}
				st.c.s.buffered.Add(-int64(5 + n))
				update := st.grantLocked()
				st.rmu.Unlock()
				// The window comes back as the handler reads.
				st.c.giveBack(5+n, st.id, update, true)
				if err := st.c.s.codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(msg)}, m); err != nil {
					return status.Errorf(codes.Internal, "grpc: error unmarshalling request: %v", err)
				}
				return nil
			}
		}
		if st.recvDone {
			partial := len(st.buf) > 0
			st.rmu.Unlock()
			if partial {
				return status.Error(codes.Internal, "grpc: the request ended within a message")
			}
			return io.EOF
		}
		st.recvCond.Wait()
	}
}

// vtMessage is a message with vtprotobuf's generated coder.
type vtMessage interface {
	SizeVT() int
	MarshalToSizedBufferVT([]byte) (int, error)
}

// SendMsg sends one reply message.
func (st *stream) SendMsg(m any) error { return st.sendMsg(m, true) }

// sendMsg writes m within the flow-control windows; flush sends it at
// once (a unary reply waits for its trailers).
func (st *stream) sendMsg(m any, flush bool) error {
	frame, err := st.encode(m)
	if err != nil {
		return err
	}
	if err := st.writeHeader(); err != nil {
		return err
	}
	c := st.c
	for len(frame) > 0 {
		c.mu.Lock()
		for (c.sendWin <= 0 || st.sendWin <= 0) && c.err == nil && !st.isGone() {
			c.sendCond.Wait()
		}
		if c.err != nil || st.isGone() {
			c.mu.Unlock()
			return st.doneErr()
		}
		n := int64(len(frame))
		n = min(n, c.sendWin, st.sendWin, int64(c.maxFrame))
		c.sendWin -= n
		st.sendWin -= n
		c.mu.Unlock()
		chunk := frame[:n]
		frame = frame[n:]
		c.lockW()
		err := c.fr.WriteData(st.id, false, chunk)
		if err == nil && flush && len(frame) == 0 {
			err = c.bw.Flush()
		}
		c.unlockW()
		if err != nil {
			c.close(err)
			return st.doneErr()
		}
	}
	return nil
}

// isGone says the client reset the call (lock order: c.mu, then rmu).
func (st *stream) isGone() bool {
	st.rmu.Lock()
	defer st.rmu.Unlock()
	return st.gone
}

// doneErr is what a send on an ended call returns.
func (st *stream) doneErr() error {
	if err := st.ctx.Err(); err != nil {
		return statusOf(err).Err()
	}
	return status.Error(codes.Unavailable, "transport: the connection ended")
}

// encode is m with gRPC's five-byte prefix, in st.out.
func (st *stream) encode(m any) ([]byte, error) {
	var body []byte
	if vm, ok := m.(vtMessage); ok {
		size := vm.SizeVT()
		if size > st.c.s.maxSend {
			return nil, status.Errorf(codes.ResourceExhausted, "grpc: trying to send message larger than max (%d vs. %d)", size, st.c.s.maxSend)
		}
		if cap(st.out) < 5+size {
			st.out = make([]byte, 5+size)
		}
		st.out = st.out[:5+size]
		if _, err := vm.MarshalToSizedBufferVT(st.out[5:]); err != nil {
			return nil, status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
		}
		body = st.out[5:]
	} else {
		pm, ok := m.(proto.Message)
		if !ok {
			return nil, status.Errorf(codes.Internal, "grpc: error while marshaling: %T is not a message", m)
		}
		b, err := proto.Marshal(pm)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
		}
		if len(b) > st.c.s.maxSend {
			return nil, status.Errorf(codes.ResourceExhausted, "grpc: trying to send message larger than max (%d vs. %d)", len(b), st.c.s.maxSend)
		}
		st.out = append(append(st.out[:0], 0, 0, 0, 0, 0), b...)
		body = st.out[5:]
	}
	st.out[0] = 0
	binary.BigEndian.PutUint32(st.out[1:5], uint32(len(body)))
	return st.out, nil
}

// writeHeader sends the reply's headers before its first message.
func (st *stream) writeHeader() error {
	if st.headerSent {
		return nil
	}
	if st.isGone() {
		return st.doneErr()
	}
	st.headerSent = true
	c := st.c
	c.lockW()
	c.hbuf.Reset()
	hf := func(k, v string) { c.henc.WriteField(hpack.HeaderField{Name: k, Value: v}) }
	hf(":status", "200")
	hf("content-type", "application/grpc")
	writeMD(hf, st.header)
	err := c.writeHeaderBlock(st.id, c.hbuf.Bytes(), false)
	c.unlockW()
	if err != nil {
		c.close(err)
		return st.doneErr()
	}
	return nil
}

// finish ends the call with the handler's error (nil: OK): its trailers,
// or, when nothing was sent, one trailers-only HEADERS frame.
func (st *stream) finish(err error) {
	defer st.c.ended(st)
	if st.stop != nil {
		defer st.stop()
	}
	st.rmu.Lock()
	gone, recvDone := st.gone, st.recvDone
	st.rmu.Unlock()
	if gone {
		return // the client reset the call
	}
	s := status.New(codes.OK, "")
	if err != nil {
		s = statusOf(err)
	}
	c := st.c
	c.write(func() error {
		c.hbuf.Reset()
		hf := func(k, v string) { c.henc.WriteField(hpack.HeaderField{Name: k, Value: v}) }
		if !st.headerSent {
			hf(":status", "200")
			hf("content-type", "application/grpc")
			writeMD(hf, st.header)
		}
		hf("grpc-status", strconv.Itoa(int(s.Code())))
		if msg := s.Message(); msg != "" {
			hf("grpc-message", encodeGrpcMessage(msg))
		}
		if p := s.Proto(); len(p.GetDetails()) > 0 {
			if b, err := proto.Marshal(p); err == nil {
				hf("grpc-status-details-bin", base64.RawStdEncoding.EncodeToString(b))
			}
		}
		writeMD(hf, st.trailer)
		if err := c.writeHeaderBlock(st.id, c.hbuf.Bytes(), true); err != nil {
			return err
		}
		if !recvDone {
			// The answer is complete: the client need send no more.
			return c.fr.WriteRSTStream(st.id, http2.ErrCodeNo)
		}
		return nil
	})
}

// writeMD writes metadata as header fields (binary values base64).
func writeMD(hf func(k, v string), md metadata.MD) {
	for k, vs := range md {
		if strings.HasPrefix(k, ":") || strings.HasPrefix(k, "grpc-") {
			continue
		}
		for _, v := range vs {
			if strings.HasSuffix(k, "-bin") {
				v = base64.RawStdEncoding.EncodeToString([]byte(v))
			}
			hf(k, v)
		}
	}
}

// encodeGrpcMessage percent-encodes what grpc-message may not carry.
func encodeGrpcMessage(msg string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c >= ' ' && c <= '~' && c != '%' {
			if b != nil {
				b = append(b, c)
			}
			continue
		}
		if b == nil {
			b = append(make([]byte, 0, len(msg)+8), msg[:i]...)
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	if b == nil {
		return msg
	}
	return string(b)
}

// Context is the call's context: the caller's peer, its deadline, and
// cancelled when the client resets the call or the connection ends.
func (st *stream) Context() context.Context { return st.ctx }

// SetHeader adds metadata to the reply's headers.
func (st *stream) SetHeader(md metadata.MD) error {
	if st.headerSent {
		return status.Error(codes.Internal, "transport: the headers were already sent")
	}
	st.header = metadata.Join(st.header, md)
	return nil
}

// SendHeader sends the reply's headers with md now.
func (st *stream) SendHeader(md metadata.MD) error {
	if err := st.SetHeader(md); err != nil {
		return err
	}
	if err := st.writeHeader(); err != nil {
		return err
	}
	return st.c.write(func() error { return nil })
}

// SetTrailer adds metadata to the reply's trailers.
func (st *stream) SetTrailer(md metadata.MD) { st.trailer = metadata.Join(st.trailer, md) }
