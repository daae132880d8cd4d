package client

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"golang.org/x/net/http2/hpack"
)

// HTTP/2 framing (RFC 9113, section 4 and 6), the part h2Conn uses. It is
// written here rather than taken from golang.org/x/net/http2, whose
// package brings net/http and its dependencies into every command and
// their initialisation into every command's start. Its error texts follow
// x/net's, which h2Conn's callers see.

type h2FrameType uint8

const (
	h2FrameData         h2FrameType = 0x0
	h2FrameHeaders      h2FrameType = 0x1
	h2FramePriority     h2FrameType = 0x2
	h2FrameRSTStream    h2FrameType = 0x3
	h2FrameSettings     h2FrameType = 0x4
	h2FramePushPromise  h2FrameType = 0x5
	h2FramePing         h2FrameType = 0x6
	h2FrameGoAway       h2FrameType = 0x7
	h2FrameWindowUpdate h2FrameType = 0x8
	h2FrameContinuation h2FrameType = 0x9
)

var h2FrameNames = [...]string{
	h2FrameData:         "DATA",
	h2FrameHeaders:      "HEADERS",
	h2FramePriority:     "PRIORITY",
	h2FrameRSTStream:    "RST_STREAM",
	h2FrameSettings:     "SETTINGS",
	h2FramePushPromise:  "PUSH_PROMISE",
	h2FramePing:         "PING",
	h2FrameGoAway:       "GOAWAY",
	h2FrameWindowUpdate: "WINDOW_UPDATE",
	h2FrameContinuation: "CONTINUATION",
}

func (t h2FrameType) String() string {
	if int(t) < len(h2FrameNames) {
		return h2FrameNames[t]
	}
	return fmt.Sprintf("UNKNOWN_FRAME_TYPE_%d", uint8(t))
}

type h2Flags uint8

const (
	h2FlagEndStream  h2Flags = 0x1 // DATA, HEADERS
	h2FlagAck        h2Flags = 0x1 // SETTINGS, PING
	h2FlagEndHeaders h2Flags = 0x4 // HEADERS, CONTINUATION
	h2FlagPadded     h2Flags = 0x8 // DATA, HEADERS
	h2FlagPriority   h2Flags = 0x20
)

type h2SettingID uint16

const (
	h2SettingHeaderTableSize      h2SettingID = 0x1
	h2SettingEnablePush           h2SettingID = 0x2
	h2SettingMaxConcurrentStreams h2SettingID = 0x3
	h2SettingInitialWindowSize    h2SettingID = 0x4
	h2SettingMaxFrameSize         h2SettingID = 0x5
	h2SettingMaxHeaderListSize    h2SettingID = 0x6
)

type h2Setting struct {
	ID  h2SettingID
	Val uint32
}

// h2ErrCode is an RST_STREAM's or GOAWAY's error code.
type h2ErrCode uint32

const (
	h2ErrCodeNo                 h2ErrCode = 0x0
	h2ErrCodeProtocol           h2ErrCode = 0x1
	h2ErrCodeInternal           h2ErrCode = 0x2
	h2ErrCodeFlowControl        h2ErrCode = 0x3
	h2ErrCodeSettingsTimeout    h2ErrCode = 0x4
	h2ErrCodeStreamClosed       h2ErrCode = 0x5
	h2ErrCodeFrameSize          h2ErrCode = 0x6
	h2ErrCodeRefusedStream      h2ErrCode = 0x7
	h2ErrCodeCancel             h2ErrCode = 0x8
	h2ErrCodeCompression        h2ErrCode = 0x9
	h2ErrCodeConnect            h2ErrCode = 0xa
	h2ErrCodeEnhanceYourCalm    h2ErrCode = 0xb
	h2ErrCodeInadequateSecurity h2ErrCode = 0xc
	h2ErrCodeHTTP11Required     h2ErrCode = 0xd
)

