package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"xce/lib/api"
	"xce/lib/rpcstatus"
)

// The reader's bounds in these tests: x/net's least read size, and a
// list bound far above any case's but that of the list too large.
const (
	testMaxRead = 1 << 14
	testMaxList = 1 << 20
)

// fmtFrame is what a test compares of a frame read.
func fmtFrame(f *h2Frame) string {
	return fmt.Sprintf("%v flags=%#x stream=%d len=%d data=%q fields=%v code=%v last=%d settings=%v ping=%x incr=%d",
		f.Type, uint8(f.Flags), f.StreamID, f.Length, f.Data, f.Fields, f.ErrCode, f.LastStreamID, f.Settings, f.PingData, f.Increment)
}

// xnetWriter writes frames with x/net's framer, header blocks with one
// hpack encoder (its dynamic table shared across blocks, as a server's).
type xnetWriter struct {
	*http2.Framer
	buf  bytes.Buffer
	hbuf bytes.Buffer
	henc *hpack.Encoder
}

func newXnetWriter() *xnetWriter {
	w := &xnetWriter{}
	w.Framer = http2.NewFramer(&w.buf, nil)
	w.AllowIllegalWrites = true
	w.henc = hpack.NewEncoder(&w.hbuf)
	return w
}

// block encodes fields as a header block.
func (w *xnetWriter) block(kv ...string) []byte {
	w.hbuf.Reset()
	for i := 0; i < len(kv); i += 2 {
		w.henc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return bytes.Clone(w.hbuf.Bytes())
}

func fields(kv ...string) []hpack.HeaderField {
	var fs []hpack.HeaderField
	for i := 0; i < len(kv); i += 2 {
		fs = append(fs, hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return fs
}

func connErr(code h2ErrCode) func(error) bool {
	return func(err error) bool {
		var ce h2ConnError
		return errors.As(err, &ce) && ce.Code == code
	}
}

func isErr(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

type readCase struct {
	name    string
	maxList uint32 // testMaxList when 0
	write   func(w *xnetWriter)
	want    []h2Frame        // read in order; then io.EOF unless wantErr
	wantErr func(error) bool // the read after want's frames
}

var trailer = []string{"grpc-status", "0", "grpc-message", "fine"}

var readCases = []readCase{
	{
		name:  "DATA",
		write: func(w *xnetWriter) { w.WriteData(1, false, []byte("hello")) },
		want:  []h2Frame{{Type: h2FrameData, StreamID: 1, Length: 5, Data: []byte("hello")}},
	},
	{
		name:  "DATA END_STREAM, empty",
		write: func(w *xnetWriter) { w.WriteData(3, true, nil) },
		want:  []h2Frame{{Type: h2FrameData, Flags: h2FlagEndStream, StreamID: 3}},
	},
	{
		name:  "DATA padded",
		write: func(w *xnetWriter) { w.WriteDataPadded(5, true, []byte("abc"), make([]byte, 7)) },
		want:  []h2Frame{{Type: h2FrameData, Flags: h2FlagEndStream | h2FlagPadded, StreamID: 5, Length: 11, Data: []byte("abc")}},
	},
	{
		name:  "DATA all padding",
		write: func(w *xnetWriter) { w.WriteDataPadded(5, false, nil, make([]byte, 255)) },
		want:  []h2Frame{{Type: h2FrameData, Flags: h2FlagPadded, StreamID: 5, Length: 256}},
	},
	{
		name:  "DATA of the largest size read",
		write: func(w *xnetWriter) { w.WriteData(1, false, bytes.Repeat([]byte("d"), testMaxRead)) },
		want:  []h2Frame{{Type: h2FrameData, StreamID: 1, Length: testMaxRead, Data: bytes.Repeat([]byte("d"), testMaxRead)}},
	},
	{
		name: "DATA, stream ID's reserved bit ignored",
		write: func(w *xnetWriter) {
			w.WriteRawFrame(http2.FrameData, 0, 1<<31|7, []byte("x"))
		},
		want: []h2Frame{{Type: h2FrameData, StreamID: 7, Length: 1, Data: []byte("x")}},
	},
	{
		name: "HEADERS",
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block(":status", "200", "content-type", "application/grpc"), EndHeaders: true})
		},
		want: []h2Frame{{Type: h2FrameHeaders, Flags: h2FlagEndHeaders, StreamID: 1, Fields: fields(":status", "200", "content-type", "application/grpc")}},
	},
	{
		name: "HEADERS padded, with priority, ending the stream",
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: w.block(trailer...), EndStream: true, EndHeaders: true, PadLength: 9,
				Priority: http2.PriorityParam{StreamDep: 1, Exclusive: true, Weight: 200}})
		},
		want: []h2Frame{{Type: h2FrameHeaders, Flags: h2FlagEndStream | h2FlagEndHeaders | h2FlagPadded | h2FlagPriority, StreamID: 3, Fields: fields(trailer...)}},
	},
	{
		name: "HEADERS and CONTINUATIONs, a field split across them",
		write: func(w *xnetWriter) {
			b := w.block(":status", "200", "x-long", strings.Repeat("v", 100), "grpc-status", "0")
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:20], EndStream: true})
			w.WriteContinuation(1, false, b[20:50])
			w.WriteContinuation(1, false, nil)
			w.WriteContinuation(1, true, b[50:])
			w.WriteData(1, false, []byte("after"))
		},
		want: []h2Frame{
			{Type: h2FrameHeaders, Flags: h2FlagEndStream, StreamID: 1, Fields: fields(":status", "200", "x-long", strings.Repeat("v", 100), "grpc-status", "0")},
			{Type: h2FrameData, StreamID: 1, Length: 5, Data: []byte("after")},
		},
	},
	{
		name: "HEADERS, the dynamic table kept across blocks",
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block("x-custom", "one"), EndHeaders: true})
			b := w.block("x-custom", "one")
			if len(b) != 1 {
				panic("the second block does not index the first's field")
			}
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: b, EndHeaders: true})
		},
		want: []h2Frame{
			{Type: h2FrameHeaders, Flags: h2FlagEndHeaders, StreamID: 1, Fields: fields("x-custom", "one")},
			{Type: h2FrameHeaders, Flags: h2FlagEndHeaders, StreamID: 3, Fields: fields("x-custom", "one")},
		},
	},
	{
		name:  "RST_STREAM",
		write: func(w *xnetWriter) { w.WriteRSTStream(9, http2.ErrCodeRefusedStream) },
		want:  []h2Frame{{Type: h2FrameRSTStream, StreamID: 9, Length: 4, ErrCode: h2ErrCodeRefusedStream}},
	},
	{
		name: "SETTINGS and its ack",
		write: func(w *xnetWriter) {
			w.WriteSettings(http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0}, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1},
				http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1<<24 - 1}, http2.Setting{ID: 0x99, Val: 5})
			w.WriteSettings()
			w.WriteSettingsAck()
		},
		want: []h2Frame{
			{Type: h2FrameSettings, Length: 24, Settings: []h2Setting{{h2SettingHeaderTableSize, 0}, {h2SettingInitialWindowSize, 1<<31 - 1}, {h2SettingMaxFrameSize, 1<<24 - 1}, {0x99, 5}}},
			{Type: h2FrameSettings},
			{Type: h2FrameSettings, Flags: h2FlagAck},
		},
	},
	{
		name: "PING and its ack",
		write: func(w *xnetWriter) {
			w.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
			w.WritePing(true, [8]byte{8, 7})
		},
		want: []h2Frame{
			{Type: h2FramePing, Length: 8, PingData: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}},
			{Type: h2FramePing, Flags: h2FlagAck, Length: 8, PingData: [8]byte{8, 7}},
		},
	},
	{
		name: "GOAWAY",
		write: func(w *xnetWriter) {
			w.WriteGoAway(41, http2.ErrCodeEnhanceYourCalm, []byte("too many pings"))
			w.WriteRawFrame(http2.FrameGoAway, 0, 0, []byte{0x80, 0, 0, 43, 0, 0, 0, 0}) // the reserved bit ignored
		},
		want: []h2Frame{
			{Type: h2FrameGoAway, Length: 22, LastStreamID: 41, ErrCode: h2ErrCodeEnhanceYourCalm},
			{Type: h2FrameGoAway, Length: 8, LastStreamID: 43},
		},
	},
	{
		name: "WINDOW_UPDATE",
		write: func(w *xnetWriter) {
			w.WriteWindowUpdate(0, 1<<31-1)
			w.WriteRawFrame(http2.FrameWindowUpdate, 0, 3, []byte{0x80, 0, 0, 1}) // the reserved bit ignored
		},
		want: []h2Frame{
			{Type: h2FrameWindowUpdate, Length: 4, Increment: 1<<31 - 1},
			{Type: h2FrameWindowUpdate, StreamID: 3, Length: 4, Increment: 1},
		},
	},
	{
		name: "unknown types and PRIORITY read past",
		write: func(w *xnetWriter) {
			w.WriteRawFrame(0xfa, 0xff, 0, bytes.Repeat([]byte("?"), testMaxRead))
			w.WritePriority(3, http2.PriorityParam{StreamDep: 1, Weight: 3})
			w.WriteRawFrame(0x10, 0, 0, nil) // PRIORITY_UPDATE, not taken
			w.WritePing(false, [8]byte{9})
		},
		want: []h2Frame{{Type: h2FramePing, Length: 8, PingData: [8]byte{9}}},
	},

	// The connection's end.
	{
		name:    "nothing",
		write:   func(w *xnetWriter) {},
		wantErr: isErr(io.EOF),
	},
	{
		name:    "a frame header cut short",
		write:   func(w *xnetWriter) { w.buf.Write([]byte{0, 0, 8, 6, 0}) },
		wantErr: isErr(io.ErrUnexpectedEOF),
	},
	{
		name: "a payload cut short",
		write: func(w *xnetWriter) {
			w.WritePing(false, [8]byte{})
			w.buf.Truncate(w.buf.Len() - 8)
		},
		wantErr: isErr(io.ErrUnexpectedEOF),
	},
	{
		name: "a header block cut short",
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block(trailer...)})
		},
		wantErr: isErr(io.ErrUnexpectedEOF),
	},

	// Frames too large.
	{
		name:    "DATA one byte too large",
		write:   func(w *xnetWriter) { w.WriteData(1, false, make([]byte, testMaxRead+1)) },
		wantErr: isErr(errH2FrameTooLarge),
	},
	{
		name:    "an unknown frame too large, not read",
		write:   func(w *xnetWriter) { w.buf.Write([]byte{0xff, 0xff, 0xff, 0xfa, 0, 0, 0, 0, 0}) },
		wantErr: isErr(errH2FrameTooLarge),
	},
	{
		name: "a CONTINUATION too large",
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block(":status", "200")})
			w.WriteContinuation(1, true, make([]byte, testMaxRead+1))
		},
		wantErr: isErr(errH2FrameTooLarge),
	},
	{
		name:  "an HTTP/1.1 answer",
		write: func(w *xnetWriter) { w.buf.WriteString("HTTP/1.1 400 Bad Request\r\n\r\n") },
		wantErr: func(err error) bool {
			return errors.Is(err, errH2FrameTooLarge) && strings.Contains(err.Error(), "HTTP/1.1 header")
		},
	},

	// Header blocks out of bounds or broken.
	{
		name:    "a header list too large",
		maxList: 100,
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block("a", "b", "c", strings.Repeat("d", 40)), EndHeaders: true})
		},
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name:    "a header list at its bound",
		maxList: 33 + 32 + 41,
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block("a", "", "c", strings.Repeat("d", 40)), EndHeaders: true})
		},
		want: []h2Frame{{Type: h2FrameHeaders, Flags: h2FlagEndHeaders, StreamID: 1, Fields: fields("a", "", "c", strings.Repeat("d", 40))}},
	},
	{
		name:    "a header string longer than the list",
		maxList: 100,
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block("x", strings.Repeat("y", 200)), EndHeaders: true})
		},
		wantErr: connErr(h2ErrCodeCompression),
	},
	{
		name:    "a header block that decodes to nothing, too long",
		maxList: 100,
		write: func(w *xnetWriter) {
			// Table size updates to 0: no field, no end.
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: bytes.Repeat([]byte{0x20}, 150)})
			w.WriteContinuation(1, true, bytes.Repeat([]byte{0x20}, 51))
		},
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name: "a header block hpack cannot decode",
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, EndHeaders: true})
		},
		wantErr: connErr(h2ErrCodeCompression),
	},
	{
		name: "a header block ending within a field",
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block("x-a", "bcdef")[:4], EndHeaders: true})
		},
		wantErr: connErr(h2ErrCodeCompression),
	},

	// Frames out of place.
	{
		name:    "DATA on stream 0",
		write:   func(w *xnetWriter) { w.WriteData(0, false, []byte("x")) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name: "HEADERS on stream 0",
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{BlockFragment: w.block("a", "b"), EndHeaders: true})
		},
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name:    "RST_STREAM on stream 0",
		write:   func(w *xnetWriter) { w.WriteRSTStream(0, http2.ErrCodeCancel) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name:    "SETTINGS on a stream",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FrameSettings, 0, 1, nil) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name:    "PING on a stream",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FramePing, 0, 1, make([]byte, 8)) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name:    "GOAWAY on a stream",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FrameGoAway, 0, 1, make([]byte, 8)) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name:    "PRIORITY on stream 0",
		write:   func(w *xnetWriter) { w.WritePriority(0, http2.PriorityParam{Weight: 1}) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name:    "CONTINUATION without its HEADERS",
		write:   func(w *xnetWriter) { w.WriteContinuation(1, true, w.block("a", "b")) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name: "HEADERS followed by other than its CONTINUATION",
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block("a", "b")})
			w.WriteData(1, false, []byte("x"))
		},
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name: "HEADERS followed by a CONTINUATION of another stream",
		write: func(w *xnetWriter) {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block("a", "b")})
			w.WriteContinuation(3, true, nil)
		},
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name: "PUSH_PROMISE",
		write: func(w *xnetWriter) {
			w.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: w.block(":path", "/"), EndHeaders: true})
		},
		wantErr: connErr(h2ErrCodeProtocol),
	},

	// Bad lengths and values.
	{
		name:    "DATA padded without its pad length",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FrameData, http2.FlagDataPadded, 1, nil) },
		wantErr: connErr(h2ErrCodeFrameSize),
	},
	{
		name:    "DATA padding beyond its payload",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FrameData, http2.FlagDataPadded, 1, []byte{3, 0, 0}) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name: "HEADERS padding beyond its payload",
		write: func(w *xnetWriter) {
			w.WriteRawFrame(http2.FrameHeaders, http2.FlagHeadersPadded|http2.FlagHeadersEndHeaders, 1, append([]byte{200}, w.block("a", "b")...))
		},
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name: "HEADERS padding beyond what its priority leaves",
		write: func(w *xnetWriter) {
			w.WriteRawFrame(http2.FrameHeaders, http2.FlagHeadersPadded|http2.FlagHeadersPriority|http2.FlagHeadersEndHeaders, 1, []byte{2, 0, 0, 0, 0, 9, 0})
		},
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name: "HEADERS too short for its priority",
		write: func(w *xnetWriter) {
			w.WriteRawFrame(http2.FrameHeaders, http2.FlagHeadersPriority|http2.FlagHeadersEndHeaders, 1, []byte{0, 0, 0, 0})
		},
		wantErr: connErr(h2ErrCodeFrameSize),
	},
	{
		name:    "RST_STREAM of 3 bytes",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FrameRSTStream, 0, 1, []byte{0, 0, 8}) },
		wantErr: connErr(h2ErrCodeFrameSize),
	},
	{
		name:    "SETTINGS not of whole settings",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FrameSettings, 0, 0, make([]byte, 7)) },
		wantErr: connErr(h2ErrCodeFrameSize),
	},
	{
		name:    "SETTINGS ack with a payload",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FrameSettings, http2.FlagSettingsAck, 0, make([]byte, 6)) },
		wantErr: connErr(h2ErrCodeFrameSize),
	},
	{
		name:    "SETTINGS with a window beyond 2^31-1",
		write:   func(w *xnetWriter) { w.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 31}) },
		wantErr: connErr(h2ErrCodeFlowControl),
	},
	{
		name:    "SETTINGS with a frame size below 2^14",
		write:   func(w *xnetWriter) { w.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1<<14 - 1}) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name:    "SETTINGS with a frame size beyond 2^24-1",
		write:   func(w *xnetWriter) { w.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 24}) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name:    "PING of 7 bytes",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FramePing, 0, 0, make([]byte, 7)) },
		wantErr: connErr(h2ErrCodeFrameSize),
	},
	{
		name:    "GOAWAY of 7 bytes",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FrameGoAway, 0, 0, make([]byte, 7)) },
		wantErr: connErr(h2ErrCodeFrameSize),
	},
	{
		name:    "WINDOW_UPDATE of 5 bytes",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FrameWindowUpdate, 0, 0, []byte{0, 0, 0, 1, 0}) },
		wantErr: connErr(h2ErrCodeFrameSize),
	},
	{
		name:    "WINDOW_UPDATE of nothing",
		write:   func(w *xnetWriter) { w.WriteWindowUpdate(1, 0) },
		wantErr: connErr(h2ErrCodeProtocol),
	},
	{
		name:    "PRIORITY of 4 bytes",
		write:   func(w *xnetWriter) { w.WriteRawFrame(http2.FramePriority, 0, 1, make([]byte, 4)) },
		wantErr: connErr(h2ErrCodeFrameSize),
	},
}

