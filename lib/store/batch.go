package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// A batch is the writes of one change to the store, applied all at once:
// to Badger directly, or, where the store is replicated (SetReplicator),
// through the replicated log to every candidate controller's store. Every
// write function builds one; the replicated log therefore carries plain
// key writes, which apply the same way on every candidate whatever the
// controller's version of the rules that produced them.
type batch struct {
	muts []mutation
	// pos: key → its last mutation, for the keys the batch itself reads
	// back (those set with setRead): most keys are only written, and
	// indexing them all would cost a map entry each.
	pos map[string]int
	// inParts: the batch need not apply atomically (deletions of records
	// that are gone already in meaning), so one too large for a Badger
	// transaction is written in parts.
	inParts bool
}

type mutation struct {
	key, value []byte
	del        bool
}

// Set implements setter.
func (b *batch) Set(k, v []byte) error {
	b.muts = append(b.muts, mutation{key: k, value: v})
	return nil
}

// setRead sets k, which a later read in the same batch (get) may ask for.
func (b *batch) setRead(k, v []byte) {
	if b.pos == nil {
		b.pos = map[string]int{}
	}
	b.pos[string(k)] = len(b.muts)
	b.muts = append(b.muts, mutation{key: k, value: v})
}

// Delete removes k.
func (b *batch) Delete(k []byte) error {
	b.muts = append(b.muts, mutation{key: k, del: true})
	return nil
}

// lookup returns what the batch itself wrote to k with setRead: found
// reports whether it did.
func (b *batch) lookup(k []byte) (value []byte, found, del bool) {
	i, ok := b.pos[string(k)]
	if !ok {
		return nil, false, false
	}
	return b.muts[i].value, true, b.muts[i].del
}

// get reads k as it will be once the batch is applied: the batch's own
// write (setRead's), else the store's (txn, a read transaction).
func (b *batch) get(txn *badger.Txn, k []byte) (value []byte, ok bool, err error) {
	if v, found, del := b.lookup(k); found {
		return v, !del, nil
	}
	item, err := txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v, err := item.ValueCopy(nil)
	return v, err == nil, err
}

