// Package store owns XCE's durable state: jobs, their specs, their event logs
// and the job id counter, kept in an embedded Badger database as lib/api
// messages.
//
// Every write is synchronous (Badger's SyncWrites): a call returns only once
// the data is on disk. Badger batches the transactions that concurrent
// goroutines commit at the same time into one write and one fsync, so
// concurrent submissions share fsyncs without a second queue here.
//
// Layout (all integers big-endian, so keys sort numerically):
//
//	j<id:8><index:4>        Job without its specs (the live record)
//	s<id:8>                 JobSpec as submitted (shared by array elements)
//	f<id:8>                 JobSpec effective (shared by array elements)
//	o<id:8>                 JobSpec holding only the effective spec's
//	                        origin map, kept apart: it is read only for
//	                        bjobs -l, and decoding it with every job would
//	                        slow queries and restarts
//	e<id:8><index:4><seq:8> Event, the job's log in order
//	v<hash:16>              an environment, deduplicated by content
//	m/schema                the layout's version (schema.go)
//	m/idceiling             job ids below this may have been handed out
//	m/queue/<name>          QueueState: an administrator's qclose/qinact
//	m/host/<name>           the comment of an administrator's hclose
//	m/pending/<id:8>        a submission being written in stages (staged.go)
//	a<end:8><id:8><index:4> accounting record of a finished job (bacct)
//	A<id:8><index:4><end:8> empty: index of the accounting records by job
//
// A finished job past the clean period loses its j record; its specs and
// events stay for bhist, and its accounting record (acct.go) for bacct,
// until the cluster's acct_retention has passed: pruning its last
// accounting record deletes its specs and events too. (Environments, v,
// are shared by content and stay.)
package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// Store is the controller's database.
type Store struct {
	dir      string
	db       *badger.DB
	submitCh chan *submitReq
	stopped  chan struct{}
	minFree  uint64       // see CheckSpace
	roomy    atomic.Int64 // when the disk last read well above the floor (unix ns; space.go)
	lowSpace bool         // opened below the floor: read-only (space.go)
	unsynced bool         // a replica's store: commits not synced (replica.go)
	quit     chan struct{}

	allocMu   sync.Mutex
	allocated map[string]bool // memtable logs preallocated

	ceilMu  sync.Mutex // orders commits that change the ceiling or the applied index
	ceiling int64      // the id ceiling last recorded
	applied uint64     // the replicated log's last entry applied (batch.go)

	replMu sync.RWMutex
	repl   Replicator // nil: writes go to Badger directly

	maxGather time.Duration // see gather; tests set their own

	observe atomic.Pointer[func(time.Duration)] // ObserveCommits

	// replacing is held by ReplaceWith, which Badger requires to run
	// alone, and shared by the readers a standby runs meanwhile (Load,
	// Backup, Digest).
	replacing sync.RWMutex
}

var keyIDCeiling = []byte("m/idceiling")

// Open opens (creating if needed) the database in dir, after checking it
// for damage (verify.go): a damaged store is not opened, and the error, a
// *DamageError, says what is damaged and how to recover.
func Open(dir string) (*Store, error) { return open(dir, false, false) }

