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
// full collection, while the controller is idle). Much is a quarter of the
// heap the collector scans, and at least minWaste: a collection costs in
// proportion to what it scans (not Badger's memtable arenas, byte slices
// it skips), and an idle controller's own garbage (its periodic work)
// would otherwise pile up to the collector's goal, twice the live heap,
// which for a small queue is more than the jobs themselves.
type releaser struct {
	period   time.Duration
	minWaste uint64 // heap not live that makes a release worth it, at least
	quiet    uint64 // allocated in one period that still counts as idle
	read     func() (allocs, waste, scanned uint64)
	free     func()
	last     uint64 // the allocations counter a period ago
}

func newReleaser() *releaser {
	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},              // allocated, ever
		{Name: "/memory/classes/heap/objects:bytes"}, // live and garbage not yet swept
		{Name: "/gc/heap/live:bytes"},                // live as of the last collection
		{Name: "/memory/classes/heap/free:bytes"},    // free pages not returned
		{Name: "/gc/scan/heap:bytes"},                // what a collection scans
	}
	return &releaser{
		period:   200 * time.Millisecond,
		minWaste: 2 << 20,
		quiet:    256 << 10,
		read: func() (allocs, waste, scanned uint64) {
			metrics.Read(samples)
			var v [5]uint64
			for i, s := range samples {
				if s.Value.Kind() == metrics.KindUint64 {
					v[i] = s.Value.Uint64()
				}
			}
			objects, live := v[1], v[2]
			return v[0], max(objects, live) - live + v[3], v[4]
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
	r.last, _, _ = r.read()
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
	now, waste, scanned := r.read()
	if now-r.last <= r.quiet && waste >= max(r.minWaste, scanned/4) {
		r.free()
		now, _, _ = r.read() // what the collection allocated is not work
	}
	r.last = now
}

// startReleaser starts the releaser; the returned function stops it.
func startReleaser() (stop func()) {
	ch := make(chan struct{})
	go newReleaser().run(ch)
	return func() { close(ch) }
}