func TestH2FrameReadsXNetFrames(t *testing.T) {
	for _, tc := range readCases {
		t.Run(tc.name, func(t *testing.T) {
			w := newXnetWriter()
			tc.write(w)
			maxList := tc.maxList
			if maxList == 0 {
				maxList = testMaxList
			}
			fr := newH2Framer(nil, bytes.NewReader(w.buf.Bytes()), testMaxRead, maxList)
			for i, want := range tc.want {
				f, err := fr.readFrame()
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if got, want := fmtFrame(f), fmtFrame(&want); got != want {
					t.Fatalf("frame %d:\n got %s\nwant %s", i, got, want)
				}
			}
			f, err := fr.readFrame()
			switch {
			case tc.wantErr == nil && !errors.Is(err, io.EOF):
				t.Fatalf("after the frames: %v, %v; want io.EOF", f, err)
			case tc.wantErr != nil && (err == nil || !tc.wantErr(err)):
				t.Fatalf("got %v, %v; not the error wanted", f, err)
			case err != nil && f != nil:
				t.Errorf("a frame with the error %v", err)
			}
			if cap(fr.rbuf) > testMaxRead {
				t.Errorf("a read buffer of %d bytes", cap(fr.rbuf))
			}
			if err != nil && err != io.EOF {
				t.Logf("%v", err)
			}
		})
	}
}

