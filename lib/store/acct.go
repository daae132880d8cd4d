package store

import (
	"bytes"
	"encoding/binary"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// Accounting records (bacct): one per finish of a job or array element,
// an api.Job that carries everything bacct prints and nothing it does not
// (no environment, no live fields), kept for the cluster's retention after
// the live record is forgotten. The controller writes them in batches when
// it forgets finished jobs (AddAcct), not in the transaction that records
// a job's end: that one stays as small as it was. Only a finished job sent
// back to pending (brequeue) has its record written with that change
// (Change.Acct), since the change overwrites the job's finish. The job's
// submitted spec is copied into its record, encoded as the store holds it.
//
//	a<end:8><id:8><index:4>  the record, by end time: a -C range is one
//	                         seek, and pruning old records reads keys only
//	A<id:8><index:4><end:8>  empty: the records of a job, by id
//
// A job that finishes again after a requeue gets a second record, as LSF
// logs a second JOB_FINISH to lsb.acct.

const (
	acctPrefix  = 'a'
	acctIDIndex = 'A'
	acctKeyLen  = 21
)

func acctKey(end, id int64, index int32) []byte {
	k := make([]byte, acctKeyLen)
	k[0] = acctPrefix
	binary.BigEndian.PutUint64(k[1:], uint64(end))
	binary.BigEndian.PutUint64(k[9:], uint64(id))
	binary.BigEndian.PutUint32(k[17:], uint32(index))
	return k
}

func acctIndexKey(id int64, index int32, end int64) []byte {
	k := make([]byte, acctKeyLen)
	k[0] = acctIDIndex
	binary.BigEndian.PutUint64(k[1:], uint64(id))
	binary.BigEndian.PutUint32(k[9:], uint32(index))
	binary.BigEndian.PutUint64(k[13:], uint64(end))
	return k
}

// acctIndexFor turns a record key into its index key.
func acctIndexFor(k []byte) []byte {
	end := int64(binary.BigEndian.Uint64(k[1:]))
	id := int64(binary.BigEndian.Uint64(k[9:]))
	index := int32(binary.BigEndian.Uint32(k[17:]))
	return acctIndexKey(id, index, end)
}

// stageAcct adds an accounting record to b, with the job's submitted
// spec as the store (txn) or b holds it (the record's own Spec must be nil).
func stageAcct(txn *badger.Txn, b *batch, rec *api.Job) error {
	if rec.Spec != nil {
		return fmt.Errorf("accounting record of job %d: it carries its submitted spec", rec.JobId)
	}
	rb, err := api.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode accounting record of job %d: %w", rec.JobId, err)
	}
	spec, ok, err := b.get(txn, specKey('s', rec.JobId))
	if err != nil {
		return fmt.Errorf("read spec of job %d: %w", rec.JobId, err)
	}
	if ok {
		// Job.spec is field 3: an encoded message appended as that field
		// decodes as if it had been set. (No submitted spec: the record's
		// effective values stand in.)
		rb = protowire.AppendTag(rb, 3, protowire.BytesType)
		rb = protowire.AppendBytes(rb, spec)
	}
	b.Set(acctKey(rec.EndTime, rec.JobId, rec.ArrayIndex), rb)
	b.setRead(acctIndexKey(rec.JobId, rec.ArrayIndex, rec.EndTime), nil)
	return nil
}

// acctBatch bounds the records one AddAcct or PruneAcct transaction holds.
const acctBatch = 1000

// AddAcct stores the accounting records that are not stored yet (a record
// is known by its job, element and end time), durably, and returns how
// many it wrote. The controller calls it for the finished jobs it is about
// to forget; one that was stored before a crash is not stored twice.
func (s *Store) AddAcct(recs []*api.Job) (int, error) {
	added := 0
	for start := 0; start < len(recs); start += acctBatch {
		part := recs[start:min(start+acctBatch, len(recs))]
		n := 0
		err := func() error {
			b := &batch{}
			txn := s.db.NewTransaction(false)
			defer txn.Discard()
			for _, r := range part {
				_, ok, err := b.get(txn, acctIndexKey(r.JobId, r.ArrayIndex, r.EndTime))
				if err != nil {
					return fmt.Errorf("look up accounting record of job %d: %w", r.JobId, err)
				}
				if ok {
					continue
				}
				if err := stageAcct(txn, b, r); err != nil {
					return err
				}
				n++
			}
			return s.write(b)
		}()
		if err != nil {
			return added, err
		}
		added += n
	}
	return added, nil
}

// AcctOf returns the accounting records of a job (index -1: of every
// element), oldest end first within an element.
func (s *Store) AcctOf(id int64, index int32) ([]*api.Job, error) {
	prefix := make([]byte, 9, 13)
	prefix[0] = acctIDIndex
	binary.BigEndian.PutUint64(prefix[1:], uint64(id))
	if index >= 0 {
		prefix = binary.BigEndian.AppendUint32(prefix, uint32(index))
	}
	var out []*api.Job
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			k := it.Item().Key()
			end := int64(binary.BigEndian.Uint64(k[13:]))
			idx := int32(binary.BigEndian.Uint32(k[9:]))
			item, err := txn.Get(acctKey(end, id, idx))
			if err != nil {
				return fmt.Errorf("read accounting record of job %d: %w", id, err)
			}
			j := &api.Job{}
			if err := item.Value(func(v []byte) error { return proto.Unmarshal(v, j) }); err != nil {
				return fmt.Errorf("decode accounting record of job %d: %w", id, err)
			}
			out = append(out, j)
		}
		return nil
	})
	return out, err
}