func open(dir string, lowSpace, unsynced bool) (*Store, error) {
	if err := lockAndTidy(dir, lockWait); err != nil {
		return nil, err
	}
	isNew := isNewStore(dir)
	problems, err := inspectStore(dir, unsynced)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, &DamageError{Dir: dir, Problems: problems}
	}
	opts := badgerOptions(dir).WithSyncWrites(!unsynced)
	if lowSpace {
		if err := replayFits(dir); err != nil {
			return nil, err
		}
		opts = opts.WithNumCompactors(0)
	}
	db, err := badger.Open(opts)
	if err != nil {
		return nil, &DamageError{Dir: dir, Problems: []string{fmt.Sprintf("the database does not open: %v", err)}}
	}
	// A later release's layout is refused before it is checked as this
	// release's, which could call it damaged.
	if v, err := readSchema(db); err == nil && v > SchemaVersion {
		db.Close()
		return nil, &SchemaError{Dir: dir, Version: v}
	}
	problems, err = verifyOpen(dir, db)
	if err == nil && len(problems) > 0 {
		err = &DamageError{Dir: dir, Problems: problems}
	}
	if err == nil {
		err = upgradeSchema(dir, db, isNew, lowSpace)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	// The seal describes the store as it was stopped; from now on it
	// changes, and a crash must not leave a stale seal behind.
	if err := os.Remove(filepath.Join(dir, sealFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	swept, err := sweepPending(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	for _, id := range swept {
		// Its bsub had no answer; a replicated store applies it again
		// from its log.
		slog.Warn("removed the part stored of a submission that a stop interrupted", "job", id)
	}
	s := &Store{dir: dir, db: db, submitCh: make(chan *submitReq, maxBatch), stopped: make(chan struct{}), quit: make(chan struct{}), allocated: map[string]bool{}, maxGather: maxGather}
	s.minFree = s.defaultMinFree()
	s.lowSpace = lowSpace
	s.unsynced = unsynced
	if s.ceiling, err = s.IDCeiling(); err != nil {
		db.Close()
		return nil, err
	}
	if s.applied, err = readApplied(db); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.preallocateLogs(); err != nil {
		db.Close()
		return nil, err
	}
	go s.committer()
	go s.preallocator()
	return s, nil
}

// lockWait bounds how long Open waits for another process's hold on the
// database to go: after kill -9 the kernel releases the dead controller's
// locks only as it tears the process down, which a restart can beat.
var lockWait = 5 * time.Second

// lockAndTidy waits, up to wait, until no process holds Badger's lock on
// dir (a flock on the directory itself), so that a database still held is
// neither inspected while in use nor reported as damaged when Badger
// refuses to open it; holding the lock, it removes the empty logs a crash
// left (dropEmptyLogs).
func lockAndTidy(dir string, wait time.Duration) error {
	d, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a new store
	}
	if err != nil {
		return fmt.Errorf("open store %s: %w", dir, err)
	}
	defer d.Close()
	deadline := time.Now().Add(wait)
	// A dead process's lock goes within milliseconds: poll soon, then
	// back off to a poll every 20 ms for a live holder.
	pause := time.Millisecond
	for {
		err := unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			// No process has the store open: what a crash left
			// half-made can go.
			err := dropEmptyLogs(dir)
			if uerr := unix.Flock(int(d.Fd()), unix.LOCK_UN); err == nil {
				err = uerr
			}
			return err
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("lock store %s: %w", dir, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("store %s is in use by another process", dir)
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// dropEmptyLogs removes the memtable and value logs of no bytes in dir: a
// crash between a log's creation and its first write (its header, or the
// preallocation) leaves one, and Badger then cannot open the store (it
// takes the file for one it has just created and fails with "Create a new
// file": dgraph-io/badger#2207). Such a file holds no entry, so nothing
// is lost with it.
func dropEmptyLogs(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("open store %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !isLog(n) {
			continue
		}
		fi, err := e.Info()
		if err != nil || fi.Size() != 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("open store %s: remove the empty log a crash left: %w", dir, err)
		}
		slog.Warn("removed an empty log that a crash left in the store", "store", dir, "file", n)
	}
	return nil
}

// isLog says whether a store file's name is a memtable or value log's.
func isLog(name string) bool {
	return strings.HasSuffix(name, ".mem") || strings.HasSuffix(name, ".vlog")
}

// The sizes Badger writes in: CheckSpace's floor is made of them.
const (
	memTableSize     = 16 << 20
	baseTableSize    = 4 << 20
	valueLogFileSize = 64 << 20
)

func badgerOptions(dir string) badger.Options {
	return badger.DefaultOptions(dir).
		WithSyncWrites(true).
		WithLogger(nil).
		WithNumVersionsToKeep(1).
		// A controller holds little data; small tables and memtables keep
		// the resident size and the start-up time down.
		WithMemTableSize(memTableSize).
		WithNumMemtables(2).
		WithBaseTableSize(baseTableSize).
		WithValueLogFileSize(valueLogFileSize).
		// Tables are not compressed, so their blocks are read straight
		// from the mapped files: no cache of decompressed copies (with
		// compression, a restart's one pass over the jobs held about
		// 300 bytes a job there), no decompressing at every start. A
		// table's older compressed blocks still read, decompressed each
		// time, until compaction rewrites them.
		WithCompression(options.None).
		WithBlockCacheSize(0).
		WithIndexCacheSize(8 << 20).
		WithNumCompactors(2).
		// A block whose checksum fails is an error, not wrong data.
		WithChecksumVerificationMode(options.OnBlockRead)
}

// Close flushes and closes the database, and seals it: it records what
// the store holds, which the next Open checks. No Submit may be running.
func (s *Store) Close() error {
	close(s.submitCh)
	<-s.stopped
	close(s.quit)
	jobs, subs, _, cerr := countRecords(s.db)
	ceiling, ierr := s.IDCeiling()
	if s.unsynced {
		if err := s.Sync(); err != nil {
			s.db.Close()
			return err
		}
	}
	if err := s.db.Close(); err != nil {
		return err
	}
	if cerr != nil || ierr != nil {
		return nil // no seal: the next start checks what it can without one
	}
	return writeSeal(s.dir, jobs, subs, ceiling)
}

func jobKey(id int64, index int32) []byte {
	k := make([]byte, 13)
	k[0] = 'j'
	binary.BigEndian.PutUint64(k[1:], uint64(id))
	binary.BigEndian.PutUint32(k[9:], uint32(index))
	return k
}

func specKey(prefix byte, id int64) []byte {
	k := make([]byte, 9)
	k[0] = prefix
	binary.BigEndian.PutUint64(k[1:], uint64(id))
	return k
}

func eventKey(id int64, index int32, seq int64) []byte {
	k := make([]byte, 21)
	k[0] = 'e'
	binary.BigEndian.PutUint64(k[1:], uint64(id))
	binary.BigEndian.PutUint32(k[9:], uint32(index))
	binary.BigEndian.PutUint64(k[13:], uint64(seq))
	return k
}

func envKey(ref []byte) []byte { return append([]byte{'v'}, ref...) }

// EnvRef returns the content key of an environment.
func EnvRef(env []string) []byte {
	h := sha256.New()
	for _, e := range env {
		h.Write([]byte(e))
		h.Write([]byte{0})
	}
	return h.Sum(nil)[:16]
}

// Submission is one bsub: its specs and the jobs it created (one, or every
// element of an array), each with its SUBMIT event.
type Submission struct {
	Spec         *api.JobSpec // with Env; stored deduplicated
	EffectiveRaw []byte       // the effective spec, encoded, without its origin
	OriginRaw    []byte       // the origin map, encoded as a JobSpec
	Jobs         []*api.Job   // without specs
	Events       []*api.Event
}

// Submit stores a submission durably, at once: an array is never half
// there. One too large for a transaction (about 2 MB, 13,000 elements) is
// written in stages that a crash undoes (staged.go).
// It sets Spec.EnvRef; the caller keeps the Env it passed.
//
// Concurrent calls share a transaction and its fsync: one goroutine commits
// whatever submissions are waiting while the previous commit was on disk.
func (s *Store) Submit(sub *Submission) error { return s.SubmitMany([]*Submission{sub})[0] }

// SubmitMany stores several submissions, in order, in as few commits as
// the batch limit allows (a job pack), and returns each one's outcome.
func (s *Store) SubmitMany(subs []*Submission) []error {
	reqs := make([]*submitReq, len(subs))
	for i, sub := range subs {
		reqs[i] = &submitReq{sub: sub, done: make(chan error, 1)}
		s.submitCh <- reqs[i]
	}
	errs := make([]error, len(subs))
	for i, r := range reqs {
		errs[i] = <-r.done
	}
	return errs
}

type submitReq struct {
	sub  *Submission
	done chan error
}

// maxBatch bounds how many submissions share one transaction.
const maxBatch = 512

// maxGather bounds how long a replicated store's batch waits for the
// submissions it expects (gather).
const maxGather = 3 * time.Millisecond

func (s *Store) committer() {
	defer close(s.stopped)
	// What the next batch expects, and how long it may wait for it.
	expect, patience := 0, time.Duration(0)
	for req := range s.submitCh {
		batch := []*submitReq{req}
	more:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-s.submitCh:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		if len(batch) < expect && s.replicator() != nil {
			batch = s.gather(batch, expect, patience)
		}
		// One batch at a time, replicated too (replica.go).
		start := time.Now()
		s.commitBatch(batch)
		patience = min(time.Since(start), s.maxGather)
		expect = min(len(batch)+len(s.submitCh), maxBatch)
	}
}

// gather waits, up to patience, until batch holds expect submissions.
//
// Where the store is replicated, a batch is a log entry, and each entry
// costs every candidate a fixed amount of work (an append, a synced
// write, a round between leader and followers, a store commit) whatever
// it carries. Clients that submit one job after another, each waiting
// for the last, split into two groups that take turns, each one's batch
// cut while the other's is in the log: with 32 such clients, entries of
// about 15 submissions. The clients a batch answered mostly submit again
// at once, so the next batch waits, up to one round (maxGather at most),
// for as many as that batch and the submissions already waiting: the
// groups merge. A lone client's batch expects only itself and never
// waits.
func (s *Store) gather(batch []*submitReq, expect int, patience time.Duration) []*submitReq {
	t := time.NewTimer(patience)
	defer t.Stop()
	for len(batch) < expect {
		select {
		case r, ok := <-s.submitCh:
			if !ok {
				return batch
			}
			batch = append(batch, r)
		case <-t.C:
			return batch
		}
	}
	return batch
}

// commitBatch writes a batch of submissions at once; if that fails (a
// batch too large, say), each submission is tried alone so that one bad
// submission does not fail the others.
func (s *Store) commitBatch(reqs []*submitReq) {
	err := func() error {
		b := &batch{}
		txn := s.db.NewTransaction(false)
		defer txn.Discard()
		for _, r := range reqs {
			if err := s.stage(txn, b, r.sub); err != nil {
				return err
			}
		}
		return s.write(b)
	}()
	if err == nil || len(reqs) == 1 {
		for _, r := range reqs {
			r.done <- err
		}
		return
	}
	for _, r := range reqs {
		s.commitBatch([]*submitReq{r})
	}
}

// stage adds one submission's writes to b (txn reads the store).
func (s *Store) stage(txn *badger.Txn, b *batch, sub *Submission) error {
	spec := sub.Spec
	env := spec.Env
	ref := EnvRef(env)
	spec.EnvRef = ref
	spec.Env = nil
	specBytes, err := api.Marshal(spec)
	spec.Env = env
	if err != nil {
		return fmt.Errorf("encode spec: %w", err)
	}
	effBytes := sub.EffectiveRaw
	id := sub.Jobs[0].JobId
	// A submission that might not fit one transaction is laid out to be
	// written in stages (staged.go): the marker, the body, then the specs
	// and the marker's deletion.
	var marker []byte
	if 2*len(sub.Jobs) >= int(s.db.MaxBatchCount())/8 {
		marker = pendingKey(id)
		tail := 3 // s, f and the marker's deletion
		if sub.OriginRaw != nil {
			tail++
		}
		b.Set(marker, encodePending(tail, specKey('j', id), specKey('e', id)))
	}
	if err := putEnv(txn, b, ref, env); err != nil {
		return err
	}
	specs := func() {
		b.setRead(specKey('s', id), specBytes)
		b.Set(specKey('f', id), effBytes)
		if sub.OriginRaw != nil {
			b.Set(specKey('o', id), sub.OriginRaw)
		}
	}
	if marker == nil {
		specs()
	}
	for i, j := range sub.Jobs {
		if err := setMsg(b, jobKey(j.JobId, j.ArrayIndex), j); err != nil {
			return err
		}
		if i < len(sub.Events) {
			ev := sub.Events[i]
			if err := setMsg(b, eventKey(ev.JobId, ev.ArrayIndex, j.Seq), ev); err != nil {
				return err
			}
		}
	}
	if marker != nil {
		specs()
		b.Delete(marker)
	}
	return nil
}

// putEnv adds an environment to b unless the store or b holds it already:
// most submissions share their user's environment.
func putEnv(txn *badger.Txn, b *batch, ref []byte, env []string) error {
	k := envKey(ref)
	ok, err := b.has(txn, k)
	if err != nil {
		return fmt.Errorf("look up environment: %w", err)
	}
	if ok {
		return nil
	}
	b.setRead(k, []byte(strings.Join(env, "\x00")))
	return nil
}

type setter interface {
	Set(k, v []byte) error
}

func setMsg(w setter, key []byte, m proto.Message) error {
	b, err := api.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %T: %w", m, err)
	}
	return w.Set(key, b)
}

// Change is one job's new record and the event that explains it.
type Change struct {
	Job   *api.Job // without specs; Seq orders its event
	Event *api.Event
	// EffectiveRaw, OriginRaw and SubmittedRaw, when set, replace the
	// job's effective spec, its origin and its submitted spec (encoded,
	// without the environment; shared by an array's elements, so one
	// change per job id is enough).
	EffectiveRaw, OriginRaw, SubmittedRaw []byte
	// Acct, when set, is an accounting record to write in the same
	// transaction (without its submitted spec, which is added; see
	// acct.go): that of a finished job this change sends back to pending.
	Acct *api.Job
}

// Apply writes job changes durably: at once, unless they are more than a
// transaction holds (a bkill or bmod of an array of tens of thousands of
// elements). Those are written in parts of whole changes, each durable
// before the next: a crash between leaves some of the jobs changed, as if
// the request had reached only them, never a job's record without its
// event. (A part that fails leaves the parts before it stored; the error
// says how many changes they held.)
func (s *Store) Apply(changes []Change) error {
	if len(changes) == 0 {
		return nil
	}
	// A part's budget: half of what Badger takes in one transaction, by
	// its count of writes and by their size (with Badger's overhead).
	maxCount, maxBytes := int(s.db.MaxBatchCount()/2), s.db.MaxBatchSize()/2
	var (
		b      *batch
		txn    *badger.Txn
		size   int64
		stored int // the changes in the parts written
	)
	write := func(upTo int) error {
		txn.Discard()
		err := s.write(b)
		if err != nil && stored > 0 {
			return fmt.Errorf("store %d job changes (the first %d are stored): %w", len(changes), stored, err)
		}
		if err != nil {
			return fmt.Errorf("store %d job changes: %w", len(changes), err)
		}
		b, stored = nil, upTo
		return nil
	}
	for i, c := range changes {
		if b != nil && (len(b.muts) >= maxCount || size >= maxBytes) {
			if err := write(i); err != nil {
				return err
			}
		}
		if b == nil {
			// A fresh read view: a change may read what an earlier part
			// wrote (stageAcct, the submitted spec).
			b, txn, size = &batch{}, s.db.NewTransaction(false), 0
		}
		mark := len(b.muts)
		if err := stageChange(txn, b, c); err != nil {
			txn.Discard()
			return err
		}
		for _, m := range b.muts[mark:] {
			size += int64(len(m.key)+len(m.value)) + 16
		}
	}
	return write(len(changes))
}

// stageChange adds one job change's writes to b (txn reads the store).
func stageChange(txn *badger.Txn, b *batch, c Change) error {
	j := c.Job
	if j.Spec != nil || j.Effective != nil {
		return fmt.Errorf("store job %d: record carries its specs", j.JobId)
	}
	if err := setMsg(b, jobKey(j.JobId, j.ArrayIndex), j); err != nil {
		return err
	}
	if c.Event != nil {
		if err := setMsg(b, eventKey(j.JobId, j.ArrayIndex, j.Seq), c.Event); err != nil {
			return err
		}
	}
	if c.EffectiveRaw != nil {
		b.Set(specKey('f', j.JobId), c.EffectiveRaw)
	}
	if c.OriginRaw != nil {
		b.Set(specKey('o', j.JobId), c.OriginRaw)
	}
	if c.SubmittedRaw != nil {
		b.setRead(specKey('s', j.JobId), c.SubmittedRaw)
	}
	if c.Acct != nil {
		return stageAcct(txn, b, c.Acct)
	}
	return nil
}

// Forget removes the live records of finished jobs past the clean period;
// their specs and events stay.
func (s *Store) Forget(jobs []*api.Job) error {
	b := &batch{inParts: true}
	for _, j := range jobs {
		b.Delete(jobKey(j.JobId, j.ArrayIndex))
	}
	return s.write(b)
}

// SetMeta stores (or, with a nil value, deletes) a small controller
// setting under m/<key>, durably.
func (s *Store) SetMeta(key string, value []byte) error {
	b := &batch{}
	k := []byte("m/" + key)
	if value == nil {
		b.Delete(k)
	} else {
		b.Set(k, value)
	}
	return s.write(b)
}

// Meta returns the settings stored under m/<prefix>, by key without m/.
func (s *Store) Meta(prefix string) (map[string][]byte, error) {
	out := map[string][]byte{}
	p := []byte("m/" + prefix)
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Seek(p); it.ValidForPrefix(p); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			out[string(it.Item().Key()[2:])] = v
		}
		return nil
	})
	return out, err
}