var h2ErrCodeNames = [...]string{
	h2ErrCodeNo:                 "NO_ERROR",
	h2ErrCodeProtocol:           "PROTOCOL_ERROR",
	h2ErrCodeInternal:           "INTERNAL_ERROR",
	h2ErrCodeFlowControl:        "FLOW_CONTROL_ERROR",
	h2ErrCodeSettingsTimeout:    "SETTINGS_TIMEOUT",
	h2ErrCodeStreamClosed:       "STREAM_CLOSED",
	h2ErrCodeFrameSize:          "FRAME_SIZE_ERROR",
	h2ErrCodeRefusedStream:      "REFUSED_STREAM",
	h2ErrCodeCancel:             "CANCEL",
	h2ErrCodeCompression:        "COMPRESSION_ERROR",
	h2ErrCodeConnect:            "CONNECT_ERROR",
	h2ErrCodeEnhanceYourCalm:    "ENHANCE_YOUR_CALM",
	h2ErrCodeInadequateSecurity: "INADEQUATE_SECURITY",
	h2ErrCodeHTTP11Required:     "HTTP_1_1_REQUIRED",
}

// String is the code's RFC name, as x/net's ErrCode prints it: a stream's
// status message carries it.
func (e h2ErrCode) String() string {
	if int64(e) < int64(len(h2ErrCodeNames)) {
		return h2ErrCodeNames[e]
	}
	return fmt.Sprintf("unknown error code 0x%x", uint32(e))
}

// h2ConnError is the peer breaking the protocol: the connection cannot go
// on.
type h2ConnError struct {
	Code   h2ErrCode
	Reason string
}

func (e h2ConnError) Error() string {
	return fmt.Sprintf("connection error: %v: %s", e.Code, e.Reason)
}

func h2ConnErrorf(code h2ErrCode, format string, args ...any) error {
	return h2ConnError{code, fmt.Sprintf(format, args...)}
}

var (
	errH2FrameTooLarge = errors.New("http2: frame too large")
	errH2StreamID      = errors.New("http2: invalid stream ID")
)

const (
	h2ClientPreface  = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	h2FrameHeaderLen = 9
	h2MinMaxFrame    = 1 << 14
	h2MaxMaxFrame    = 1<<24 - 1
	h2MaxWindow      = 1<<31 - 1
)

// h2Frame is a frame read. What it holds (data, fields, settings) is the
// framer's and valid until the next read.
type h2Frame struct {
	Type     h2FrameType
	Flags    h2Flags
	StreamID uint32
	Length   uint32 // of the payload, padding included (a DATA frame's cost in the flow-control windows); 0 for HEADERS, whose block may span frames

	Data         []byte              // DATA, less its padding
	Fields       []hpack.HeaderField // HEADERS with its CONTINUATIONs, decoded
	ErrCode      h2ErrCode           // RST_STREAM, GOAWAY
	LastStreamID uint32              // GOAWAY
	DebugData    []byte              // GOAWAY
	Settings     []h2Setting         // SETTINGS
	PingData     [8]byte             // PING
	Increment    uint32              // WINDOW_UPDATE
}

// StreamEnded says whether a DATA or HEADERS frame ends its stream.
func (f *h2Frame) StreamEnded() bool { return f.Flags&h2FlagEndStream != 0 }

// IsAck says whether a SETTINGS or PING frame is an acknowledgement.
func (f *h2Frame) IsAck() bool { return f.Flags&h2FlagAck != 0 }

// h2Framer reads and writes frames. Its writes and its reads may run
// concurrently with each other, not with themselves. After a read error
// it reads no more: every read error ends the connection.
type h2Framer struct {
	w    io.Writer
	wbuf []byte // a frame being written: its header, and a small payload

	r       io.Reader
	maxRead uint32 // the largest frame payload read
	maxList uint32 // the largest header list decoded (hpack's size: names, values, 32 a field)
	hdec    *hpack.Decoder
	rhdr    [h2FrameHeaderLen]byte
	rbuf    []byte // the payload read; grows to maxRead at most
	frame   h2Frame
	fields  []hpack.HeaderField
	sets    []h2Setting
	// A header block's decoding: the size left for fields, and why it
	// failed.
	listLeft uint32
	listErr  error
}