// The error texts a call's status carries, as x/net's.
func TestH2FrameNames(t *testing.T) {
	for c := range uint32(0x10) {
		if got, want := h2ErrCode(c).String(), http2.ErrCode(c).String(); got != want {
			t.Errorf("error code %d: %q, want %q", c, got, want)
		}
	}
	if got, want := h2ErrCode(1<<32-1).String(), http2.ErrCode(1<<32-1).String(); got != want {
		t.Errorf("error code 1<<32-1: %q, want %q", got, want)
	}
	for _, ft := range []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0x11, 0xfa} {
		if got, want := h2FrameType(ft).String(), http2.FrameType(ft).String(); got != want {
			t.Errorf("frame type %d: %q, want %q", ft, got, want)
		}
	}
	if got, want := fmt.Sprintf("%v", h2ErrCodeCancel), "CANCEL"; got != want {
		t.Errorf("CANCEL prints %q", got)
	}
}

// What the framer writes, x/net's framer reads as meant.
func TestH2FrameWritesForXNet(t *testing.T) {
	var buf bytes.Buffer
	fr := newH2Framer(&buf, nil, testMaxRead, testMaxList)
	small := hpackBlock(":method", "POST", ":path", "/xce.Controller/Submit")
	large := hpackBlock("x-large", strings.Repeat("z", 40000)) // three frames at 2^14
	steps := []struct {
		write func() error
		check func(f http2.Frame) string // what is wrong, "" if nothing
	}{
		{func() error {
			return fr.writeSettings(h2Setting{h2SettingEnablePush, 0}, h2Setting{h2SettingInitialWindowSize, 16 << 20})
		}, func(f http2.Frame) string {
			s, ok := f.(*http2.SettingsFrame)
			if !ok || s.IsAck() || s.NumSettings() != 2 || s.Setting(0) != (http2.Setting{ID: http2.SettingEnablePush, Val: 0}) || s.Setting(1) != (http2.Setting{ID: http2.SettingInitialWindowSize, Val: 16 << 20}) {
				return "not our settings"
			}
			return ""
		}},
		{fr.writeSettingsAck, func(f http2.Frame) string {
			if s, ok := f.(*http2.SettingsFrame); !ok || !s.IsAck() || s.NumSettings() != 0 {
				return "not a settings ack"
			}
			return ""
		}},
		{func() error { return fr.writeWindowUpdate(0, 1<<31-1) }, func(f http2.Frame) string {
			if u, ok := f.(*http2.WindowUpdateFrame); !ok || u.StreamID != 0 || u.Increment != 1<<31-1 {
				return "not the connection's window update"
			}
			return ""
		}},
		{func() error { return fr.writeWindowUpdate(7, 1) }, func(f http2.Frame) string {
			if u, ok := f.(*http2.WindowUpdateFrame); !ok || u.StreamID != 7 || u.Increment != 1 {
				return "not the stream's window update"
			}
			return ""
		}},
		{func() error { return fr.writePing(true, [8]byte{1, 2, 3}) }, func(f http2.Frame) string {
			if p, ok := f.(*http2.PingFrame); !ok || !p.IsAck() || p.Data != [8]byte{1, 2, 3} {
				return "not the ping ack"
			}
			return ""
		}},
		{func() error { return fr.writePing(false, [8]byte{4}) }, func(f http2.Frame) string {
			if p, ok := f.(*http2.PingFrame); !ok || p.IsAck() || p.Data != [8]byte{4} {
				return "not the ping"
			}
			return ""
		}},
		{func() error { return fr.writeHeaders(1, small, 16384) }, func(f http2.Frame) string {
			return checkMeta(f, 1, 1, ":method", "POST", ":path", "/xce.Controller/Submit")
		}},
		{func() error { return fr.writeHeaders(3, large, 16384) }, func(f http2.Frame) string {
			return checkMeta(f, 3, 3, "x-large", strings.Repeat("z", 40000))
		}},
		{func() error { return fr.writeHeaders(5, large, 1<<20) }, func(f http2.Frame) string {
			return checkMeta(f, 5, 1, "x-large", strings.Repeat("z", 40000))
		}},
		{func() error { return fr.writeData(1, false, []byte("message")) }, func(f http2.Frame) string {
			if d, ok := f.(*http2.DataFrame); !ok || d.StreamID != 1 || d.StreamEnded() || string(d.Data()) != "message" {
				return "not the data"
			}
			return ""
		}},
		{func() error { return fr.writeData(1, true, nil) }, func(f http2.Frame) string {
			if d, ok := f.(*http2.DataFrame); !ok || d.StreamID != 1 || !d.StreamEnded() || len(d.Data()) != 0 {
				return "not the stream's end"
			}
			return ""
		}},
		{func() error { return fr.writeRSTStream(3, h2ErrCodeCancel) }, func(f http2.Frame) string {
			if r, ok := f.(*http2.RSTStreamFrame); !ok || r.StreamID != 3 || r.ErrCode != http2.ErrCodeCancel {
				return "not the stream's reset"
			}
			return ""
		}},
	}

	if err := fr.writePreface(); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != http2.ClientPreface {
		t.Fatalf("preface %q", got)
	}
	buf.Reset()
	xr := http2.NewFramer(io.Discard, &buf)
	xr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	for i, st := range steps {
		frames := buf.Len()
		if err := st.write(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if buf.Len() == frames {
			t.Fatalf("step %d wrote nothing", i)
		}
		f, err := xr.ReadFrame()
		if err != nil {
			t.Fatalf("step %d: x/net reads %v", i, err)
		}
		if what := st.check(f); what != "" {
			t.Errorf("step %d: %s: %v", i, what, f)
		}
		if buf.Len() != 0 {
			t.Errorf("step %d: %d bytes more than the frame", i, buf.Len())
		}
	}

	// Refused, nothing written.
	for i, write := range []func() error{
		func() error { return fr.writeWindowUpdate(1, 0) },
		func() error { return fr.writeWindowUpdate(1, 1<<31) },
		func() error { return fr.writeData(0, false, nil) },
		func() error { return fr.writeData(1<<31, false, nil) },
		func() error { return fr.writeHeaders(0, small, 16384) },
		func() error { return fr.writeRSTStream(0, h2ErrCodeCancel) },
		func() error { return fr.writeData(1, false, make([]byte, 1<<24)) },
	} {
		if err := write(); err == nil {
			t.Errorf("refusal %d: no error", i)
		}
		if buf.Len() != 0 {
			t.Errorf("refusal %d: %d bytes written", i, buf.Len())
			buf.Reset()
		}
	}
}

func hpackBlock(kv ...string) []byte {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	for i := 0; i < len(kv); i += 2 {
		enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return b.Bytes()
}

// checkMeta says what is wrong with a header block x/net read: its stream,
// fields, and the count of frames it came in (which x/net does not say:
// told by the HEADERS frame's END_HEADERS flag, a block in one frame or
// not).
func checkMeta(f http2.Frame, stream uint32, frames int, kv ...string) string {
	mh, ok := f.(*http2.MetaHeadersFrame)
	if !ok {
		return "not a header block"
	}
	if mh.StreamID != stream || mh.StreamEnded() || mh.Truncated {
		return "not the stream's open block"
	}
	if mh.HeadersEnded() != (frames == 1) {
		return fmt.Sprintf("not in %d frames", frames)
	}
	if fmt.Sprint(mh.Fields) != fmt.Sprint(fields(kv...)) {
		return "other fields"
	}
	return ""
}

// A HEADERS block of 40000 bytes at 2^14 a frame comes in a HEADERS and
// two CONTINUATIONs, each of at most the peer's frame size.
func TestH2FrameHeadersSplit(t *testing.T) {
	var buf bytes.Buffer
	fr := newH2Framer(&buf, nil, testMaxRead, testMaxList)
	block := bytes.Repeat([]byte{0x20}, 40000)
	if err := fr.writeHeaders(9, block, 16384); err != nil {
		t.Fatal(err)
	}
	xr := http2.NewFramer(io.Discard, &buf)
	var types []string
	var got []byte
	for buf.Len() > 0 {
		f, err := xr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if f.Header().Length > 16384 || f.Header().StreamID != 9 {
			t.Fatalf("%v", f)
		}
		types = append(types, fmt.Sprintf("%v/%v", f.Header().Type, f.Header().Flags.Has(http2.FlagHeadersEndHeaders)))
		switch f := f.(type) {
		case *http2.HeadersFrame:
			got = append(got, f.HeaderBlockFragment()...)
		case *http2.ContinuationFrame:
			got = append(got, f.HeaderBlockFragment()...)
		}
	}
	if want := "[HEADERS/false CONTINUATION/false CONTINUATION/true]"; fmt.Sprint(types) != want {
		t.Errorf("frames %v, want %s", types, want)
	}
	if !bytes.Equal(got, block) {
		t.Errorf("a block of %d bytes came back as %d", len(block), len(got))
	}
}

// h2Conn through the framer, against a server written with x/net's: a
// reply in padded DATA with trailers in CONTINUATIONs, a stream reset and
// the connection's end on a PUSH_PROMISE as their statuses say.
func TestH2ConnFakeServer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			nc, err := lis.Accept()
			if err != nil {
				return
			}
			go fakeServe(nc)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		method string
		code   rpcstatus.Code
		msg    string
	}{
		{"/ok", rpcstatus.OK, ""},
		{"/rst", rpcstatus.Unavailable, "stream terminated by RST_STREAM with error code: REFUSED_STREAM"},
		{"/cancel", rpcstatus.Canceled, "stream terminated by RST_STREAM with error code: CANCEL"},
		{"/push", rpcstatus.Unavailable, "error reading from server: connection error: PROTOCOL_ERROR: PUSH_PROMISE"},
		{"/big", rpcstatus.Unavailable, "error reading from server: http2: frame too large"},
	} {
		c := dialH2(sock)
		var reply api.SubmitReply
		err := c.Invoke(ctx, tc.method, &api.SubmitRequest{Spec: &api.JobSpec{Command: "true"}}, &reply)
		c.Close()
		if rpcstatus.CodeOf(err) != tc.code || (err != nil && !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%s: %v, want %v %q", tc.method, err, tc.code, tc.msg)
		}
		if tc.code == rpcstatus.OK && (reply.JobId != 42 || reply.Queue != "normal") {
			t.Errorf("%s: reply %v", tc.method, &reply)
		}
	}
}