// SetIDCeiling records that job ids below c may have been handed out, in
// the store and in the ceiling file beside it (see commit).
func (s *Store) SetIDCeiling(c int64) error {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(c))
	b := &batch{}
	b.Set(keyIDCeiling, v[:])
	return s.write(b)
}

// IDCeiling returns the recorded ceiling, 0 when none.
func (s *Store) IDCeiling() (int64, error) { return readIDCeiling(s.db) }

// readIDCeiling reads the job id ceiling record of db, 0 when none.
func readIDCeiling(db *badger.DB) (int64, error) {
	v, err := readUint64(db, keyIDCeiling)
	return int64(v), err
}

// readUint64 reads a big-endian 8-byte record, 0 when there is none.
func readUint64(db *badger.DB, key []byte) (uint64, error) {
	var n uint64
	err := db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(key)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error {
			if len(v) == 8 {
				n = binary.BigEndian.Uint64(v)
			}
			return nil
		})
	})
	return n, err
}

// Loaded is what Load found: every live job, with the effective spec
// (encoded) it shares with the other elements of its array. Equal
// encodings read by one of Load's goroutines share one slice: the jobs of
// one submission pattern have the same effective spec.
type Loaded struct {
	Jobs      []*api.Job
	Effective map[int64][]byte
}

