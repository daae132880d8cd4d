package unixrpc

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWorkers: every task runs, goroutines are kept for later tasks (at
// most maxIdle of them waiting), and stop ends the waiting ones.
func TestWorkers(t *testing.T) {
	before := runtime.NumGoroutine()
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
	waitFor(t, "idle goroutines to settle", func() bool { return w.idle.Load() >= 1 })
	if n := w.idle.Load(); n > 3 {
		t.Errorf("%d goroutines waiting, at most 3 wanted", n)
	}
	// A task now reuses a waiting goroutine rather than adding one.
	idle := w.idle.Load()
	done := make(chan struct{})
	w.run(func() { close(done) })
	<-done
	waitFor(t, "the goroutine to wait again", func() bool { return w.idle.Load() == idle })
	if g := runtime.NumGoroutine(); g > before+3 {
		t.Errorf("%d goroutines beyond the test's, at most 3 wanted", g-before)
	}
	w.stop()
	w.stop() // twice is harmless
	waitFor(t, "the waiting goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
	// After stop a task still runs.
	done = make(chan struct{})
	w.run(func() { close(done) })
	<-done
	waitFor(t, "its goroutine to end", func() bool { return runtime.NumGoroutine() <= before })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
