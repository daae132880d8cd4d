package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The Go runtime returns freed heap pages to the OS lazily, keeping about
// as many as its next collection's goal: after a burst of work (a restore,
// thousands of submissions, a listing of every job) the controller stays
// resident at its peak, the garbage of the burst included, long after it
// went quiet. releaser frees that once the burst is over: when the heap
// holds much that is not live (garbage since the last collection, free
// pages not yet returned) and the process then allocated hardly anything
// for one period, it collects and returns what is free to the OS (one
// full collection, while the controller is idle).
type releaser struct {
	period time.Duration
	waste  uint64 // heap not live that makes a release worth it
	quiet  uint64 // allocated in one period that still counts as idle
	read   func() (allocs, waste uint64)
	free   func()
	last   uint64 // the allocations counter a period ago
}

func newReleaser() *releaser {
	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},              // allocated, ever
		{Name: "/memory/classes/heap/objects:bytes"}, // live and garbage not yet swept
		{Name: "/gc/heap/live:bytes"},                // live as of the last collection
		{Name: "/memory/classes/heap/free:bytes"},    // free pages not returned
	}
	return &releaser{
		period: 200 * time.Millisecond,
		waste:  8 << 20,
		quiet:  256 << 10,
		read: func() (allocs, waste uint64) {
			metrics.Read(samples)
			var v [4]uint64
			for i, s := range samples {
				if s.Value.Kind() == metrics.KindUint64 {
					v[i] = s.Value.Uint64()
				}
			}
			objects, live := v[1], v[2]
			return v[0], max(objects, live) - live + v[3]
		},
		free: func() {
			// Two collections: what sync.Pools hold (gRPC's buffers, a
			// listing's among them) survives the first.
			runtime.GC()
			debug.FreeOSMemory()
		},
	}
}

// run watches the heap until stop is closed.
func (r *releaser) run(stop <-chan struct{}) {
	t := time.NewTicker(r.period)
	defer t.Stop()
	r.last, _ = r.read()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			r.tick()
		}
	}
}

// tick looks at the heap once a period, and releases when it is due.
func (r *releaser) tick() {
	now, waste := r.read()
	if now-r.last <= r.quiet && waste >= r.waste {
		r.free()
		now, _ = r.read() // what the collection allocated is not work
	}
	r.last = now
}

// startReleaser starts the releaser; the returned function stops it.
func startReleaser() (stop func()) {
	ch := make(chan struct{})
	go newReleaser().run(ch)
	return func() { close(ch) }
}
