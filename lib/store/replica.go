package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A controller candidate's store follows the replicated log (lib/replica),
// and that log, synced on every append, is the durable record: as etcd
// does with its backend, the store applies the log's entries without an
// fsync of its own, and records the index of the last entry applied in
// the same commit (ApplyReplicated). Badger writes each commit into its
// memory-mapped memtable log before the commit returns, so a crashed
// process loses nothing; what a power cut may take is a tail of commits,
// never one in part. At the next start the store is where that tail
// began, and its recorded index says so: the log is applied again from
// there. The log keeps entries back to the latest snapshot's index (and
// more), so Sync runs before a snapshot is taken, and the store is on
// disk at least up to any snapshot's index.
//
// Submissions go through the log one batch at a time, as they go to
// Badger on a single controller: what arrives while a batch is in the log
// waits and forms the next one. Each batch is one log entry, and each
// entry costs every candidate an append, a synced write and a store
// commit whatever its size (an fsync alone is about 110 us of CPU here),
// so on candidates that share a machine's cores the rate is bound by how
// many submissions an entry carries. With 32 clients on three candidates
// of one 2-core machine, up to 4 batches in the log at once gave entries
// of about 5 submissions and cost the leader 240-300 us and each follower
// 107-145 us of CPU per submission; one at a time gives entries of about
// 15, at 189 and 84 us (BenchmarkHA), and a lone submission waits for
// nothing either way. One at a time, the clients split into two groups
// that take turns; the committer's gather (store.go) merges them.

// The job id ceiling file (verify.go), which must never run ahead of the
// store, is written by Sync, with the ceiling as it was synced.

// OpenReplica opens the store of a controller candidate, whose commits are
// not synced (see above); lowSpace as OpenLowSpace.
func OpenReplica(dir string, lowSpace bool) (*Store, error) { return open(dir, lowSpace, true) }

// Sync puts everything committed so far on disk: Badger's logs, the
// memtable logs it has not yet written out as tables included, and then
// the job id ceiling file. A store opened synced needs none of it.
func (s *Store) Sync() error {
	if !s.unsynced {
		return nil
	}
	// The ceiling read first is one Badger holds: synced below.
	ceiling, err := s.IDCeiling()
	if err != nil {
		return err
	}
	if err := s.db.Sync(); err != nil {
		return fmt.Errorf("sync the store: %w", err)
	}
	// Badger's Sync covers the memtable being written; one it has
	// retired and not yet written out as a table was never synced.
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("sync the store: %w", err)
	}
	for _, e := range ents {
		if n := e.Name(); isLog(n) {
			if err := fsyncPath(filepath.Join(s.dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("sync the store: %w", err)
			}
		}
	}
	if err := fsyncPath(s.dir); err != nil {
		return fmt.Errorf("sync the store: %w", err)
	}
	if ceiling > 0 {
		return writeCeilingFile(s.dir, ceiling)
	}
	return nil
}

// fsyncPath syncs a file or a directory by its path (a memory-mapped
// file's written pages included).
func fsyncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
