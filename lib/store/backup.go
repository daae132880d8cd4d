package store

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	badger "github.com/dgraph-io/badger/v4"
)

// Backup writes a consistent copy of the whole store to w, while it is in
// use: Badger's backup stream, read at one snapshot (a point in time that
// includes every transaction committed before it began).
func (s *Store) Backup(w io.Writer) error {
	s.replacing.RLock()
	defer s.replacing.RUnlock()
	if _, err := s.db.Backup(w, 0); err != nil {
		return fmt.Errorf("back up the store: %w", err)
	}
	return nil
}

// Restore creates a store in dir (which must not exist) from a backup
// stream, with a job id ceiling of at least minCeiling (the ceiling of the
// store it replaces: job ids handed out after the backup was taken must
// not be handed out again). It returns the job records restored.
func Restore(r io.Reader, dir string, minCeiling int64) (int64, error) {
	if _, err := os.Stat(dir); err == nil {
		return 0, fmt.Errorf("restore into %s: it exists already", dir)
	}
	db, err := badger.Open(badgerOptions(dir))
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", dir, err)
	}
	if err := db.Load(r, 64); err != nil {
		db.Close()
		os.RemoveAll(dir)
		return 0, fmt.Errorf("read the backup: %w", err)
	}
	// A backup of an older release's store is upgraded here (the backup
	// file is the copy of the original); a newer one is refused.
	v, err := readSchema(db)
	if err == nil && v > SchemaVersion {
		err = &SchemaError{Dir: dir, Version: v}
	}
	if err == nil {
		err = upgradeFrom(db, v)
	}
	if err != nil {
		db.Close()
		os.RemoveAll(dir)
		return 0, fmt.Errorf("restore: %w", err)
	}
	if err := db.Close(); err != nil {
		return 0, err
	}
	st, err := Open(dir)
	if err != nil {
		return 0, err
	}
	c, err := st.IDCeiling()
	if err == nil && minCeiling > c {
		err = st.SetIDCeiling(minCeiling)
	} else if err == nil {
		err = writeCeilingFile(dir, c)
	}
	if err != nil {
		st.Close()
		return 0, err
	}
	jobs, _, _, err := countRecords(st.db)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return jobs, err
}

// RecordedCeiling returns the id ceiling recorded beside the store in dir
// (0 when none).
func RecordedCeiling(dir string) int64 {
	vals, ok, _ := readIntsFile(filepath.Join(dir, ceilingFile))
	if ok && len(vals) == 1 {
		return vals[0]
	}
	return 0
}