// newH2Framer writes frames to w and reads them from r, none larger than
// maxRead nor a header list larger than maxList.
func newH2Framer(w io.Writer, r io.Reader, maxRead, maxList uint32) *h2Framer {
	fr := &h2Framer{w: w, r: r, maxRead: maxRead, maxList: maxList}
	fr.hdec = hpack.NewDecoder(4096, fr.emit)
	// No string longer than the list may hold: hpack allocates a string
	// before it is emitted, and buffers a field split across fragments
	// up to about twice this.
	fr.hdec.SetMaxStringLength(int(min(maxList, 1<<30)))
	return fr
}

// Writes.

func (fr *h2Framer) writePreface() error {
	n, err := io.WriteString(fr.w, h2ClientPreface)
	if err == nil && n < len(h2ClientPreface) {
		err = io.ErrShortWrite
	}
	return err
}

// start begins a frame in wbuf; send fills in its length.
func (fr *h2Framer) start(t h2FrameType, flags h2Flags, stream uint32) {
	fr.wbuf = append(fr.wbuf[:0], 0, 0, 0, byte(t), byte(flags), 0, 0, 0, 0)
	binary.BigEndian.PutUint32(fr.wbuf[5:], stream)
}

// send writes the frame started in wbuf, with payload after what wbuf
// holds: a large payload is not copied into wbuf.
func (fr *h2Framer) send(payload []byte) error {
	n := len(fr.wbuf) - h2FrameHeaderLen + len(payload)
	if n > h2MaxMaxFrame {
		return fmt.Errorf("%w: %d bytes", errH2FrameTooLarge, n)
	}
	fr.wbuf[0], fr.wbuf[1], fr.wbuf[2] = byte(n>>16), byte(n>>8), byte(n)
	if err := writeAll(fr.w, fr.wbuf); err != nil {
		return err
	}
	if len(payload) == 0 {
		return nil
	}
	return writeAll(fr.w, payload)
}

func writeAll(w io.Writer, p []byte) error {
	n, err := w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return err
}

func validStream(id uint32) bool { return id != 0 && id <= h2MaxWindow }

func (fr *h2Framer) writeSettings(settings ...h2Setting) error {
	fr.start(h2FrameSettings, 0, 0)
	for _, s := range settings {
		fr.wbuf = binary.BigEndian.AppendUint16(fr.wbuf, uint16(s.ID))
		fr.wbuf = binary.BigEndian.AppendUint32(fr.wbuf, s.Val)
	}
	return fr.send(nil)
}

func (fr *h2Framer) writeSettingsAck() error {
	fr.start(h2FrameSettings, h2FlagAck, 0)
	return fr.send(nil)
}

// writeWindowUpdate grants incr more bytes on the stream, or on the
// connection for stream 0.
func (fr *h2Framer) writeWindowUpdate(stream, incr uint32) error {
	if incr < 1 || incr > h2MaxWindow {
		return fmt.Errorf("http2: illegal window increment value %d", incr)
	}
	fr.start(h2FrameWindowUpdate, 0, stream)
	fr.wbuf = binary.BigEndian.AppendUint32(fr.wbuf, incr)
	return fr.send(nil)
}

func (fr *h2Framer) writePing(ack bool, data [8]byte) error {
	var flags h2Flags
	if ack {
		flags = h2FlagAck
	}
	fr.start(h2FramePing, flags, 0)
	fr.wbuf = append(fr.wbuf, data[:]...)
	return fr.send(nil)
}

// writeHeaders writes a header block, in CONTINUATION frames after the
// HEADERS one where it is larger than the peer's maxFrame.
func (fr *h2Framer) writeHeaders(stream uint32, block []byte, maxFrame uint32) error {
	if !validStream(stream) {
		return errH2StreamID
	}
	maxFrame = max(maxFrame, h2MinMaxFrame) // the least every peer takes
	t := h2FrameHeaders
	for {
		frag := block
		if uint32(len(frag)) > maxFrame {
			frag = frag[:maxFrame]
		}
		block = block[len(frag):]
		var flags h2Flags
		if len(block) == 0 {
			flags = h2FlagEndHeaders
		}
		fr.start(t, flags, stream)
		if err := fr.send(frag); err != nil {
			return err
		}
		if len(block) == 0 {
			return nil
		}
		t = h2FrameContinuation
	}
}

