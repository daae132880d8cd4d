package main

import "testing"

// The releaser releases once a burst is over, not during one, not for
// little waste, and not again until there is more.
func TestReleaser(t *testing.T) {
	var allocs, waste uint64
	frees := 0
	r := &releaser{
		waste: 8 << 20,
		quiet: 256 << 10,
		read:  func() (uint64, uint64) { return allocs, waste },
		free:  func() { frees++ },
	}
	steps := []struct {
		alloc, waste uint64 // allocated in the period, waste at its end
		want         int    // releases so far
	}{
		{100 << 10, 1 << 20, 0},  // idle, little waste
		{50 << 20, 30 << 20, 0},  // a burst
		{40 << 20, 50 << 20, 0},  // still busy
		{100 << 10, 50 << 20, 1}, // quiet: released
		{100 << 10, 1 << 20, 1},  // nothing more to release
		{200 << 10, 9 << 20, 2},  // slow waste reaches the mark while idle
		{20 << 20, 0, 2},         // busy again
	}
	for i, s := range steps {
		allocs += s.alloc
		waste = s.waste
		r.tick()
		if frees != s.want {
			t.Fatalf("step %d: %d releases, want %d", i, frees, s.want)
		}
	}
}