// Load reads every live job and its effective spec. The job ids are cut
// into ranges read side by side, one goroutine each; each walks its job
// records and then its effective specs forward, in id order. Each range
// is read in a transaction of its own: a job and its spec are read
// together, two ranges perhaps moments apart (the controller loads before
// anything writes).
func (s *Store) Load() (*Loaded, error) {
	s.replacing.RLock()
	defer s.replacing.RUnlock()
	lo, hi, err := s.jobIDRange()
	if err != nil {
		return nil, fmt.Errorf("load jobs: %w", err)
	}
	parts := 1
	if hi-lo >= 2*minLoadRange {
		parts = min(runtime.GOMAXPROCS(0), 8, int((hi-lo)/minLoadRange))
	}
	type part struct {
		jobs []*api.Job
		effs map[int64][]byte
		err  error
	}
	out := make([]part, parts)
	var wg sync.WaitGroup
	step := (hi - lo + int64(parts)) / int64(parts)
	for i := range out {
		from, to := lo+int64(i)*step, min(lo+int64(i+1)*step, hi+1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &out[i]
			p.err = s.db.View(func(txn *badger.Txn) error {
				var err error
				if p.jobs, err = loadJobs(txn, from, to); err == nil {
					p.effs, err = loadEffective(txn, p.jobs)
				}
				return err
			})
		}()
	}
	wg.Wait()
	l := &Loaded{}
	n, m := 0, 0
	for _, p := range out {
		if p.err != nil {
			return nil, fmt.Errorf("load jobs: %w", p.err)
		}
		n, m = n+len(p.jobs), m+len(p.effs)
	}
	l.Jobs, l.Effective = make([]*api.Job, 0, n), make(map[int64][]byte, m)
	for _, p := range out {
		l.Jobs = append(l.Jobs, p.jobs...)
		maps.Copy(l.Effective, p.effs)
	}
	return l, nil
}