// fakeServe answers the calls on nc by their method.
func fakeServe(nc net.Conn) {
	defer nc.Close()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(nc, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(nc, nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	var hbuf bytes.Buffer
	henc := hpack.NewEncoder(&hbuf)
	block := func(kv ...string) []byte {
		hbuf.Reset()
		for i := 0; i < len(kv); i += 2 {
			henc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
		}
		return bytes.Clone(hbuf.Bytes())
	}
	fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 14})
	path := map[uint32]string{}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			for _, hf := range f.Fields {
				if hf.Name == ":path" {
					path[f.StreamID] = hf.Value
				}
			}
		case *http2.DataFrame:
			if !f.StreamEnded() {
				continue
			}
			id := f.StreamID
			switch path[id] {
			case "/ok":
				msg, _ := (&api.SubmitReply{JobId: 42, Queue: "normal"}).MarshalVT()
				frame := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
				frame = append(frame, msg...)
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block(":status", "200", "content-type", "application/grpc"), EndHeaders: true})
				fr.WriteDataPadded(id, false, frame[:3], make([]byte, 10))
				fr.WriteDataPadded(id, false, frame[3:], []byte{0})
				b := block("grpc-status", "0", "grpc-message", "")
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: b[:1], EndStream: true, PadLength: 3})
				fr.WriteContinuation(id, true, b[1:])
			case "/rst":
				fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
			case "/cancel":
				fr.WriteRSTStream(id, http2.ErrCodeCancel)
			case "/push":
				fr.WritePushPromise(http2.PushPromiseParam{StreamID: id, PromiseID: 2, BlockFragment: block(":path", "/pushed"), EndHeaders: true})
			case "/big":
				fr.WriteData(id, false, make([]byte, 1<<20+1))
			}
		}
	}
}

