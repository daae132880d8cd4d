package interactive

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// A relayed Conn reads what was delivered, in order, then the end; what
// it sends goes to its send function; closing it stops deliveries, which
// must not block its owner once nobody reads.
func TestRelayedConn(t *testing.T) {
	var mu sync.Mutex
	var sent []Frame
	closed := 0
	c, r := NewRelayed(func(typ byte, p []byte) error {
		mu.Lock()
		sent = append(sent, Frame{typ, p})
		mu.Unlock()
		return nil
	}, func() { closed++ })
	if !r.Deliver(Frame{Hello, []byte("hB")}) || !r.Deliver(Frame{Stdout, []byte("out")}) {
		t.Fatal("delivery refused")
	}
	r.End(nil)
	if h, err := c.ReadHello(); err != nil || h != "hB" {
		t.Fatalf("hello %q %v", h, err)
	}
	if typ, p, err := c.Recv(); err != nil || typ != Stdout || string(p) != "out" {
		t.Fatalf("frame %q %q %v", typ, p, err)
	}
	if _, _, err := c.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %v, want EOF", err)
	}
	if err := c.SendUint32(Signal, 2); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(sent) != 1 || sent[0].Type != Signal {
		t.Fatalf("sent %v", sent)
	}
	mu.Unlock()

	// Closed: deliveries stop, even past the queue's bound.
	c2, r2 := NewRelayed(func(byte, []byte) error { return nil }, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 10*relayedQueue; i++ {
			if !r2.Deliver(Frame{Stdout, []byte("x")}) {
				return
			}
		}
		t.Error("a closed Conn took every frame")
	}()
	time.Sleep(10 * time.Millisecond)
	c2.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Deliver blocked on a closed Conn")
	}
	if err := c2.Send(Stdin, nil); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("send on a closed Conn: %v", err)
	}
	c.Close()
	c.Close()
	if closed != 1 {
		t.Fatalf("close function called %d times", closed)
	}
}

// A read deadline bounds a relayed Recv.
func TestRelayedDeadline(t *testing.T) {
	c, _ := NewRelayed(func(byte, []byte) error { return nil }, nil)
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, _, err := c.Recv(); err == nil {
		t.Fatal("Recv returned without a frame")
	}
}