// writeData writes one DATA frame; the caller keeps it within the peer's
// maximum frame size and windows.
func (fr *h2Framer) writeData(stream uint32, endStream bool, data []byte) error {
	if !validStream(stream) {
		return errH2StreamID
	}
	var flags h2Flags
	if endStream {
		flags = h2FlagEndStream
	}
	fr.start(h2FrameData, flags, stream)
	return fr.send(data)
}

func (fr *h2Framer) writeRSTStream(stream uint32, code h2ErrCode) error {
	if !validStream(stream) {
		return errH2StreamID
	}
	fr.start(h2FrameRSTStream, 0, stream)
	fr.wbuf = binary.BigEndian.AppendUint32(fr.wbuf, uint32(code))
	return fr.send(nil)
}

// Reads.

type h2FrameHeader struct {
	Type     h2FrameType
	Flags    h2Flags
	StreamID uint32
	Length   uint32
}

// readHeader reads a frame's 9-byte header, refusing a frame longer than
// maxRead before anything is allocated for it.
func (fr *h2Framer) readHeader() (h2FrameHeader, error) {
	b := fr.rhdr[:]
	if _, err := io.ReadFull(fr.r, b); err != nil {
		return h2FrameHeader{}, err
	}
	h := h2FrameHeader{
		Length:   uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		Type:     h2FrameType(b[3]),
		Flags:    h2Flags(b[4]),
		StreamID: binary.BigEndian.Uint32(b[5:]) & h2MaxWindow, // the reserved bit ignored
	}
	if h.Length > fr.maxRead {
		if string(b) == "HTTP/1.1 " {
			// Not an HTTP/2 server: say so.
			return h, fmt.Errorf("http2: failed reading the frame payload: %w, note that the frame header looked like an HTTP/1.1 header", errH2FrameTooLarge)
		}
		return h, fmt.Errorf("%w: %s frame of %d bytes, more than %d", errH2FrameTooLarge, h.Type, h.Length, fr.maxRead)
	}
	return h, nil
}

// readPayload reads the frame's payload into rbuf.
func (fr *h2Framer) readPayload(h h2FrameHeader) ([]byte, error) {
	if uint32(cap(fr.rbuf)) < h.Length {
		fr.rbuf = make([]byte, h.Length)
	}
	p := fr.rbuf[:h.Length]
	if _, err := io.ReadFull(fr.r, p); err != nil {
		return nil, unexpectedEOF(err)
	}
	return p, nil
}

// skip reads past a frame's payload without keeping it.
func (fr *h2Framer) skip(h h2FrameHeader) error {
	_, err := io.CopyN(io.Discard, fr.r, int64(h.Length))
	return unexpectedEOF(err)
}

// unexpectedEOF is err, an end within a frame.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readFrame reads the next frame h2Conn acts on: frames of unknown types
// and PRIORITY frames are read past, a HEADERS frame comes with its
// CONTINUATIONs and its block decoded. Every error is the connection's
// end.
func (fr *h2Framer) readFrame() (*h2Frame, error) {
	for {
		h, err := fr.readHeader()
		if err != nil {
			return nil, err
		}
		f, err := fr.readFrameFor(h)
		if err != nil || f != nil {
			return f, err
		}
	}
}

