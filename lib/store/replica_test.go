package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyStore copies a store directory's files (its lock aside), as the
// disk holds them once the page cache is lost in a power cut that comes
// right after the copy.
func copyStore(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A replica's store (unsynced commits) that loses its writes since its
// last Sync, whole or with holes, is where the lost part began, and the
// log applied again restores it; a synced store's open would call the
// holes damage.
func TestReplicaPowerCut(t *testing.T) {
	leader, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	var log []Entry
	leader.SetReplicator(func(data []byte) error {
		e := Entry{Index: uint64(len(log) + 1), Data: data}
		log = append(log, e)
		out, err := leader.ApplyReplicated([]Entry{e})
		if err != nil {
			return err
		}
		return out[0]
	})
	if err := leader.Submit(submission(5, 2, []string{"A=1"})); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	follower, err := OpenReplica(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	if _, err := follower.ApplyReplicated(log); err != nil {
		t.Fatal(err)
	}
	if err := follower.Sync(); err != nil {
		t.Fatal(err)
	}
	synced := filepath.Join(t.TempDir(), "synced")
	copyStore(t, dir, synced)
	if err := leader.SetIDCeiling(1000); err != nil {
		t.Fatal(err)
	}
	for id := int64(6); id < 30; id++ {
		if err := leader.Submit(submission(id, 3, []string{"A=1", "B=2"})); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := follower.ApplyReplicated(log); err != nil {
		t.Fatal(err)
	}
	all := filepath.Join(t.TempDir(), "all")
	copyStore(t, dir, all)

	check := func(what, dir string, wantFrom uint64) {
		t.Helper()
		st, err := OpenReplica(dir, false)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer st.Close()
		if a := st.Applied(); a < wantFrom || a >= uint64(len(log)) {
			t.Errorf("%s: applied %d, want from %d to below %d", what, a, wantFrom, len(log))
		}
		if _, err := st.ApplyReplicated(log); err != nil {
			t.Fatal(err)
		}
		l, err := st.Load()
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Jobs) != 2+24*3 || st.Applied() != uint64(len(log)) {
			t.Errorf("%s: after the log, %d jobs and applied %d, want %d and %d", what, len(l.Jobs), st.Applied(), 2+24*3, len(log))
		}
		if c, _ := st.IDCeiling(); c != 1000 {
			t.Errorf("%s: ceiling %d after the log, want 1000", what, c)
		}
	}
	// Sync records the ceiling beside the store only as synced.
	if b, err := os.ReadFile(filepath.Join(synced, ceilingFile)); err == nil && strings.TrimSpace(string(b)) == "1000" {
		t.Errorf("the ceiling file of the synced copy says 1000, which was not synced")
	}
	// Everything since the sync lost.
	lost := filepath.Join(t.TempDir(), "lost")
	copyStore(t, synced, lost)
	check("the synced files", lost, 1)

	// Part of it lost: the memtable log as written since, with a hole.
	holey := filepath.Join(t.TempDir(), "holey")
	copyStore(t, all, holey)
	mem := ""
	ents, _ := os.ReadDir(holey)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".mem") {
			continue
		}
		a, _ := os.ReadFile(filepath.Join(synced, e.Name()))
		b, _ := os.ReadFile(filepath.Join(holey, e.Name()))
		if !bytes.Equal(a, b) {
			mem = e.Name()
			end := len(bytes.TrimRight(a, "\x00"))
			bEnd := len(bytes.TrimRight(b, "\x00"))
			if bEnd-end < 200 {
				t.Fatalf("only %d bytes written after the sync", bEnd-end)
			}
			clear(b[end+50 : end+150])
			if err := os.WriteFile(filepath.Join(holey, e.Name()), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if mem == "" {
		t.Fatal("no memtable log changed after the sync")
	}
	// The synced open would call it damage (a write lost before others).
	synchronous := filepath.Join(t.TempDir(), "synchronous")
	copyStore(t, holey, synchronous)
	if _, err := Open(synchronous); !IsDamaged(err) {
		t.Errorf("synced open of a log with a hole: %v, want damage", err)
	}
	check("the files with a hole", holey, 1)
}
