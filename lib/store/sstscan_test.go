package store

import (
	"os"
	"path/filepath"
	"testing"
)

// A table whose first block, or whose index, is damaged: Badger opens
// neither, and salvage read nothing from it (0 of 300 jobs). Read block
// by block, only the jobs of the damaged block are lost.
func TestSalvageDamagedTableBlocks(t *testing.T) {
	// A 4 KB block holds up to about 130 of these small records: one
	// block's worth of jobs may go with it, never more.
	const block = 130
	for _, tc := range []struct {
		name string
		at   func(size int) int // the byte flipped
		want int
	}{
		{"first block", func(int) int { return 40 }, damageJobs - block},
		{"index", func(size int) int { return size - 40 }, damageJobs},
		{"middle block", func(size int) int { return size / 3 }, damageJobs - block},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filledStore(t, true)
			path := fileOf(t, dir, ".sst")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[tc.at(len(b))] ^= 0x55
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			fresh := filepath.Join(t.TempDir(), "fresh")
			rep, err := Salvage(dir, fresh)
			if err != nil {
				t.Fatalf("Salvage: %v", err)
			}
			if len(rep.Damage) == 0 {
				t.Errorf("no damage reported")
			}
			if rep.Jobs < tc.want {
				t.Errorf("salvaged %d of %d jobs; dropped %v", rep.Jobs, damageJobs, rep.Dropped)
			}
			t.Logf("salvaged %d of %d jobs", rep.Jobs, damageJobs)
		})
	}
}
