package main

import "testing"

// The releaser releases once a burst is over, not during one, not for
// little waste (under a quarter of the heap a collection scans, or 2 MB), and not again
// until there is more.
func TestReleaser(t *testing.T) {
	var allocs, waste, scanned uint64
	frees := 0
	r := &releaser{
		minWaste: 2 << 20,
		quiet:    256 << 10,
		read:     func() (uint64, uint64, uint64) { return allocs, waste, scanned },
		free:     func() { frees++ },
	}
	steps := []struct {
		alloc, waste, scanned uint64 // allocated in the period, waste and scanned heap at its end
		want                  int    // releases so far
	}{
		{100 << 10, 1 << 20, 4 << 20, 0},    // idle, little waste
		{50 << 20, 30 << 20, 8 << 20, 0},    // a burst
		{40 << 20, 50 << 20, 8 << 20, 0},    // still busy
		{100 << 10, 50 << 20, 8 << 20, 1},   // quiet: released
		{100 << 10, 1 << 20, 8 << 20, 1},    // nothing more to release
		{200 << 10, 3 << 20, 8 << 20, 2},    // slow waste reaches a quarter of the scanned heap while idle
		{200 << 10, 3 << 20, 40 << 20, 2},   // the same waste beside a large heap: not worth a collection
		{200 << 10, 11 << 20, 40 << 20, 3},  // a quarter of it
		{100 << 10, 1536 << 10, 1 << 20, 3}, // a tiny heap: under the 2 MB floor
		{20 << 20, 0, 8 << 20, 3},           // busy again
	}
	for i, s := range steps {
		allocs += s.alloc
		waste, scanned = s.waste, s.scanned
		r.tick()
		if frees != s.want {
			t.Fatalf("step %d: %d releases, want %d", i, frees, s.want)
		}
	}
}