// FuzzReadFrame reads arbitrary bytes: the reader must not panic, must
// stay within its bounds however large the lengths the bytes declare,
// and every frame it returns must be the one x/net's framer reads from
// the same bytes.
func FuzzReadFrame(f *testing.F) {
	for _, tc := range readCases {
		w := newXnetWriter()
		tc.write(w)
		f.Add(w.buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxRead, maxList = 4096, 1024
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		fr := newH2Framer(nil, bytes.NewReader(data), maxRead, maxList)
		xr := http2.NewFramer(io.Discard, bytes.NewReader(data))
		xr.SetMaxReadFrameSize(maxRead)
		xr.MaxHeaderListSize = maxList
		xr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
		oracle := true // x/net's reader reads the same frames still
		var err error
		for n := 0; ; n++ {
			var f *h2Frame
			f, err = fr.readFrame()
			if err != nil {
				if f != nil {
					t.Fatalf("a frame with the error %v", err)
				}
				break
			}
			if n >= len(data)/h2FrameHeaderLen {
				t.Fatalf("frame %d from %d bytes", n, len(data))
			}
			checkBounds(t, f, maxRead, maxList)
			if oracle {
				oracle = sameAsXNet(t, xr, f)
			}
		}
		var ce h2ConnError
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, errH2FrameTooLarge) && !errors.As(err, &ce) {
			t.Fatalf("an error of no kind expected: %v", err)
		}
		if cap(fr.rbuf) > maxRead {
			t.Fatalf("a read buffer of %d bytes", cap(fr.rbuf))
		}
		runtime.ReadMemStats(&after)
		// The decoder's table, a field split across fragments (twice the
		// list), the read buffer, x/net's framer; and the fields, their
		// strings at most 8/5 of their Huffman codes. TotalAlloc counts
		// every goroutine's allocations: an excess is measured again on
		// this reader alone before it fails the test.
		bound := uint64(256<<10 + 64*len(data))
		if got := after.TotalAlloc - before.TotalAlloc; got > bound {
			runtime.ReadMemStats(&before)
			fr := newH2Framer(nil, bytes.NewReader(data), maxRead, maxList)
			for {
				if _, err := fr.readFrame(); err != nil {
					break
				}
			}
			runtime.ReadMemStats(&after)
			if got := after.TotalAlloc - before.TotalAlloc; got > bound {
				t.Fatalf("%d bytes allocated reading %d, more than %d", got, len(data), bound)
			}
		}
	})
}

