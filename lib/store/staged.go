package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// A submission too large for one Badger transaction (an array of tens of
// thousands of elements, where max_array_size allows it) is written in
// stages, and a crash between them must not leave half of it behind:
//
//  1. a pending marker, m/pending/<id>, naming the key prefixes the
//     submission writes (its job records and events), in a transaction of
//     its own;
//  2. the body (the environment, job records and events), in as many
//     transactions as it takes;
//  3. the tail (the specs), with the marker's deletion, in one last
//     transaction, which is the submission's commit: Load finds no job
//     without its specs.
//
// Open removes what a marker names, and the marker, before anything reads
// the store (sweepPending): a submission a crash interrupted is not
// there, as its bsub, which got no reply, was told. Where the store is
// replicated, the entry's applied index goes in the last transaction, so
// the log applies the entry again after the sweep.
//
// The marker travels inside the batch as its first mutation (a set) and
// its last (a deletion), with the tail's length in its value: the
// replicated log carries plain key writes as before, and a batch that
// fits one transaction applies them at once, leaving only the marker's
// tombstone. Only submissions that might not fit carry one (stage).

var pendingPrefix = []byte("m/pending/")

func pendingKey(id int64) []byte {
	return binary.BigEndian.AppendUint64(bytes.Clone(pendingPrefix), uint64(id))
}

// pendingID is the job id a marker's key names; ok is false for a key
// that is not one.
func pendingID(key []byte) (id int64, ok bool) {
	if len(key) != len(pendingPrefix)+8 || !bytes.HasPrefix(key, pendingPrefix) {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(key[len(pendingPrefix):])), true
}

// encodePending lays a marker's value out: the tail's length, then each
// prefix, length-prefixed.
func encodePending(tail int, prefixes ...[]byte) []byte {
	v := binary.AppendUvarint(nil, uint64(tail))
	for _, p := range prefixes {
		v = binary.AppendUvarint(v, uint64(len(p)))
		v = append(v, p...)
	}
	return v
}

var errBadPending = errors.New("malformed pending marker")

// decodePending reverses encodePending.
func decodePending(v []byte) (tail int, prefixes [][]byte, err error) {
	t, n := binary.Uvarint(v)
	if n <= 0 || t > uint64(len(v)) {
		return 0, nil, errBadPending
	}
	v = v[n:]
	for len(v) > 0 {
		l, n := binary.Uvarint(v)
		// An empty prefix would name the whole store.
		if n <= 0 || l == 0 || l > uint64(len(v)-n) {
			return 0, nil, errBadPending
		}
		prefixes = append(prefixes, v[n:n+int(l)])
		v = v[n+int(l):]
	}
	return int(t), prefixes, nil
}

// stagedTail returns, for mutations laid out as a staged submission
// (a marker set first, its deletion last), where the tail begins: the
// index of the first mutation of the last transaction. ok is false for
// any other batch.
func stagedTail(muts []mutation) (start int, ok bool) {
	if len(muts) < 2 {
		return 0, false
	}
	first, last := muts[0], muts[len(muts)-1]
	if first.del || !bytes.HasPrefix(first.key, pendingPrefix) || !last.del || !bytes.Equal(last.key, first.key) {
		return 0, false
	}
	tail, _, err := decodePending(first.value)
	// The tail ends with the marker's deletion and leaves the marker's
	// own transaction out.
	if err != nil || tail < 1 || tail > len(muts)-1 {
		return 0, false
	}
	return len(muts) - tail, true
}

// commitStaged writes a staged submission's mutations (see stagedTail) in
// the three steps above; index, when set, is the replicated log's,
// recorded with the tail. When a step fails after the marker is written,
// what was written is removed at once if it can be, else at the next Open.
func (s *Store) commitStaged(muts []mutation, tailStart int, index uint64) error {
	if err := s.db.Update(func(txn *badger.Txn) error { return apply(txn, muts[0]) }); err != nil {
		return fmt.Errorf("mark the submission pending: %w", err)
	}
	err := func() error {
		wb := s.db.NewWriteBatch()
		defer wb.Cancel()
		for _, m := range muts[1:tailStart] {
			if err := apply(wb, m); err != nil {
				return err
			}
		}
		if err := wb.Flush(); err != nil {
			return err
		}
		return s.db.Update(func(txn *badger.Txn) error {
			for _, m := range muts[tailStart:] {
				if err := apply(txn, m); err != nil {
					return err
				}
			}
			return setApplied(txn, index)
		})
	}()
	if err != nil {
		removePending(s.db, muts[0].key, muts[0].value)
	}
	return err
}

// sweepPending removes what staged submissions a crash interrupted left
// behind, and returns the job ids it removed.
func sweepPending(db *badger.DB) ([]int64, error) {
	type marker struct{ key, value []byte }
	var found []marker
	err := db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: pendingPrefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			found = append(found, marker{it.Item().KeyCopy(nil), v})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find unfinished submissions: %w", err)
	}
	var ids []int64
	for _, m := range found {
		if err := removePending(db, m.key, m.value); err != nil {
			return ids, err
		}
		if id, ok := pendingID(m.key); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// removePending deletes every key under the prefixes a marker names, then
// the marker: a crash meanwhile leaves the marker for the next Open.
func removePending(db *badger.DB, key, value []byte) error {
	_, prefixes, err := decodePending(value)
	if err != nil {
		return fmt.Errorf("%q: %w", key, err)
	}
	var dead [][]byte
	err = db.View(func(txn *badger.Txn) error {
		for _, prefix := range prefixes {
			it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: prefix})
			for it.Rewind(); it.Valid(); it.Next() {
				dead = append(dead, it.Item().KeyCopy(nil))
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("find the records of an unfinished submission: %w", err)
	}
	wb := db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range dead {
		if err := wb.Delete(k); err != nil {
			return err
		}
	}
	err = wb.Flush()
	if err == nil {
		err = db.Update(func(txn *badger.Txn) error { return txn.Delete(key) })
	}
	if err != nil {
		return fmt.Errorf("remove an unfinished submission: %w", err)
	}
	return nil
}