// has is get without the value: whether k is set (2 KB an environment
// copied, at each submission, only to learn that it is there).
func (b *batch) has(txn *badger.Txn, k []byte) (bool, error) {
	if _, found, del := b.lookup(k); found {
		return !del, nil
	}
	_, err := txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// encodeBatch lays a batch out for the replicated log: a flags byte (1:
// in parts), the count, then per mutation a flag (0 set, 1 delete), the
// key and the value, each length-prefixed.
func encodeBatch(b *batch) []byte {
	n := 1 + binary.MaxVarintLen64
	for _, m := range b.muts {
		n += 1 + 2*binary.MaxVarintLen64 + len(m.key) + len(m.value)
	}
	out := make([]byte, 0, n)
	flags := byte(0)
	if b.inParts {
		flags = 1
	}
	out = append(out, flags)
	out = binary.AppendUvarint(out, uint64(len(b.muts)))
	for _, m := range b.muts {
		flag := byte(0)
		if m.del {
			flag = 1
		}
		out = append(out, flag)
		out = binary.AppendUvarint(out, uint64(len(m.key)))
		out = append(out, m.key...)
		out = binary.AppendUvarint(out, uint64(len(m.value)))
		out = append(out, m.value...)
	}
	return out
}

var errBadBatch = errors.New("malformed store batch")

// An encoded batch (a replicated log entry) begins with its flags, 0 or 1:
// that is log entry format 1. A later format begins with its number, 2 or
// more, so that this release refuses it by name rather than misread it.
const logFormat = 1

// LogFormatError is a replicated log entry of a later format than this
// binary's: a leader of a later release wrote it.
type LogFormatError struct{ Format byte }

func (e *LogFormatError) Error() string {
	return fmt.Sprintf("replicated log entry format %d is newer than this xced (%d): the leader runs a later release; upgrade this candidate", e.Format, logFormat)
}

// decodeBatch reverses encodeBatch; the mutations alias data.
func decodeBatch(data []byte) (*batch, error) {
	inParts, count, data, err := batchHeader(data)
	if err != nil {
		return nil, err
	}
	muts := make([]mutation, 0, count)
	for range count {
		var m mutation
		if m, data, err = nextMutation(data); err != nil {
			return nil, err
		}
		muts = append(muts, m)
	}
	if len(data) != 0 {
		return nil, errBadBatch
	}
	return &batch{muts: muts, inParts: inParts}, nil
}

// batchHeader reads an encoded batch's header: whether it is one of a
// batch's parts, how many mutations follow, and the rest of data.
func batchHeader(data []byte) (inParts bool, count uint64, rest []byte, err error) {
	if len(data) == 0 {
		return false, 0, nil, errBadBatch
	}
	if data[0] > 1 {
		return false, 0, nil, &LogFormatError{Format: data[0]}
	}
	inParts = data[0] == 1
	data = data[1:]
	count, n := binary.Uvarint(data)
	if n <= 0 || count > uint64(len(data)) {
		return false, 0, nil, errBadBatch
	}
	return inParts, count, data[n:], nil
}

// nextMutation reads one mutation of an encoded batch (its key and value
// are data's own bytes) and returns the rest of data.
func nextMutation(data []byte) (m mutation, rest []byte, err error) {
	if len(data) == 0 || data[0] > 1 {
		return m, nil, errBadBatch
	}
	m.del = data[0] == 1
	data = data[1:]
	field := func() ([]byte, error) {
		l, n := binary.Uvarint(data)
		if n <= 0 || l > uint64(len(data)-n) {
			return nil, errBadBatch
		}
		f := data[n : n+int(l) : n+int(l)]
		data = data[n+int(l):]
		return f, nil
	}
	if m.key, err = field(); err != nil {
		return m, nil, err
	}
	if m.value, err = field(); err != nil {
		return m, nil, err
	}
	return m, data, nil
}

// A Replicator sends an encoded batch through the replicated log and
// returns once it is committed there and applied to this store (through
// ApplyReplicated), or has failed: when it fails, the batch may or may not
// be applied later, as a leader that lost its office cannot know.
type Replicator func(data []byte) error

// SetReplicator makes every write go through r; nil writes to Badger
// directly (one controller, the default).
func (s *Store) SetReplicator(r Replicator) {
	s.replMu.Lock()
	s.repl = r
	s.replMu.Unlock()
}

func (s *Store) replicator() Replicator {
	s.replMu.RLock()
	defer s.replMu.RUnlock()
	return s.repl
}

// write applies a batch: directly, or through the replicated log.
func (s *Store) write(b *batch) error {
	if len(b.muts) == 0 {
		return nil
	}
	if f := s.observe.Load(); f != nil {
		start := time.Now()
		defer func() { (*f)(time.Since(start)) }()
	}
	if r := s.replicator(); r != nil {
		return r(encodeBatch(b))
	}
	return s.commit(b.muts, 0, b.inParts)
}

// ObserveCommits has f told how long each durable write took (synced,
// and replicated to a quorum under HA), for metrics; nil: no one.
func (s *Store) ObserveCommits(f func(time.Duration)) {
	if f == nil {
		s.observe.Store(nil)
		return
	}
	s.observe.Store(&f)
}

// Size is the store's size on disk: Badger's LSM tree and its value log.
func (s *Store) Size() (lsm, vlog int64) { return s.db.Size() }

var keyApplied = []byte("m/raft/applied")

// Entry is one entry of the replicated log: its index and its batch.
type Entry struct {
	Index uint64
	Data  []byte
}

// ApplyReplicated applies entries of the replicated log in order, in one
// commit, and returns each entry's outcome. Entries at or below the index
// already applied are skipped, so a log replayed after a restart is
// applied once; the last index is recorded in the same commit as the
// writes. An entry that cannot be applied (too large for one transaction)
// fails the same way on every candidate: it is skipped, with its error.
// The error is for what leaves the store unknown (a disk that fails):
// this store must not go on applying.
func (s *Store) ApplyReplicated(entries []Entry) (outcomes []error, err error) {
	outcomes = make([]error, len(entries))
	var muts []mutation
	var last uint64
	inParts := true
	for i, e := range entries {
		if e.Index <= s.Applied() {
			continue
		}
		b, err := decodeBatch(e.Data)
		var later *LogFormatError
		if errors.As(err, &later) {
			// Skipping it would leave this store behind the others.
			return outcomes, fmt.Errorf("log entry %d: %w", e.Index, err)
		}
		if err != nil {
			outcomes[i] = fmt.Errorf("log entry %d: %w", e.Index, err)
			continue
		}
		muts = append(muts, b.muts...)
		inParts = inParts && b.inParts
		last = e.Index
	}
	if last == 0 {
		return outcomes, nil
	}
	err = s.commit(muts, last, inParts)
	if !errors.Is(err, badger.ErrTxnTooBig) {
		return outcomes, err
	}
	if len(entries) > 1 {
		for i, e := range entries {
			one, err := s.ApplyReplicated([]Entry{e})
			if err != nil {
				return outcomes, err
			}
			if outcomes[i] == nil {
				outcomes[i] = one[0]
			}
		}
		return outcomes, nil
	}
	outcomes[0] = fmt.Errorf("log entry %d: %w", last, err)
	return outcomes, s.commit(nil, last, false)
}

// Applied is the index of the last replicated log entry applied (0: none,
// or a store that is not replicated).
func (s *Store) Applied() uint64 {
	s.ceilMu.Lock()
	defer s.ceilMu.Unlock()
	return s.applied
}

// commit writes mutations to Badger durably, with the replicated log's
// index when applied from it. A change of the job id ceiling is mirrored
// in the ceiling file beside the store (verify.go): written after the
// store when the ceiling rises and before it when it falls, so that a
// crash between the two never leaves the file above the store.
func (s *Store) commit(muts []mutation, index uint64, inParts bool) error {
	s.ceilMu.Lock()
	defer s.ceilMu.Unlock()
	ceiling, ceilingSet := int64(0), false
	for _, m := range muts {
		if string(m.key) == string(keyIDCeiling) && !m.del && len(m.value) == 8 {
			ceiling, ceilingSet = int64(binary.BigEndian.Uint64(m.value)), true
		}
	}
	if ceilingSet && ceiling < s.ceiling {
		if err := writeCeilingFile(s.dir, ceiling); err != nil {
			return err
		}
	}
	err := func() error {
		txn := s.db.NewTransaction(true)
		defer txn.Discard()
		for _, m := range muts {
			if err := apply(txn, m); err != nil {
				return err
			}
		}
		if err := setApplied(txn, index); err != nil {
			return err
		}
		return txn.Commit()
	}()
	if errors.Is(err, badger.ErrTxnTooBig) {
		if tailStart, staged := stagedTail(muts); staged && !inParts {
			err = s.commitStaged(muts, tailStart, index)
		} else if inParts {
			err = s.commitAnyOrder(muts, index)
		}
	}
	if err != nil {
		return err
	}
	if index > 0 {
		s.applied = index
	}
	// A replica's commit is not on disk yet: its ceiling file follows
	// at the next Sync, so that it never runs ahead of the store.
	if ceilingSet && ceiling >= s.ceiling && !s.unsynced {
		if err := writeCeilingFile(s.dir, ceiling); err != nil {
			return err
		}
	}
	if ceilingSet {
		s.ceiling = ceiling
	}
	return nil
}

// commitAnyOrder writes mutations too many for one transaction that need
// not apply at once (a purge of many old records) in parts, the applied
// index last, so that a crash midway leaves the entry to be applied again.
func (s *Store) commitAnyOrder(muts []mutation, index uint64) error {
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, m := range muts {
		if err := apply(wb, m); err != nil {
			return err
		}
	}
	if err := wb.Flush(); err != nil || index == 0 {
		return err
	}
	return s.db.Update(func(txn *badger.Txn) error { return setApplied(txn, index) })
}

// setApplied records in txn that the replicated log is applied up to
// index (nothing for 0: a store that is not replicated).
func setApplied(txn *badger.Txn, index uint64) error {
	if index == 0 {
		return nil
	}
	return txn.Set(keyApplied, binary.BigEndian.AppendUint64(nil, index))
}

type writer interface {
	Set(k, v []byte) error
	Delete(k []byte) error
}

func apply(w writer, m mutation) error {
	if m.del {
		return w.Delete(m.key)
	}
	return w.Set(m.key, m.value)
}

// ReplaceWith replaces the whole store by a backup stream (Backup's): a
// replicated store that fell too far behind is sent the leader's
// snapshot. The applied index and the id ceiling are those of the
// snapshot, the ceiling never lowered.
func (s *Store) ReplaceWith(r io.Reader) error {
	s.replacing.Lock()
	defer s.replacing.Unlock()
	s.ceilMu.Lock()
	defer s.ceilMu.Unlock()
	if err := s.db.DropAll(); err != nil {
		return fmt.Errorf("replace the store: %w", err)
	}
	if err := s.db.Load(r, 64); err != nil {
		return fmt.Errorf("replace the store: %w", err)
	}
	// A leader of another release sent it: an older layout is upgraded
	// (the leader keeps the original), a newer one cannot be read.
	v, err := readSchema(s.db)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return fmt.Errorf("replace the store with the leader's copy: %w", &SchemaError{Dir: s.dir, Version: v})
	}
	if err := upgradeFrom(s.db, v); err != nil {
		return err
	}
	applied, err := readApplied(s.db)
	if err != nil {
		return err
	}
	c, err := readIDCeiling(s.db)
	if err != nil {
		return err
	}
	s.applied = applied
	if c < s.ceiling {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(s.ceiling))
		if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(keyIDCeiling, b[:]) }); err != nil {
			return err
		}
		c = s.ceiling
	}
	s.ceiling = c
	if s.unsynced {
		// The snapshot replaces what the log did: on disk before raft
		// records that it is applied.
		return s.Sync()
	}
	return writeCeilingFile(s.dir, c)
}

