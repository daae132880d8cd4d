package replica

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// A candidate that ran with raft-boltdb keeps its log and its vote when
// it starts with raft-wal, even when a copy was cut short before.
func TestLogMigratesFromBolt(t *testing.T) {
	dir := t.TempDir()
	old, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, boltFile)})
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(5); i <= 40; i++ { // a log truncated by a snapshot starts past 1
		logs = append(logs, &raft.Log{Index: i, Term: 3, Type: raft.LogCommand, Data: []byte{byte(i), 'x'}})
	}
	if err := old.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	old.SetUint64([]byte("CurrentTerm"), 3)
	old.SetUint64([]byte("LastVoteTerm"), 3)
	old.Set([]byte("LastVoteCand"), []byte("127.0.0.1:7001"))
	old.Close()
	// The leftovers of a copy killed midway.
	if err := os.MkdirAll(filepath.Join(dir, walDir+".copying"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, walDir+".copying", "junk"), []byte("x"), 0o600)

	w, err := openLog(dir, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	first, _ := w.FirstIndex()
	last, _ := w.LastIndex()
	if first != 5 || last != 40 {
		t.Errorf("log [%d, %d], want [5, 40]", first, last)
	}
	var e raft.Log
	if err := w.GetLog(17, &e); err != nil || e.Term != 3 || string(e.Data) != "\x11x" {
		t.Errorf("entry 17: %+v, %v", e, err)
	}
	if term, err := w.GetUint64([]byte("CurrentTerm")); err != nil || term != 3 {
		t.Errorf("CurrentTerm %d, %v", term, err)
	}
	if cand, err := w.Get([]byte("LastVoteCand")); err != nil || string(cand) != "127.0.0.1:7001" {
		t.Errorf("LastVoteCand %q, %v", cand, err)
	}
	// Appends go on from where the old log ended.
	if err := w.StoreLogs([]*raft.Log{{Index: 41, Term: 4, Type: raft.LogCommand}}); err != nil {
		t.Error(err)
	}
	w.Close()
	if _, err := os.Stat(filepath.Join(dir, boltFile)); !os.IsNotExist(err) {
		t.Errorf("raft.db still in place: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, boltFile+".migrated")); err != nil {
		t.Errorf("the old log was not kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, walDir+".copying")); !os.IsNotExist(err) {
		t.Errorf("the copy's directory is left: %v", err)
	}
	// The next start opens the new log as it is.
	w, err = openLog(dir, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if last, _ := w.LastIndex(); last != 41 {
		t.Errorf("after reopening: last index %d, want 41", last)
	}
}

// The log's appends: raft-wal beside raft-boltdb, which candidates used
// before (the same batches, in the same run). The difference is mostly
// one fsync per append against two.
func BenchmarkLogAppend(b *testing.B) {
	data := make([]byte, 512)
	run := func(b *testing.B, store raft.LogStore) {
		idx := uint64(1)
		for b.Loop() {
			batch := make([]*raft.Log, 8)
			for i := range batch {
				batch[i] = &raft.Log{Index: idx, Term: 1, Type: raft.LogCommand, Data: data}
				idx++
			}
			if err := store.StoreLogs(batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("wal", func(b *testing.B) {
		w, err := openLog(b.TempDir(), hclog.NewNullLogger())
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		run(b, w)
	})
	b.Run("boltdb", func(b *testing.B) {
		s, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(b.TempDir(), "raft.db")})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		run(b, s)
	})
}
