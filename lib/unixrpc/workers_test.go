package unixrpc

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWorkers: every task runs, goroutines are kept for later tasks (at
// most maxIdle of them waiting), and stop ends the waiting ones.
func TestWorkers(t *testing.T) {
	w := newWorkers(3)
	var ran atomic.Int64
	var wg sync.WaitGroup
	for range 1000 {
		wg.Add(1)
		w.run(func() { ran.Add(1); wg.Done() })
	}
	wg.Wait()
	if ran.Load() != 1000 {
		t.Fatalf("%d tasks ran, want 1000", ran.Load())
	}
	// Once the burst is over, between 1 and 3 goroutines are kept, all
	// waiting; the others have ended.
	waitFor(t, "the goroutines to settle", func() bool {
		n := w.live.Load()
		return n >= 1 && n <= 3 && w.idle.Load() == n
	})
	// A task now runs on a waiting goroutine rather than on a new one.
	kept := w.live.Load()
	done := make(chan struct{})
	w.run(func() { close(done) })
	<-done
	waitFor(t, "the goroutine to wait again", func() bool { return w.idle.Load() == kept })
	if n := w.live.Load(); n != kept {
		t.Errorf("%d goroutines after a task, want the %d kept", n, kept)
	}
	w.stop()
	w.stop() // twice is harmless
	waitFor(t, "the waiting goroutines to end", func() bool { return w.live.Load() == 0 })
	// After stop a task still runs.
	done = make(chan struct{})
	w.run(func() { close(done) })
	<-done
	waitFor(t, "its goroutine to end", func() bool { return w.live.Load() == 0 })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