// readFrameFor reads the frame h begins; nil and no error for a frame
// read past.
func (fr *h2Framer) readFrameFor(h h2FrameHeader) (*h2Frame, error) {
	switch h.Type {
	case h2FramePriority:
		// Deprecated (RFC 9113, 5.3.2), still to be well formed.
		if h.StreamID == 0 {
			return nil, h2ConnErrorf(h2ErrCodeProtocol, "PRIORITY frame with stream ID 0")
		}
		if h.Length != 5 {
			return nil, h2ConnErrorf(h2ErrCodeFrameSize, "PRIORITY frame payload size was %d; want 5", h.Length)
		}
		return nil, fr.skip(h)
	case h2FrameContinuation:
		// Those that belong are read with their HEADERS.
		return nil, h2ConnErrorf(h2ErrCodeProtocol, "unexpected CONTINUATION for stream %d", h.StreamID)
	case h2FramePushPromise:
		// Our SETTINGS disable push.
		return nil, h2ConnErrorf(h2ErrCodeProtocol, "PUSH_PROMISE for stream %d with push disabled", h.StreamID)
	case h2FrameData, h2FrameHeaders, h2FrameRSTStream, h2FrameSettings, h2FramePing, h2FrameGoAway, h2FrameWindowUpdate:
	default:
		return nil, fr.skip(h) // unknown types are ignored (RFC 9113, 4.1)
	}
	p, err := fr.readPayload(h)
	if err != nil {
		return nil, err
	}
	f := &fr.frame
	*f = h2Frame{Type: h.Type, Flags: h.Flags, StreamID: h.StreamID, Length: h.Length}
	switch h.Type {
	case h2FrameData:
		if h.StreamID == 0 {
			return nil, h2ConnErrorf(h2ErrCodeProtocol, "DATA frame with stream ID 0")
		}
		if f.Data, err = unpad(h, p); err != nil {
			return nil, err
		}
	case h2FrameHeaders:
		if err := fr.readHeaderBlock(h, p); err != nil {
			return nil, err
		}
		f.Fields, f.Length = fr.fields, 0
	case h2FrameRSTStream:
		if len(p) != 4 {
			return nil, h2ConnErrorf(h2ErrCodeFrameSize, "RST_STREAM frame payload size was %d; want 4", len(p))
		}
		if h.StreamID == 0 {
			return nil, h2ConnErrorf(h2ErrCodeProtocol, "RST_STREAM frame with stream ID 0")
		}
		f.ErrCode = h2ErrCode(binary.BigEndian.Uint32(p))
	case h2FrameSettings:
		if err := fr.readSettings(h, p); err != nil {
			return nil, err
		}
		f.Settings = fr.sets
	case h2FramePing:
		if len(p) != 8 {
			return nil, h2ConnErrorf(h2ErrCodeFrameSize, "PING frame payload size was %d; want 8", len(p))
		}
		if h.StreamID != 0 {
			return nil, h2ConnErrorf(h2ErrCodeProtocol, "PING frame with stream ID %d", h.StreamID)
		}
		copy(f.PingData[:], p)
	case h2FrameGoAway:
		if h.StreamID != 0 {
			return nil, h2ConnErrorf(h2ErrCodeProtocol, "GOAWAY frame with stream ID %d", h.StreamID)
		}
		if len(p) < 8 {
			return nil, h2ConnErrorf(h2ErrCodeFrameSize, "GOAWAY frame payload size was %d; want at least 8", len(p))
		}
		f.LastStreamID = binary.BigEndian.Uint32(p) & h2MaxWindow
		f.ErrCode = h2ErrCode(binary.BigEndian.Uint32(p[4:]))
		f.DebugData = p[8:]
	case h2FrameWindowUpdate:
		if len(p) != 4 {
			return nil, h2ConnErrorf(h2ErrCodeFrameSize, "WINDOW_UPDATE frame payload size was %d; want 4", len(p))
		}
		f.Increment = binary.BigEndian.Uint32(p) & h2MaxWindow
		if f.Increment == 0 {
			return nil, h2ConnErrorf(h2ErrCodeProtocol, "WINDOW_UPDATE frame for stream %d with zero increment", h.StreamID)
		}
	}
	return f, nil
}

// unpad is a DATA or HEADERS payload less its padding, and a HEADERS
// frame's less its priority, deprecated and ignored (RFC 9113, 5.3.2).
func unpad(h h2FrameHeader, p []byte) ([]byte, error) {
	pad := 0
	if h.Flags&h2FlagPadded != 0 {
		if len(p) == 0 {
			return nil, h2ConnErrorf(h2ErrCodeFrameSize, "padded %s frame without its pad length", h.Type)
		}
		pad, p = int(p[0]), p[1:]
	}
	if h.Type == h2FrameHeaders && h.Flags&h2FlagPriority != 0 {
		if len(p) < 5 {
			return nil, h2ConnErrorf(h2ErrCodeFrameSize, "HEADERS frame too short for its priority")
		}
		p = p[5:]
	}
	if pad > len(p) {
		return nil, h2ConnErrorf(h2ErrCodeProtocol, "pad size larger than %s payload", h.Type)
	}
	return p[:len(p)-pad], nil
}

