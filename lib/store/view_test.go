package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// viewStore fills a store: job 5 accounted and forgotten, array 6 with
// element 1 done, 2 exited and 3 running, job 7 pending.
func viewStore(t *testing.T, st *Store) {
	t.Helper()
	for _, s := range []*Submission{submission(5, 1, nil), submission(6, 3, nil), submission(7, 1, nil)} {
		if err := st.Submit(s); err != nil {
			t.Fatal(err)
		}
	}
	rec := acctRec(5, 0, 1000, api.JobState_DONE)
	if _, err := st.AddAcct([]*api.Job{rec}); err != nil {
		t.Fatal(err)
	}
	if err := st.Forget([]*api.Job{{JobId: 5}}); err != nil {
		t.Fatal(err)
	}
	err := st.Apply([]Change{
		{Job: &api.Job{JobId: 6, ArrayIndex: 1, State: api.JobState_DONE, StartTime: 10, EndTime: 20, Seq: 2}},
		{Job: &api.Job{JobId: 6, ArrayIndex: 2, State: api.JobState_EXIT, StartTime: 10, EndTime: 30, Seq: 2}},
		{Job: &api.Job{JobId: 6, ArrayIndex: 3, State: api.JobState_RUN, StartTime: 10, Seq: 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkView checks what a view of viewStore's store offers.
func checkView(t *testing.T, v *View) {
	t.Helper()
	var recs []*api.Job
	if err := v.ScanAcct(func(j *api.Job, err error) bool {
		if err != nil {
			t.Error(err)
		}
		recs = append(recs, j)
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if got := ids(recs); !slices.Equal(got, []string{"5[0]@1000"}) {
		t.Errorf("accounting records %v", got)
	} else if recs[0].Spec.GetCommand() != "true" || recs[0].Effective.GetUser() != "user1" {
		t.Errorf("record without its specs: %v", recs[0])
	}
	done, err := v.Finished()
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(done); !slices.Equal(got, []string{"6[1]@20", "6[2]@30"}) {
		t.Errorf("finished jobs held %v", got)
	}
	for _, j := range done {
		if j.Spec.GetCommand() != "true" || j.Effective.GetQueue() != "normal" {
			t.Errorf("job %d[%d] without its specs: %v, %v", j.JobId, j.ArrayIndex, j.Spec, j.Effective)
		}
	}
}

// A view reads a store that is open (xced running), as it was when the
// view was taken, and leaves nothing behind.
func TestViewWhileOpen(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "db")
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	viewStore(t, st)

	v, err := OpenView(dir)
	if err != nil {
		t.Fatalf("view of an open store: %v", err)
	}
	checkView(t, v)
	// Later writes are not in it, and the store takes them.
	if err := st.Apply([]Change{{Job: &api.Job{JobId: 6, ArrayIndex: 3, State: api.JobState_DONE, StartTime: 10, EndTime: 40, Seq: 3}}}); err != nil {
		t.Fatal(err)
	}
	checkView(t, v)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(state); len(ents) != 1 {
		t.Errorf("left in the state directory: %v", ents)
	}
	v, err = OpenView(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if done, err := v.Finished(); err != nil || len(done) != 3 {
		t.Errorf("a new view: %v, %v", ids(done), err)
	}

	if _, err := OpenView(t.TempDir()); err == nil {
		t.Error("a view of an empty directory")
	}
}

// Views taken while the store is written, and while Badger flushes its
// memtables (adding tables and removing logs), are each the store at one
// moment: whole submissions, every job with its specs.
func TestViewWhileWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const jobs = 400
	// Environments of 64 KB, each its own: the memtables fill, and are
	// flushed, every 250 or so.
	env := func(i int) []string {
		return []string{strings.Repeat(string(rune('a'+i%26)), 64<<10) + string(rune(i))}
	}
	written := make(chan error, 1)
	var stop atomic.Bool
	defer func() {
		// A failed check stops the writer before the store closes.
		if stop.CompareAndSwap(false, true) {
			<-written
		}
		st.Close()
	}()
	go func() {
		for i := 1; i <= jobs && !stop.Load(); i++ {
			s := submission(int64(i), 1, env(i))
			s.Jobs[0].State, s.Jobs[0].StartTime, s.Jobs[0].EndTime = api.JobState_DONE, 1, 2
			if err := st.Submit(s); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	views, last := 0, 0
	for done := false; !done; {
		select {
		case err := <-written:
			stop.Store(true)
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
		}
		v, err := OpenView(dir)
		if err != nil {
			t.Fatalf("view %d: %v", views+1, err)
		}
		held, err := v.Finished()
		if cerr := v.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("view %d: %v", views+1, err)
		}
		if len(held) < last || len(held) > 0 && held[len(held)-1].JobId != int64(len(held)) {
			t.Fatalf("view %d: %d jobs up to %v, after %d", views+1, len(held), ids(held[len(held)-1:]), last)
		}
		views, last = views+1, len(held)
	}
	if last != jobs {
		t.Errorf("the last view has %d jobs, want %d", last, jobs)
	}
	t.Logf("%d views", views)
}

// A backup reads as the store does; a backup cut short or damaged does
// not read.
func TestBackupView(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	viewStore(t, st)
	var buf bytes.Buffer
	err = st.Backup(&buf)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	backup := buf.Bytes()
	if !LooksLikeBackup(backup) {
		t.Error("a backup does not look like one")
	}
	v, err := OpenBackupView(bytes.NewReader(backup))
	if err != nil {
		t.Fatal(err)
	}
	checkView(t, v)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(v.tmp); !os.IsNotExist(err) {
		t.Errorf("the view's directory is left: %v", err)
	}

	for name, bad := range map[string][]byte{
		"cut in a list":   backup[:len(backup)-3],
		"cut in a length": append(slices.Clip(backup), 1, 0, 0),
		"not a KVList":    append(binary.LittleEndian.AppendUint64(nil, 3), 0xff, 0xff, 0xff),
		"text":            []byte("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n"),
	} {
		if v, err := OpenBackupView(bytes.NewReader(bad)); err == nil {
			v.Close()
			t.Errorf("%s: read without error", name)
		}
	}
}

// A damaged list length does not have a backup's reader (Restore's, a
// view's) allocate what it says: the list is not there. A damaged
// version is refused.
func TestBackupDamaged(t *testing.T) {
	list, err := proto.Marshal(&pb.KVList{Kv: []*pb.KV{{Key: []byte("m/x"), Value: []byte("1"), Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []uint64{maxBackupList, maxBackupList + 1, 1 << 62, math.MaxUint64} {
		data := append(binary.LittleEndian.AppendUint64(nil, n), list...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, rerr := Restore(bytes.NewReader(data), filepath.Join(t.TempDir(), "db"), 0)
		v, verr := OpenBackupView(bytes.NewReader(data))
		if verr == nil {
			v.Close()
		}
		runtime.ReadMemStats(&after)
		if rerr == nil || verr == nil {
			t.Errorf("a list of %d bytes with %d there: restored (%v), viewed (%v)", n, len(list), rerr, verr)
		}
		// Two Badger databases opened, some MB each; the damaged length
		// alone would be a GB or more.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
			t.Errorf("a list of %d bytes with %d there: %d MB allocated", n, len(list), grew>>20)
		}
	}
	// A damaged version: Badger would count up to it for ever.
	bad, err := proto.Marshal(&pb.KVList{Kv: []*pb.KV{{Key: []byte("m/x"), Value: []byte("1"), Version: math.MaxUint64}}})
	if err != nil {
		t.Fatal(err)
	}
	data := append(binary.LittleEndian.AppendUint64(nil, uint64(len(bad))), bad...)
	if _, err := Restore(bytes.NewReader(data), filepath.Join(t.TempDir(), "db"), 0); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("restored a record of version 2^64-1: %v", err)
	}
	if v, err := OpenBackupView(bytes.NewReader(data)); err == nil {
		v.Close()
		t.Error("viewed a record of version 2^64-1")
	}

	// The same list whole restores.
	data = append(binary.LittleEndian.AppendUint64(nil, uint64(len(list))), list...)
	dir := filepath.Join(t.TempDir(), "db")
	if _, err := Restore(bytes.NewReader(data), dir, 0); err != nil {
		t.Fatal(err)
	}
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if m, err := st.Meta("x"); err != nil || string(m["x"]) != "1" {
		t.Errorf("restored %q, %v", m, err)
	}
}

// A view refuses a later release's layout, as Open does.
func TestViewOfNewerSchema(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetMeta("schema", binary.BigEndian.AppendUint64(nil, SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	v, err := OpenView(dir)
	var se *SchemaError
	if !errors.As(err, &se) || se.Dir != dir {
		t.Errorf("view of a newer store: %v", err)
	}
	if err == nil {
		v.Close()
	}
}
