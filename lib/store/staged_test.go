package store

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"xce/lib/api"
)

// hugeElements is an array size well past what one transaction holds
// (about 13,000 elements with the store's memtable).
const hugeElements = 20000

func hugeSubmission(id int64) *Submission {
	sub := submission(id, hugeElements, []string{"A=1"})
	for _, j := range sub.Jobs {
		j.PendReason = "padding that makes the array too large for one transaction"
	}
	return sub
}

// An array too large for one transaction is stored whole, in stages,
// beside a submission that shared its batch, and leaves no marker.
func TestHugeArrayIsStored(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var hugeErr, smallErr error
	wg.Add(2)
	go func() { defer wg.Done(); hugeErr = st.Submit(hugeSubmission(1)) }()
	go func() { defer wg.Done(); smallErr = st.Submit(submission(2, 1, []string{"A=1"})) }()
	wg.Wait()
	if hugeErr != nil || smallErr != nil {
		t.Fatalf("huge array: %v; the other submission: %v", hugeErr, smallErr)
	}
	check := func(st *Store, when string) {
		t.Helper()
		l, err := st.Load()
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if len(l.Jobs) != hugeElements+1 {
			t.Errorf("%s: %d jobs, want %d", when, len(l.Jobs), hugeElements+1)
		}
		if evs, _ := st.Events(1, -1); len(evs) != hugeElements {
			t.Errorf("%s: %d events of the array, want %d", when, len(evs), hugeElements)
		}
		if n := countPending(t, st.db); n != 0 {
			t.Errorf("%s: %d pending markers left", when, n)
		}
	}
	check(st, "stored")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	check(st, "after a reopen")
}

