package store

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const damageJobs = 300

// filledStore makes a store with damageJobs jobs. clean: closed (its data
// in tables); otherwise a copy taken while it is open, which is what
// kill -9 leaves (its data in the memtable log).
func filledStore(t *testing.T, clean bool) string {
	t.Helper()
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetIDCeiling(1001); err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= damageJobs; id++ {
		if err := st.Submit(submission(id, 1, []string{"A=1"})); err != nil {
			t.Fatal(err)
		}
	}
	if clean {
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	crash := t.TempDir()
	copyDir(t, dir, crash)
	st.Close()
	return crash
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "LOCK" {
			continue
		}
		in, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(to, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
}

// fileOf returns the store's (first) file with the suffix.
func fileOf(t *testing.T, dir, suffix string) string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			return filepath.Join(dir, e.Name())
		}
	}
	t.Fatalf("no %s file in %s", suffix, dir)
	return ""
}

// usedSize is how much of a file holds data (a log is preallocated with
// zeros after its last entry).
func usedSize(b []byte) int {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return n
}

func flip(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[usedSize(b)/2] ^= 0x10
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func truncateHalf(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(usedSize(b)/2)); err != nil {
		t.Fatal(err)
	}
}

// Every kind of damage to each kind of file is found at Open, which
// refuses the store with a message naming it and the way to recover;
// nothing opens with jobs missing. Salvage then recovers what is intact
// into a fresh store that opens.
func TestDamageIsDetected(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clean bool
		file  string
		harm  func(*testing.T, string)
		want  string
	}{
		{"flip sst", true, ".sst", flip, "table 000001.sst is damaged"},
		{"truncate sst", true, ".sst", truncateHalf, "table 000001.sst is damaged"},
		{"delete sst", true, ".sst", func(t *testing.T, p string) { os.Remove(p) }, "missing"},
		{"flip mem", false, ".mem", flip, ".mem is damaged"},
		{"truncate mem", false, ".mem", truncateHalf, ".mem is"},
		{"delete mem", false, ".mem", func(t *testing.T, p string) { os.Remove(p) }, "memtable log (.mem) is missing"},
		{"flip vlog", false, ".vlog", func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			b[len(b)/3] ^= 1
			os.WriteFile(p, b, 0o600)
		}, ".vlog is damaged"},
		{"flip manifest", true, "MANIFEST", flip, "MANIFEST is damaged"},
		{"truncate manifest", true, "MANIFEST", truncateHalf, "MANIFEST is truncated"},
		{"delete manifest", true, "MANIFEST", func(t *testing.T, p string) { os.Remove(p) }, "MANIFEST is missing"},
		{"delete manifest after crash", false, "MANIFEST", func(t *testing.T, p string) { os.Remove(p) }, "MANIFEST is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filledStore(t, tc.clean)
			tc.harm(t, fileOf(t, dir, tc.file))
			st, err := Open(dir)
			if err == nil {
				l, _ := st.Load()
				st.Close()
				t.Fatalf("a damaged store opened, with %d of %d jobs", len(l.Jobs), damageJobs)
			}
			if !IsDamaged(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "xced store recover") {
				t.Fatalf("Open: %v\nwant a damage error saying %q", err, tc.want)
			}
			if p, err := Check(dir); err != nil || len(p) == 0 {
				t.Errorf("Check found nothing (%v)", err)
			}
			fresh := filepath.Join(t.TempDir(), "fresh")
			rep, err := Salvage(dir, fresh)
			if err != nil {
				t.Fatalf("Salvage: %v", err)
			}
			st, err = Open(fresh)
			if err != nil {
				t.Fatalf("the salvaged store: %v", err)
			}
			defer st.Close()
			l, err := st.Load()
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Jobs) != rep.Jobs {
				t.Errorf("salvage reported %d jobs, %d load", rep.Jobs, len(l.Jobs))
			}
			if c, _ := st.IDCeiling(); c <= damageJobs && len(l.Jobs) > 0 {
				t.Errorf("salvaged id ceiling %d: ids would be reused", c)
			}
			t.Logf("salvaged %d of %d jobs; dropped %v", len(l.Jobs), damageJobs, rep.Dropped)
		})
	}
}

// An undamaged store opens, after a clean stop and after a crash.
func TestUndamagedStoreOpens(t *testing.T) {
	for _, clean := range []bool{true, false} {
		openWhole(t, filledStore(t, clean), clean).Close()
	}
}

// openWhole checks that Check finds the store in dir whole (read-only, on
// its shadow) and that it opens with every job of filledStore.
func openWhole(t *testing.T, dir string, clean bool) *Store {
	t.Helper()
	if p, err := Check(dir); err != nil || len(p) > 0 {
		t.Errorf("clean=%v: Check: %v %v", clean, p, err)
	}
	st, err := Open(dir)
	if err != nil {
		t.Fatalf("clean=%v: %v", clean, err)
	}
	l, err := st.Load()
	if err != nil || len(l.Jobs) != damageJobs {
		t.Fatalf("clean=%v: %d jobs, %v", clean, len(l.Jobs), err)
	}
	return st
}

// The ceiling check of a store without a seal finds the largest id at
// the ends of the ranges: the same as counting them finds.
func TestMaxRecordID(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if m, err := maxRecordID(st.db); m != 0 || err != nil {
		t.Fatal(m, err)
	}
	for _, id := range []int64{3, 70000, 12} {
		if err := st.Submit(submission(id, 2, nil)); err != nil {
			t.Fatal(err)
		}
	}
	_, _, want, _ := countRecords(st.db)
	if m, err := maxRecordID(st.db); m != want || m != 70000 || err != nil {
		t.Fatal(m, want, err)
	}
}

// A crash as Badger creates a memtable or value log leaves a file of no
// bytes, which Badger cannot open (it fails with "Create a new file").
// The store removes such files as it opens, and Check and the views see
// past them.
func TestEmptyLogsOfACrashAreRemoved(t *testing.T) {
	for _, clean := range []bool{true, false} {
		dir := filledStore(t, clean)
		for _, n := range []string{"00099.mem", "000099.vlog"} {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		st := openWhole(t, dir, clean)
		if err := st.Submit(submission(damageJobs+1, 1, nil)); err != nil {
			t.Fatal(err)
		}
		st.Close()
		if _, err := os.Stat(filepath.Join(dir, "00099.mem")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("clean=%v: the empty memtable log is still there: %v", clean, err)
		}
	}
}
