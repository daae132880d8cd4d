package store

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4/y"
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

// A bsub -pack is one transaction in the memtable log: damage to one of
// its entries lost the whole pack. Now only the job whose record was hit
// goes; the others of the pack, their records whole, are kept.
func TestSalvageDamagedPack(t *testing.T) {
	const pack = 60
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetIDCeiling(1001); err != nil {
		t.Fatal(err)
	}
	subs := make([]*Submission, pack)
	for i := range subs {
		subs[i] = submission(int64(i+1), 1, []string{"A=1"})
	}
	for _, err := range st.SubmitMany(subs) {
		if err != nil {
			t.Fatal(err)
		}
	}
	crash := t.TempDir()
	copyDir(t, dir, crash)
	st.Close()

	// Damage job 30's record, in the middle of the pack's transaction.
	mem := fileOf(t, crash, ".mem")
	entries, _, _ := readLog(mem)
	hit := -1
	for _, e := range entries {
		if k := y.ParseKey(e.key); len(k) == 13 && k[0] == 'j' && binary.BigEndian.Uint64(k[1:9]) == 30 {
			hit = e.offset + e.size/2
		}
	}
	if hit < 0 {
		t.Fatal("job 30's record is not in the log")
	}
	b, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	b[hit] ^= 0x55
	if err := os.WriteFile(mem, b, 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	rep, err := Salvage(crash, fresh)
	if err != nil {
		t.Fatalf("Salvage: %v", err)
	}
	if rep.Jobs < pack-1 {
		t.Errorf("salvaged %d of the pack's %d jobs; dropped %v", rep.Jobs, pack, rep.Dropped)
	}
	if len(rep.Dropped) != 1 || !strings.HasPrefix(rep.Dropped[0], "job 30:") {
		t.Errorf("dropped %q, want job 30 named", rep.Dropped)
	}
	st, err = Open(fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range l.Jobs {
		if j.JobId == 30 {
			t.Errorf("job 30, whose record was damaged, came back")
		}
	}
	t.Logf("salvaged %d of %d; dropped %v", len(l.Jobs), pack, rep.Dropped)
}