// decodeAcct decodes a record; without spec, its submitted spec (the
// largest part, which the SUMMARY does not need) is skipped unread.
func decodeAcct(v []byte, spec bool, j *api.Job) error {
	if !spec {
		// Job.spec is field 3; keep every other field.
		var kept []byte
		for rest := v; len(rest) > 0; {
			num, typ, n := protowire.ConsumeTag(rest)
			if n < 0 {
				return protowire.ParseError(n)
			}
			m := protowire.ConsumeFieldValue(num, typ, rest[n:])
			if m < 0 {
				return protowire.ParseError(m)
			}
			if num == 3 {
				if kept == nil {
					kept = make([]byte, 0, len(v))
					kept = append(kept, v[:len(v)-len(rest)]...)
				}
			} else if kept != nil {
				kept = append(kept, rest[:n+m]...)
			}
			rest = rest[n+m:]
		}
		if kept != nil {
			v = kept
		}
	}
	return proto.Unmarshal(v, j)
}

// ScanAcct reads accounting records in the order the jobs ended, those
// that ended from from to to (unix nanoseconds, both included; to 0 means
// no end), starting at cursor (nil: at the first); without spec, the
// records come without their submitted spec. It hands each record to fn,
// which says whether to stop after it (a page is full), and returns the
// cursor to go on from, nil when no record is left. Each call is one short
// read transaction: a caller that sends pages between calls holds none
// while it waits. A record that does not decode is an error.
func (s *Store) ScanAcct(cursor []byte, from, to int64, spec bool, fn func(*api.Job) bool) ([]byte, error) {
	var bad error
	next, err := scanAcct(s.db, cursor, from, to, spec, func(j *api.Job, err error) bool {
		if err != nil {
			bad = err
			return true
		}
		return fn(j)
	})
	if err == nil && bad != nil {
		err = fmt.Errorf("read accounting records: %w", bad)
	}
	if err != nil {
		return nil, err
	}
	return next, nil
}

// scanAcct is ScanAcct on db; a record that does not decode comes to fn
// as err (naming its key), and fn says whether to stop there.
func scanAcct(db *badger.DB, cursor []byte, from, to int64, spec bool, fn func(*api.Job, error) bool) ([]byte, error) {
	start := acctKey(max(from, 0), 0, 0)
	if cursor != nil && bytes.Compare(cursor, start) > 0 {
		start = cursor
	}
	var limit []byte // the first key past the range; nil = the prefix's end
	if to > 0 && to < 1<<63-1 {
		limit = acctKey(to+1, 0, 0)
	}
	var next []byte
	err := db.View(func(txn *badger.Txn) error {
		// Records are small and kept in the LSM tree with their keys:
		// prefetching values (a goroutine each) would only cost.
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{acctPrefix}})
		defer it.Close()
		for it.Seek(start); it.ValidForPrefix([]byte{acctPrefix}); it.Next() {
			item := it.Item()
			k := item.Key()
			if limit != nil && bytes.Compare(k, limit) >= 0 {
				return nil
			}
			// A record that cannot be read ends the scan; one that reads
			// but does not decode is fn's to judge.
			j := &api.Job{}
			var bad error
			if err := item.Value(func(v []byte) error { bad = decodeAcct(v, spec, j); return nil }); err != nil {
				return fmt.Errorf("read accounting record %x: %w", k, err)
			}
			if bad != nil {
				j, bad = nil, fmt.Errorf("decode accounting record %x: %w", k, bad)
			}
			if fn(j, bad) {
				// Resume just after this key.
				next = append(item.KeyCopy(nil), 0)
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read accounting records: %w", err)
	}
	return next, nil
}

// PruneAcct deletes the accounting records of jobs that ended before
// before (unix nanoseconds) and returns how many it deleted. It reads
// keys only.
func (s *Store) PruneAcct(before int64) (int, error) {
	limit := acctKey(before, 0, 0)
	var old [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{acctPrefix}})
		defer it.Close()
		for it.Seek([]byte{acctPrefix}); it.ValidForPrefix([]byte{acctPrefix}); it.Next() {
			k := it.Item().Key()
			if bytes.Compare(k, limit) >= 0 {
				break
			}
			old = append(old, it.Item().KeyCopy(nil))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("find old accounting records: %w", err)
	}
	b := &batch{inParts: true}
	for _, k := range old {
		b.Delete(k)
		b.Delete(acctIndexFor(k))
	}
	if err := s.write(b); err != nil {
		return 0, fmt.Errorf("prune accounting records: %w", err)
	}
	ids := map[int64]bool{}
	for _, k := range old {
		ids[int64(binary.BigEndian.Uint64(k[9:]))] = true
	}
	if err := s.dropJobs(ids); err != nil {
		return len(old), err
	}
	return len(old), nil
}

// dropJobs deletes the specs and event logs of the jobs among ids that
// are gone for good: no live record (j) and no accounting record left.
// Without this a cluster's store would grow by every job it ever ran.
func (s *Store) dropJobs(ids map[int64]bool) error {
	var dead [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		has := func(prefix []byte) bool {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
			defer it.Close()
			it.Seek(prefix)
			return it.ValidForPrefix(prefix)
		}
		for id := range ids {
			jobs := specKey('j', id)
			index := specKey(acctIDIndex, id)
			if has(jobs) || has(index) {
				continue
			}
			dead = append(dead, specKey('s', id), specKey('f', id), specKey('o', id))
			events := specKey('e', id)
			it := txn.NewIterator(badger.IteratorOptions{Prefix: events})
			for it.Seek(events); it.ValidForPrefix(events); it.Next() {
				dead = append(dead, it.Item().KeyCopy(nil))
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("find the specs and events of pruned jobs: %w", err)
	}
	b := &batch{inParts: true}
	for _, k := range dead {
		b.Delete(k)
	}
	if err := s.write(b); err != nil {
		return fmt.Errorf("delete the specs and events of pruned jobs: %w", err)
	}
	return nil
}
