package interactive

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// MaxFrame is the largest payload a relay carries in one frame.
const MaxFrame = maxFrame

// relayedQueue bounds the frames a relayed Conn holds for its reader:
// Deliver waits beyond it, which holds the relay's sender back.
const relayedQueue = 64

// Frame is one frame of the stream.
type Frame struct {
	Type    byte
	Payload []byte
}

// Relayed is the far end of a Conn made by NewRelayed: its owner delivers
// the frames that arrive for the Conn and ends it.
type Relayed struct {
	in     chan Frame
	done   chan struct{} // the Conn was closed
	ended  chan struct{} // no more frames will be delivered
	once   sync.Once
	endErr error
	mu     sync.Mutex
	dl     time.Time
}

// NewRelayed returns a Conn whose frames are sent with send and received
// as its owner delivers them (Relayed.Deliver); close is called once when
// the Conn is closed.
func NewRelayed(send func(typ byte, payload []byte) error, close func()) (*Conn, *Relayed) {
	r := &Relayed{in: make(chan Frame, relayedQueue), done: make(chan struct{}), ended: make(chan struct{})}
	return &Conn{t: &relayedTransport{r: r, sendFn: send, closeFn: close}}, r
}

// Deliver hands a frame to the Conn's reader, waiting while its queue is
// full; false once the Conn is closed or ended.
func (r *Relayed) Deliver(f Frame) bool {
	select {
	case <-r.done:
		return false
	case <-r.ended:
		return false
	default:
	}
	select {
	case r.in <- f:
		return true
	case <-r.done:
		return false
	}
}

// End says no more frames come: the reader gets err (io.EOF when nil)
// after those delivered.
func (r *Relayed) End(err error) {
	r.once.Do(func() {
		if err == nil {
			err = io.EOF
		}
		r.endErr = err
		close(r.ended)
	})
}

// Closed is closed once the Conn is.
func (r *Relayed) Closed() <-chan struct{} { return r.done }

type relayedTransport struct {
	r       *Relayed
	sendFn  func(typ byte, payload []byte) error
	closeFn func()
	once    sync.Once
}

func (t *relayedTransport) send(typ byte, payload []byte) error {
	select {
	case <-t.r.done:
		return errRelayedClosed
	default:
	}
	return t.sendFn(typ, payload)
}

// errRelayedClosed is what a closed relayed Conn's calls return.
var errRelayedClosed = fmt.Errorf("interactive relay: %w", net.ErrClosed)

func (t *relayedTransport) recv() (byte, []byte, error) {
	t.r.mu.Lock()
	dl := t.r.dl
	t.r.mu.Unlock()
	var timeout <-chan time.Time
	if !dl.IsZero() {
		tm := time.NewTimer(time.Until(dl))
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case f := <-t.r.in:
		return f.Type, f.Payload, nil
	default:
	}
	select {
	case f := <-t.r.in:
		return f.Type, f.Payload, nil
	case <-t.r.ended:
		// Frames delivered before the end come first.
		select {
		case f := <-t.r.in:
			return f.Type, f.Payload, nil
		default:
		}
		return 0, nil, t.r.endErr
	case <-t.r.done:
		return 0, nil, errRelayedClosed
	case <-timeout:
		return 0, nil, os.ErrDeadlineExceeded
	}
}

func (t *relayedTransport) setReadDeadline(d time.Time) error {
	t.r.mu.Lock()
	t.r.dl = d
	t.r.mu.Unlock()
	return nil
}

func (t *relayedTransport) close() error {
	t.once.Do(func() {
		close(t.r.done)
		if t.closeFn != nil {
			t.closeFn()
		}
	})
	return nil
}