func (fr *h2Framer) readSettings(h h2FrameHeader, p []byte) error {
	if h.Flags&h2FlagAck != 0 && len(p) > 0 {
		return h2ConnErrorf(h2ErrCodeFrameSize, "SETTINGS ack with a payload of %d bytes", len(p))
	}
	if h.StreamID != 0 {
		return h2ConnErrorf(h2ErrCodeProtocol, "SETTINGS frame with stream ID %d", h.StreamID)
	}
	if len(p)%6 != 0 {
		return h2ConnErrorf(h2ErrCodeFrameSize, "SETTINGS frame payload size was %d; want a multiple of 6", len(p))
	}
	fr.sets = fr.sets[:0]
	for ; len(p) > 0; p = p[6:] {
		s := h2Setting{ID: h2SettingID(binary.BigEndian.Uint16(p)), Val: binary.BigEndian.Uint32(p[2:])}
		switch {
		case s.ID == h2SettingInitialWindowSize && s.Val > h2MaxWindow:
			return h2ConnErrorf(h2ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE %d", s.Val)
		case s.ID == h2SettingMaxFrameSize && (s.Val < h2MinMaxFrame || s.Val > h2MaxMaxFrame):
			// h2Conn sizes the frames it writes by it.
			return h2ConnErrorf(h2ErrCodeProtocol, "SETTINGS_MAX_FRAME_SIZE %d", s.Val)
		}
		fr.sets = append(fr.sets, s)
	}
	return nil
}

// readHeaderBlock decodes a HEADERS frame's block, p its payload, and the
// CONTINUATION frames that must follow it until one ends the block, into
// fr.fields. The block is decoded as it comes, never held whole.
func (fr *h2Framer) readHeaderBlock(h h2FrameHeader, p []byte) error {
	if h.StreamID == 0 {
		return h2ConnErrorf(h2ErrCodeProtocol, "HEADERS frame with stream ID 0")
	}
	frag, err := unpad(h, p)
	if err != nil {
		return err
	}
	fr.fields = fr.fields[:0]
	fr.listLeft, fr.listErr = fr.maxList, nil
	fr.hdec.SetEmitEnabled(true)
	// The encoded block is held to twice the list, as x/net does: no
	// sane encoder makes it larger, and decoding it costs.
	blockLeft := 2 * uint64(fr.maxList)
	for {
		if uint64(len(frag)) > blockLeft {
			return h2ConnErrorf(h2ErrCodeProtocol, "header block for stream %d larger than %d bytes", h.StreamID, 2*uint64(fr.maxList))
		}
		blockLeft -= uint64(len(frag))
		if _, err := fr.hdec.Write(frag); err != nil {
			return h2ConnErrorf(h2ErrCodeCompression, "%v", err)
		}
		if fr.listErr != nil {
			return fr.listErr
		}
		if h.Flags&h2FlagEndHeaders != 0 {
			break
		}
		next, err := fr.readHeader()
		if err != nil {
			return unexpectedEOF(err)
		}
		if next.Type != h2FrameContinuation {
			return h2ConnErrorf(h2ErrCodeProtocol, "got %s for stream %d; expected CONTINUATION following HEADERS for stream %d", next.Type, next.StreamID, h.StreamID)
		}
		if next.StreamID != h.StreamID {
			return h2ConnErrorf(h2ErrCodeProtocol, "got CONTINUATION for stream %d; expected stream %d", next.StreamID, h.StreamID)
		}
		if frag, err = fr.readPayload(next); err != nil {
			return err
		}
		h.Flags = h.Flags&^h2FlagEndHeaders | next.Flags&h2FlagEndHeaders
	}
	if err := fr.hdec.Close(); err != nil {
		return h2ConnErrorf(h2ErrCodeCompression, "%v", err)
	}
	return nil
}

// emit is the decoder's: it keeps a field while the list is within its
// bound.
func (fr *h2Framer) emit(hf hpack.HeaderField) {
	if fr.listErr != nil {
		return
	}
	if size := hf.Size(); size <= fr.listLeft {
		fr.listLeft -= size
		fr.fields = append(fr.fields, hf)
		return
	}
	fr.listErr = h2ConnErrorf(h2ErrCodeProtocol, "header list larger than %d bytes", fr.maxList)
	fr.hdec.SetEmitEnabled(false) // strings are not decoded, nor allocated
}