func countPending(t *testing.T, db *badger.DB) int {
	t.Helper()
	n := 0
	err := db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: pendingPrefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A store a crash left in the middle of a staged submission (its marker
// and part of its records written, as kill -9 leaves them) opens without
// any of it; the jobs stored before are intact.
func TestInterruptedStagedSubmissionIsRemoved(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Submit(submission(1, 3, []string{"A=1"})); err != nil {
		t.Fatal(err)
	}
	// Steps 1 and part of 2 of a staged write of job 2.
	b := &batch{}
	txn := st.db.NewTransaction(false)
	sub := hugeSubmission(2)
	if err := st.stage(txn, b, sub); err != nil {
		t.Fatal(err)
	}
	txn.Discard()
	tailStart, ok := stagedTail(b.muts)
	if !ok {
		t.Fatal("a huge submission is not laid out to be staged")
	}
	if err := st.db.Update(func(txn *badger.Txn) error { return apply(txn, b.muts[0]) }); err != nil {
		t.Fatal(err)
	}
	wb := st.db.NewWriteBatch()
	for _, m := range b.muts[1 : tailStart/2] {
		if err := apply(wb, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := wb.Flush(); err != nil {
		t.Fatal(err)
	}
	crash, damaged := t.TempDir(), t.TempDir()
	copyDir(t, dir, crash)
	copyDir(t, dir, damaged)
	st.Close()

	// Salvage (xced store recover) names the submission once and keeps
	// none of it.
	fresh := filepath.Join(t.TempDir(), "fresh")
	rep, err := Salvage(damaged, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dropped) != 1 || !strings.Contains(rep.Dropped[0], "job 2: its submission was interrupted") || rep.Jobs != 3 {
		t.Errorf("salvage kept %d jobs and dropped %d (first: %q)", rep.Jobs, len(rep.Dropped), rep.Dropped[:min(1, len(rep.Dropped))])
	}
	if sv, err := Open(fresh); err != nil {
		t.Errorf("the salvaged store: %v", err)
	} else {
		if evs, _ := sv.Events(2, -1); len(evs) != 0 || countPending(t, sv.db) != 0 {
			t.Errorf("the salvaged store holds %d events of the interrupted submission", len(evs))
		}
		sv.Close()
	}

	st, err = Open(crash)
	if err != nil {
		t.Fatalf("open after the interrupted submission: %v", err)
	}
	defer st.Close()
	l, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Jobs) != 3 || l.Jobs[0].JobId != 1 {
		t.Errorf("%d jobs after the sweep, want job 1's 3", len(l.Jobs))
	}
	if evs, _ := st.Events(2, -1); len(evs) != 0 {
		t.Errorf("%d events of the interrupted submission are left", len(evs))
	}
	if n := countPending(t, st.db); n != 0 {
		t.Errorf("%d pending markers left", n)
	}
	// The interrupted submission's id can be stored again (a replicated
	// log replays the entry): it is whole afterwards.
	if err := st.Submit(hugeSubmission(2)); err != nil {
		t.Fatal(err)
	}
	if l, _ = st.Load(); len(l.Jobs) != 3+hugeElements {
		t.Errorf("%d jobs after storing it again, want %d", len(l.Jobs), 3+hugeElements)
	}
}

// kill -9 at any moment of a staged submission leaves all of it or none
// of it. A child process stores a huge array and is killed after each of
// a spread of delays; every store it leaves opens and holds the array
// whole or not at all.
func TestKillDuringStagedSubmission(t *testing.T) {
	if dir := os.Getenv("XCE_STORE_STAGED_CHILD"); dir != "" {
		stagedChild(dir)
		return
	}
	if testing.Short() || raceDetector {
		// Under -race it only runs five times slower: the children's
		// writes share no memory with another goroutine of the test.
		t.Skip("kills a process several times")
	}
	// How long the child takes from its start to storing the array.
	began := time.Now()
	dir := t.TempDir()
	runChild(t, dir, -1)
	took := time.Since(began)
	outcomes := map[string]int{}
	for k := range 8 {
		dir := t.TempDir()
		runChild(t, dir, took*time.Duration(k)/8)
		st, err := Open(dir)
		if err != nil {
			t.Fatalf("kill %d: open: %v", k, err)
		}
		l, err := st.Load()
		if err != nil {
			t.Fatalf("kill %d: load: %v", k, err)
		}
		evs, _ := st.Events(1, -1)
		switch {
		case len(l.Jobs) == 0 && len(evs) == 0:
			outcomes["none"]++
		case len(l.Jobs) == hugeElements && len(evs) == hugeElements:
			outcomes["whole"]++
		default:
			t.Errorf("kill %d: %d jobs and %d events of the array, want all %d or none", k, len(l.Jobs), len(evs), hugeElements)
		}
		if n := countPending(t, st.db); n != 0 {
			t.Errorf("kill %d: %d pending markers left", k, n)
		}
		st.Close()
	}
	t.Logf("outcomes over the kills: %v (whole run: %v)", outcomes, took)
}

// runChild runs stagedChild on dir and, unless after is negative, kills
// it with SIGKILL that long after it has opened the store.
func runChild(t *testing.T, dir string, after time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringStagedSubmission$")
	cmd.Env = append(os.Environ(), "XCE_STORE_STAGED_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() && lines.Text() != "open" {
	}
	if after >= 0 {
		time.Sleep(after)
		cmd.Process.Kill()
	}
	for lines.Scan() {
	}
	err = cmd.Wait()
	if after < 0 && err != nil {
		t.Fatalf("the child failed: %v", err)
	}
}

func stagedChild(dir string) {
	st, err := Open(dir)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("open\n")
	if err := st.Submit(hugeSubmission(1)); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("stored\n")
	os.Exit(0) // no Close: what a crash right after the reply leaves
}

func TestStagedTail(t *testing.T) {
	marker := pendingKey(9)
	set := func(k string) mutation { return mutation{key: []byte(k), value: []byte("v")} }
	mark := mutation{key: marker, value: encodePending(2, []byte("j"))}
	unmark := mutation{key: marker, del: true}
	for i, c := range []struct {
		muts  []mutation
		start int
		ok    bool
	}{
		{[]mutation{mark, set("a"), set("b"), unmark}, 2, true},
		{[]mutation{mark, unmark}, 0, false}, // the tail would take the marker's own transaction
		{[]mutation{mark, set("a"), set("b")}, 0, false},
		{[]mutation{set("a"), mark, set("b"), unmark}, 0, false},
		{[]mutation{mark, set("a"), set("b"), {key: pendingKey(8), del: true}}, 0, false},
		{[]mutation{{key: marker, value: encodePending(9)}, set("a"), unmark}, 0, false},
		{[]mutation{{key: marker, value: []byte{0x80}}, set("a"), unmark}, 0, false},
	} {
		start, ok := stagedTail(c.muts)
		if start != c.start || ok != c.ok {
			t.Errorf("case %d: %d %v, want %d %v", i, start, ok, c.start, c.ok)
		}
	}
}

func TestPendingEncoding(t *testing.T) {
	v := encodePending(4, []byte("j\x00\x01"), []byte("e"))
	tail, prefixes, err := decodePending(v)
	if err != nil || tail != 4 || len(prefixes) != 2 || string(prefixes[0]) != "j\x00\x01" || string(prefixes[1]) != "e" {
		t.Fatalf("decoded %d %q %v", tail, prefixes, err)
	}
	if _, _, err := decodePending(v[:len(v)-1]); err == nil {
		t.Error("a cut marker was accepted")
	}
	if _, _, err := decodePending(encodePending(1, nil)); err == nil {
		t.Error("an empty prefix was accepted")
	}
}

// Changes to more jobs than one transaction holds (bkill of a huge array)
// are stored, every job's record with its event; a change reads what an
// earlier part wrote (an accounting record takes the submitted spec that
// the first change replaced).
func TestApplyManyChanges(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Submit(hugeSubmission(1)); err != nil {
		t.Fatal(err)
	}
	changes := make([]Change, 0, hugeElements)
	for i := range hugeElements {
		j := &api.Job{JobId: 1, ArrayIndex: int32(i + 1), State: api.JobState_EXIT, Seq: hugeElements + 1,
			PendReason: "padding that makes the changes too large for one transaction"}
		changes = append(changes, Change{Job: j, Event: &api.Event{JobId: 1, ArrayIndex: j.ArrayIndex, Type: api.EventType_SIGNAL}})
	}
	changes[0].SubmittedRaw = mustMarshal(&api.JobSpec{Command: "replaced", Queue: "normal"})
	last := &changes[len(changes)-1]
	last.Acct = acctRec(1, last.Job.ArrayIndex, 5000, api.JobState_EXIT)
	last.Acct.Effective = nil
	if err := st.Apply(changes); err != nil {
		t.Fatal(err)
	}
	l, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	exited := 0
	for _, j := range l.Jobs {
		if j.State == api.JobState_EXIT && j.Seq == hugeElements+1 {
			exited++
		}
	}
	if exited != hugeElements {
		t.Errorf("%d of %d records changed", exited, hugeElements)
	}
	if evs, _ := st.Events(1, -1); len(evs) != 2*hugeElements {
		t.Errorf("%d events, want %d", len(evs), 2*hugeElements)
	}
	recs, err := st.AcctOf(1, last.Job.ArrayIndex)
	if err != nil || len(recs) != 1 || recs[0].GetSpec().GetCommand() != "replaced" {
		t.Errorf("accounting record %v (%v), want one with the replaced submitted spec", recs, err)
	}
}