func readApplied(db *badger.DB) (uint64, error) {
	v, err := readUint64(db, keyApplied)
	if err != nil {
		return 0, fmt.Errorf("read the applied log index: %w", err)
	}
	return v, nil
}

// BatchValue returns the value an encoded batch (a replicated log entry)
// sets key to, if it sets it. Every candidate asks it of every entry
// (lib/replica's identity check), so it walks the encoding in place
// rather than decode the batch, which the apply does once more.
func BatchValue(data, key []byte) ([]byte, bool) {
	_, count, data, err := batchHeader(data)
	if err != nil {
		return nil, false
	}
	var v []byte
	found := false
	for range count {
		var m mutation
		if m, data, err = nextMutation(data); err != nil {
			return nil, false
		}
		if string(m.key) == string(key) {
			v, found = m.value, !m.del
		}
	}
	if len(data) != 0 {
		return nil, false
	}
	return v, found
}

// Digest writes every key and value of the store, in key order, to w
// (a hash), except keys under skip and the schema version, which says
// how a store is laid out, not what it holds (candidates of a rolling
// upgrade hold the same state in stores upgraded at different times).
func (s *Store) Digest(w io.Writer, skip []byte) error {
	s.replacing.RLock()
	defer s.replacing.RUnlock()
	return s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		var n [binary.MaxVarintLen64]byte
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			k := item.Key()
			if len(skip) > 0 && len(k) >= len(skip) && string(k[:len(skip)]) == string(skip) || string(k) == string(keySchema) {
				continue
			}
			w.Write(n[:binary.PutUvarint(n[:], uint64(len(k)))])
			w.Write(k)
			if err := item.Value(func(v []byte) error {
				w.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))])
				_, err := w.Write(v)
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	})
}
