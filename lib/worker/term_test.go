package worker

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"xce/lib/api/rpc"
	"xce/lib/interactive"
)

// fakeTermLink records what a relay sends up.
type fakeTermLink struct {
	mu    sync.Mutex
	up    []*rpc.TermData
	acked int64
}

func (f *fakeTermLink) TermUp(td *rpc.TermData) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.up = append(f.up, td)
	return true
}

func (f *fakeTermLink) TermAckUp(a *rpc.TermAck) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acked += a.Bytes
	return true
}

func (f *fakeTermLink) sent() (n int64, closed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, td := range f.up {
		n += int64(len(td.Payload))
		closed = closed || td.Close
	}
	return n, closed
}

func waitTerm(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// The relay sends the job side's output up no further than one window
// ahead of the controller's acknowledgements, writes bsub's input to the
// job side and acknowledges it, and a hang-up closes the job side's
// connection.
func TestTermRelayWindow(t *testing.T) {
	w, err := New(Config{Host: "hA", RunDir: t.TempDir(), Report: func(Report) {}})
	if err != nil {
		t.Fatal(err)
	}
	link := &fakeTermLink{}
	w.SetTermLink(link)
	k := jobKey{7, 0}
	if err := os.MkdirAll(w.JobDir(k.id, k.idx), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := w.openTerm(k, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	c, err := interactive.Dial("unix:" + filepath.Join(w.JobDir(k.id, k.idx), TermSocketName))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		chunk := make([]byte, 32<<10)
		for range 2 * TermWindow / len(chunk) {
			if c.Send(interactive.Stdout, chunk) != nil {
				return
			}
		}
	}()
	waitTerm(t, "a window of output", func() bool { n, _ := link.sent(); return n == TermWindow })
	time.Sleep(50 * time.Millisecond)
	if n, _ := link.sent(); n != TermWindow {
		t.Fatalf("%d bytes sent up unacknowledged, want the window (%d)", n, TermWindow)
	}
	w.TermAcked(&rpc.TermAck{JobId: k.id, Index: k.idx, Bytes: TermWindow})
	waitTerm(t, "the rest of the output", func() bool { n, _ := link.sent(); return n == 2*TermWindow })

	w.TermDown(&rpc.TermData{JobId: k.id, Index: k.idx, Type: int32(interactive.Stdin), Payload: []byte("typed")})
	typ, p, err := c.Recv()
	if err != nil || typ != interactive.Stdin || string(p) != "typed" {
		t.Fatalf("input %q %q %v", typ, p, err)
	}
	waitTerm(t, "the input acknowledged", func() bool { link.mu.Lock(); defer link.mu.Unlock(); return link.acked == 5 })

	w.TermDown(&rpc.TermData{JobId: k.id, Index: k.idx, Close: true})
	if _, _, err := c.Recv(); err == nil {
		t.Fatal("the job side's connection stayed open after a hang-up")
	}
	waitTerm(t, "the relay's end sent up", func() bool { _, closed := link.sent(); return closed })
}
