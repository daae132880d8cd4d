package store

import (
	"bytes"
	"sync"
	"testing"
)

func TestBatchEncoding(t *testing.T) {
	b := &batch{inParts: true}
	b.Set([]byte("k1"), []byte("v1"))
	b.Delete([]byte("k2"))
	b.Set([]byte("k3"), nil)
	got, err := decodeBatch(encodeBatch(b))
	if err != nil {
		t.Fatal(err)
	}
	if !got.inParts || len(got.muts) != 3 || string(got.muts[0].value) != "v1" || !got.muts[1].del || string(got.muts[2].key) != "k3" {
		t.Fatalf("decoded %+v", got)
	}
	enc := encodeBatch(b)
	for i := 0; i < len(enc); i++ {
		// Every truncation is refused, never a panic.
		if _, err := decodeBatch(enc[:i]); err == nil {
			t.Errorf("a batch cut at %d of %d bytes decoded", i, len(enc))
		}
		if v, ok := BatchValue(enc[:i], []byte("k3")); ok {
			t.Errorf("BatchValue of a batch cut at %d of %d bytes: %q", i, len(enc), v)
		}
	}
	b.Set([]byte("k2"), []byte("v2"))
	enc = encodeBatch(b)
	for _, c := range []struct {
		key, want string
		ok        bool
	}{{"k1", "v1", true}, {"k2", "v2", true}, {"k3", "", true}, {"k4", "", false}} {
		if v, ok := BatchValue(enc, []byte(c.key)); ok != c.ok || string(v) != c.want {
			t.Errorf("BatchValue(%s) = %q, %v; want %q, %v", c.key, v, ok, c.want, c.ok)
		}
	}
	b.Delete([]byte("k1"))
	if v, ok := BatchValue(encodeBatch(b), []byte("k1")); ok {
		t.Errorf("BatchValue of a key the batch deletes last: %q", v)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	b := &batch{}
	b.Set([]byte("key"), []byte("value"))
	f.Add(encodeBatch(b))
	f.Add([]byte{0, 200, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeBatch(data)
		if err != nil {
			return
		}
		// (Lengths may be written longer than needed: compare re-encodings.)
		again, err := decodeBatch(encodeBatch(got))
		if err != nil || !bytes.Equal(encodeBatch(again), encodeBatch(got)) {
			t.Fatalf("%x decodes but does not round-trip", data)
		}
	})
}

// A replicated store writes only through its replicator; the entries it
// is handed apply once, also when a restart replays them, and survive a
// reopen with their index.
func TestReplicatedWrites(t *testing.T) {
	leaderDir, followerDir := t.TempDir(), t.TempDir()
	leader, err := Open(leaderDir)
	if err != nil {
		t.Fatal(err)
	}
	follower, err := Open(followerDir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log []Entry
	leader.SetReplicator(func(data []byte) error {
		mu.Lock()
		defer mu.Unlock()
		e := Entry{Index: uint64(len(log) + 1), Data: data}
		log = append(log, e)
		out, err := leader.ApplyReplicated([]Entry{e})
		if err != nil {
			return err
		}
		return out[0]
	})
	if err := leader.Submit(submission(5, 3, []string{"A=1"})); err != nil {
		t.Fatal(err)
	}
	if err := leader.SetIDCeiling(1000); err != nil {
		t.Fatal(err)
	}
	if err := leader.SetMeta("queue/normal", []byte("closed")); err != nil {
		t.Fatal(err)
	}
	// An array too large for one transaction is one entry, applied in
	// stages on every store.
	if err := leader.Submit(hugeSubmission(6)); err != nil {
		t.Fatal(err)
	}
	if leader.Applied() != 4 {
		t.Fatalf("leader applied %d, want 4", leader.Applied())
	}
	// The follower gets the log in two deliveries that overlap.
	if _, err := follower.ApplyReplicated(log[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := follower.ApplyReplicated(log); err != nil {
		t.Fatal(err)
	}
	follower.Close()
	follower, err = Open(followerDir)
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	if follower.Applied() != 4 {
		t.Errorf("follower applied %d after reopen, want 4", follower.Applied())
	}
	l, err := follower.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Jobs) != 3+hugeElements {
		t.Errorf("follower holds %d jobs, want %d", len(l.Jobs), 3+hugeElements)
	}
	if c, _ := follower.IDCeiling(); c != 1000 {
		t.Errorf("follower's ceiling %d, want 1000", c)
	}
	m, _ := follower.Meta("queue/")
	if string(m["queue/normal"]) != "closed" {
		t.Errorf("follower's meta %q", m)
	}
	// A snapshot of the leader replaces a store wholesale.
	var snap bytes.Buffer
	if err := leader.Backup(&snap); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.ReplaceWith(&snap); err != nil {
		t.Fatal(err)
	}
	if fresh.Applied() != 4 {
		t.Errorf("restored store applied %d, want 4", fresh.Applied())
	}
	if l, _ := fresh.Load(); len(l.Jobs) != 3+hugeElements {
		t.Errorf("restored store holds %d jobs", len(l.Jobs))
	}
	leader.Close()
}
