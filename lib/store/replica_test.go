package store

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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

// A replicated store's next batch waits for the clients the last one
// answered: with one batch in the log and two more submissions waiting,
// the client answered submits again and joins them in one entry, rather
// than the two waiting going alone and it after them.
func TestReplicatedBatchGathers(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.maxGather = time.Minute // the wait is the first round's length
	var (
		sizes   []int
		entered = make(chan struct{}, 1)
		release = make(chan struct{})
	)
	st.SetReplicator(func(data []byte) error {
		b, err := decodeBatch(data)
		if err != nil {
			return err
		}
		n := 0
		for _, m := range b.muts {
			if m.key[0] == 's' {
				n++
			}
		}
		sizes = append(sizes, n)
		if len(sizes) == 1 {
			entered <- struct{}{}
			<-release
		}
		e := Entry{Index: uint64(len(sizes)), Data: data}
		out, err := st.ApplyReplicated([]Entry{e})
		if err != nil {
			return err
		}
		return out[0]
	})
	var wg sync.WaitGroup
	submit := func(id int64) {
		if err := st.Submit(submission(id, 1, nil)); err != nil {
			t.Error(err)
		}
	}
	wg.Go(func() {
		submit(1)
		submit(4) // as soon as the first is answered
	})
	<-entered
	wg.Go(func() { submit(2) })
	wg.Go(func() { submit(3) })
	for len(st.submitCh) < 2 {
		runtime.Gosched()
	}
	// The first entry's round lasts half a second, so the next batch
	// waits as long for the client it answered: time enough for that
	// client to submit again however loaded the machine.
	time.Sleep(500 * time.Millisecond)
	close(release)
	wg.Wait()
	if !slices.Equal(sizes, []int{1, 3}) {
		t.Fatalf("batches of %v submissions, want [1 3]", sizes)
	}
}