// minLoadRange is the fewest job ids worth a goroutine of Load's.
const minLoadRange = 4096

// jobIDRange returns the smallest and the largest id of a live job (1, 0
// when there is none).
func (s *Store) jobIDRange() (lo, hi int64, err error) {
	lo, hi = 1, 0
	err = s.db.View(func(txn *badger.Txn) error {
		first := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{'j'}})
		defer first.Close()
		first.Rewind()
		if !first.Valid() {
			return nil
		}
		lo = jobIDOf(first.Item().Key())
		last := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{'j'}, Reverse: true})
		defer last.Close()
		// In reverse, the largest key with the prefix is the one before
		// the next prefix.
		last.Seek([]byte{'j' + 1})
		if last.ValidForPrefix([]byte{'j'}) {
			hi = jobIDOf(last.Item().Key())
		}
		return nil
	})
	return lo, max(lo, hi), err
}

func jobIDOf(k []byte) int64 {
	if len(k) < 9 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(k[1:9]))
}

// loadJobs decodes the live job records with ids from..to-1.
func loadJobs(txn *badger.Txn, from, to int64) ([]*api.Job, error) {
	var jobs []*api.Job
	opts := badger.DefaultIteratorOptions
	opts.PrefetchSize = 1000
	opts.Prefix = []byte{'j'}
	it := txn.NewIterator(opts)
	defer it.Close()
	end := specKey('j', to)
	for it.Seek(specKey('j', from)); it.ValidForPrefix([]byte{'j'}) && bytes.Compare(it.Item().Key(), end) < 0; it.Next() {
		j := &api.Job{}
		if err := it.Item().Value(func(v []byte) error { return proto.Unmarshal(v, j) }); err != nil {
			return nil, fmt.Errorf("decode job %x: %w", it.Item().Key(), err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// loadEffective reads the effective specs of jobs (in id order) in one
// forward walk: a step to the next key costs far less than a seek, which
// reads and checks its block again. Equal encodings share one slice.
func loadEffective(txn *badger.Txn, jobs []*api.Job) (map[int64][]byte, error) {
	effs := map[int64][]byte{}
	if len(jobs) == 0 {
		return effs, nil
	}
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{'f'}})
	defer it.Close()
	seen := map[string][]byte{}
	it.Seek(specKey('f', jobs[0].JobId))
	last := int64(-1)
	for _, j := range jobs {
		if j.JobId == last {
			continue // an array's elements share it
		}
		last = j.JobId
		k := specKey('f', j.JobId)
		// The specs of jobs that are gone (kept for bhist) lie between:
		// stepped over, or sought past when there are many.
		for steps := 0; it.Valid() && bytes.Compare(it.Item().Key(), k) < 0; steps++ {
			if steps == 32 {
				it.Seek(k)
				break
			}
			it.Next()
		}
		if !it.Valid() || !bytes.Equal(it.Item().Key(), k) {
			return nil, fmt.Errorf("job %d: its effective spec is missing", j.JobId)
		}
		err := it.Item().Value(func(v []byte) error {
			raw, ok := seen[string(v)]
			if !ok {
				raw = bytes.Clone(v)
				if raw == nil {
					raw = []byte{}
				}
				seen[unsafe.String(unsafe.SliceData(raw), len(raw))] = raw
			}
			effs[j.JobId] = raw
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read spec of job %d: %w", j.JobId, err)
		}
	}
	return effs, nil
}

func getSpec(txn *badger.Txn, key []byte) (*api.JobSpec, error) {
	item, err := txn.Get(key)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	spec := &api.JobSpec{}
	err = item.Value(func(v []byte) error { return proto.Unmarshal(v, spec) })
	return spec, err
}

// OriginRaw returns where a job's effective values came from, encoded as
// a JobSpec holding only its origin map; nil when none was stored.
func (s *Store) OriginRaw(id int64) ([]byte, error) {
	var raw []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(specKey('o', id))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		raw, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read origin of job %d: %w", id, err)
	}
	return raw, nil
}

// SubmittedRaw returns a job's spec as submitted, encoded, without its
// environment (see EnvRef).
func (s *Store) SubmittedRaw(id int64) ([]byte, error) {
	var raw []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(specKey('s', id))
		if err != nil {
			return err
		}
		raw, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read spec of job %d: %w", id, err)
	}
	return raw, nil
}

// Env returns the environment stored under ref.
func (s *Store) Env(ref []byte) ([]string, error) {
	var env []string
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(envKey(ref))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) > 0 {
				env = strings.Split(string(v), "\x00")
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read environment %x: %w", ref, err)
	}
	return env, nil
}

// Spec returns a job's submitted and effective specs, also for a job whose
// live record is gone.
func (s *Store) Spec(id int64) (spec, eff *api.JobSpec, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		var err error
		if spec, err = getSpec(txn, specKey('s', id)); err != nil {
			return err
		}
		eff, err = getSpec(txn, specKey('f', id))
		return err
	})
	return spec, eff, err
}

// Events returns a job's event log in order; index -1 returns the logs of
// every element.
func (s *Store) Events(id int64, index int32) ([]*api.Event, error) {
	prefix := make([]byte, 9, 13)
	prefix[0] = 'e'
	binary.BigEndian.PutUint64(prefix[1:], uint64(id))
	if index >= 0 {
		prefix = binary.BigEndian.AppendUint32(prefix, uint32(index))
	}
	var evs []*api.Event
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			ev := &api.Event{}
			if err := it.Item().Value(func(v []byte) error { return proto.Unmarshal(v, ev) }); err != nil {
				return err
			}
			evs = append(evs, ev)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read events of job %d: %w", id, err)
	}
	return evs, nil
}
