// Package interactive owns the stream between a waiting `bsub -I`, `-Ip` or
// `-Is` and its job: the frame format both ends speak, bsub's listener and
// terminal handling (Listen, Attach), and the job side's dialling (Dial).
//
// bsub listens before it submits and puts the address in the job's spec;
// the shepherd that starts the job dials it, says which host it runs on,
// relays the job's output and exit status to bsub and bsub's input, window
// size and signals to the job. A connection that drops before the exit
// status means the job's end is not known here: bsub goes back to waiting
// (the job may be dispatched again) and the controller says how it ended.
//
// Where the job side cannot dial bsub's socket (another host), the worker
// of the job's host takes the shepherd's connection and the controller
// relays the frames to bsub's Attach call; bsub sees each relayed
// connection as a Conn made by NewRelayed, the same frames either way.
package interactive

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Frame types. The job side sends Hello once, then Stdout, Stderr and
// finally Exit; bsub sends Stdin, EOF, Winsize and Signal.
const (
	Hello   byte = 'H' // the execution host's name
	Stdout  byte = 'O' // output of the job (a pseudo-terminal's output too)
	Stderr  byte = 'E' // error output of the job
	Exit    byte = 'X' // 4 bytes, big-endian: the job's exit status as a shell reports it
	Stdin   byte = 'I' // input for the job
	EOF     byte = 'D' // bsub's input has ended
	Winsize byte = 'W' // 4 bytes: rows and columns, big-endian uint16 each
	Signal  byte = 'S' // 4 bytes: a signal number for the job's process group
)

// maxFrame bounds a frame's payload; the relays write at most 32 KB at a
// time, so anything larger is a broken or hostile peer.
const maxFrame = 1 << 20

// Conn is one end of the stream: a socket (Dial, Listener.Accept), or a
// relayed stream whose frames the caller carries (NewRelayed). Send may be
// called from several goroutines; Recv from one.
type Conn struct {
	t  transport
	mu sync.Mutex
}

// transport carries a Conn's frames.
type transport interface {
	send(typ byte, payload []byte) error
	recv() (typ byte, payload []byte, err error)
	setReadDeadline(t time.Time) error
	close() error
}

func newConn(c net.Conn) *Conn {
	return &Conn{t: &sockTransport{c: c, r: bufio.NewReaderSize(c, 32<<10)}}
}

// Wrap makes a Conn of a connected socket (the relay of a worker that
// accepted the job side's connection).
func Wrap(c net.Conn) *Conn { return newConn(c) }

// Send writes one frame.
func (c *Conn) Send(typ byte, payload []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t.send(typ, payload)
}

// SendUint32 writes a frame whose payload is one big-endian number.
func (c *Conn) SendUint32(typ byte, v uint32) error {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return c.Send(typ, b[:])
}

// Recv reads the next frame.
func (c *Conn) Recv() (typ byte, payload []byte, err error) { return c.t.recv() }

// SetReadDeadline bounds the next Recv.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.t.setReadDeadline(t) }

// Close closes the connection.
func (c *Conn) Close() error { return c.t.close() }

// sockTransport is a Conn over a socket: each frame is its type byte, its
// payload's length (4 bytes, big-endian) and the payload.
type sockTransport struct {
	c net.Conn
	r *bufio.Reader
}

func (s *sockTransport) send(typ byte, payload []byte) error {
	var hdr [5]byte
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	if _, err := s.c.Write(hdr[:]); err != nil {
		return err
	}
	_, err := s.c.Write(payload)
	return err
}

func (s *sockTransport) recv() (typ byte, payload []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(s.r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("interactive stream: frame of %d bytes", n)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(s.r, payload); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return hdr[0], payload, nil
}

func (s *sockTransport) setReadDeadline(t time.Time) error { return s.c.SetReadDeadline(t) }
func (s *sockTransport) close() error                      { return s.c.Close() }

// Writer returns an io.Writer that sends what is written as frames of typ.
func (c *Conn) Writer(typ byte) io.Writer { return frameWriter{c, typ} }

type frameWriter struct {
	c   *Conn
	typ byte
}

func (w frameWriter) Write(p []byte) (int, error) {
	if err := w.c.Send(w.typ, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Uint32 reads a payload sent with SendUint32.
func Uint32(payload []byte) (uint32, bool) {
	if len(payload) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(payload), true
}

// WinsizePayload encodes a window size for a Winsize frame.
func WinsizePayload(rows, cols uint16) []byte {
	var b [4]byte
	binary.BigEndian.PutUint16(b[:2], rows)
	binary.BigEndian.PutUint16(b[2:], cols)
	return b[:]
}

// ParseWinsize decodes a Winsize frame's payload.
func ParseWinsize(payload []byte) (rows, cols uint16, ok bool) {
	if len(payload) != 4 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint16(payload[:2]), binary.BigEndian.Uint16(payload[2:]), true
}