func checkBounds(t *testing.T, f *h2Frame, maxRead, maxList uint32) {
	t.Helper()
	if f.Length > maxRead || uint32(len(f.Data)) > f.Length || uint32(len(f.Settings)*6) > f.Length {
		t.Fatalf("out of bounds: %s", fmtFrame(f))
	}
	list := uint32(0)
	for _, hf := range f.Fields {
		list += hf.Size()
	}
	if list > maxList {
		t.Fatalf("a header list of %d", list)
	}
	switch f.Type {
	case h2FrameData, h2FrameHeaders, h2FrameRSTStream:
		if f.StreamID == 0 {
			t.Fatalf("on stream 0: %s", fmtFrame(f))
		}
	case h2FrameSettings, h2FramePing, h2FrameGoAway:
		if f.StreamID != 0 {
			t.Fatalf("on a stream: %s", fmtFrame(f))
		}
	case h2FrameWindowUpdate:
		if f.Increment == 0 || f.Increment > h2MaxWindow {
			t.Fatalf("increment %d", f.Increment)
		}
	default:
		t.Fatalf("a frame of type %v returned", f.Type)
	}
}

// sameAsXNet reads x/net's next frame, past those ours reads past, and
// fails the test when it is not f; it says whether the two readers still
// read alike. x/net's refuses some header blocks ours takes (it checks
// field names and values, and cuts a list too large short): a HEADERS
// frame's comparison ends there.
func sameAsXNet(t *testing.T, xr *http2.Framer, f *h2Frame) bool {
	t.Helper()
	var xf http2.Frame
	var err error
	for {
		xf, err = xr.ReadFrame()
		if err != nil {
			break
		}
		switch xf.(type) {
		case *http2.PriorityFrame, *http2.UnknownFrame, *http2.PriorityUpdateFrame:
			continue
		}
		break
	}
	if err != nil {
		if f.Type == h2FrameHeaders {
			return false
		}
		if d := xr.ErrorDetail(); d != nil && strings.Contains(d.Error(), "PRIORITY_UPDATE") {
			return false // x/net's checks, ours reads past it
		}
		t.Fatalf("ours read %s; x/net's: %v (%v)", fmtFrame(f), err, xr.ErrorDetail())
	}
	h := xf.Header()
	if h2FrameType(h.Type) != f.Type || h.StreamID != f.StreamID || h2Flags(h.Flags) != f.Flags {
		t.Fatalf("ours read %s; x/net's %v", fmtFrame(f), xf)
	}
	same := true
	switch xf := xf.(type) {
	case *http2.DataFrame:
		same = h.Length == f.Length && bytes.Equal(xf.Data(), f.Data)
	case *http2.MetaHeadersFrame:
		if xf.Truncated {
			return false
		}
		same = fmt.Sprint(xf.Fields) == fmt.Sprint(f.Fields)
	case *http2.RSTStreamFrame:
		same = uint32(xf.ErrCode) == uint32(f.ErrCode)
	case *http2.SettingsFrame:
		var xs []h2Setting
		xf.ForeachSetting(func(s http2.Setting) error {
			xs = append(xs, h2Setting{h2SettingID(s.ID), s.Val})
			return nil
		})
		same = fmt.Sprint(xs) == fmt.Sprint(f.Settings)
	case *http2.PingFrame:
		same = xf.Data == f.PingData
	case *http2.GoAwayFrame:
		same = xf.LastStreamID == f.LastStreamID && uint32(xf.ErrCode) == uint32(f.ErrCode)
	case *http2.WindowUpdateFrame:
		same = xf.Increment == f.Increment
	default:
		same = false
	}
	if !same {
		t.Fatalf("ours read %s; x/net's %v", fmtFrame(f), xf)
	}
	return true
}
