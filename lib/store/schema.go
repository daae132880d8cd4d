package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"xce/lib/atomicfile"
)

// The store's schema version: how its keys and values are laid out (the
// layout in store.go's doc comment). It is recorded under m/schema; a
// store without the record is version 1, the layout before the record
// existed. Open upgrades an older store in place, after writing a backup
// beside it; it refuses a store newer than this binary, which could not
// read it correctly.
//
// To change the layout: raise SchemaVersion and add the step from the
// version before it to upgrades. (A View of a store directory cannot
// upgrade, and reads an older store as this layout: see openView.)
const SchemaVersion = 2

var keySchema = []byte("m/schema")

// upgrades[v] turns a version v store into a version v+1 one, in one
// transaction's worth of writes or in several: Open has kept a backup.
var upgrades = map[uint64]func(db *badger.DB) error{
	// 1 -> 2: the same layout, with the version recorded.
	1: func(*badger.DB) error { return nil },
}

// SchemaError is a store whose schema version this binary cannot use.
type SchemaError struct {
	Dir     string
	Version uint64 // the store's
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("store schema version %d is newer than this xced (%d): the store %s was written by a later release; run that release (or a later one), or restore a backup taken before the upgrade with `xced store restore`", e.Version, SchemaVersion, e.Dir)
}

// readSchema returns the store's schema version (1 when unrecorded).
func readSchema(db *badger.DB) (uint64, error) {
	v, err := readUint64(db, keySchema)
	if err != nil {
		return 0, fmt.Errorf("read the store's schema version: %w", err)
	}
	if v == 0 {
		return 1, nil
	}
	return v, nil
}

func writeSchema(db *badger.DB, v uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set(keySchema, b[:]) }); err != nil {
		return fmt.Errorf("record the store's schema version: %w", err)
	}
	return nil
}

// upgradeSchema brings an opened store to SchemaVersion. A new store is
// only stamped; an older one is backed up beside dir first (a file
// `xced store restore` takes), then upgraded step by step. lowSpace: the
// disk has no room for the backup, so an older store is refused.
func upgradeSchema(dir string, db *badger.DB, isNew, lowSpace bool) error {
	if isNew {
		return writeSchema(db, SchemaVersion)
	}
	v, err := readSchema(db)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return &SchemaError{Dir: dir, Version: v}
	}
	if v == SchemaVersion {
		return nil
	}
	if lowSpace {
		return fmt.Errorf("the store %s (schema version %d) must be upgraded to version %d, which keeps a backup of it first, and its disk is below the free-space floor: free space on that disk and start xced again", dir, v, SchemaVersion)
	}
	backup, err := backupBeside(dir, db, v)
	if err != nil {
		return err
	}
	slog.Info("upgrading the store's schema; a backup of it is kept", "store", dir, "from", v, "to", SchemaVersion, "backup", backup)
	return upgradeFrom(db, v)
}

// upgradeFrom runs the upgrade steps from version v on and records the
// new version.
func upgradeFrom(db *badger.DB, v uint64) error {
	for ; v < SchemaVersion; v++ {
		step := upgrades[v]
		if step == nil {
			return fmt.Errorf("no upgrade of the store's schema from version %d", v)
		}
		if err := step(db); err != nil {
			return fmt.Errorf("upgrade the store's schema from version %d to %d: %w", v, v+1, err)
		}
		if err := writeSchema(db, v+1); err != nil {
			return err
		}
	}
	return nil
}

// backupBeside writes a backup of the store in dir (the stream `xced
// store backup` writes) to DIR.schemaV-backup-TIME beside it, durably.
func backupBeside(dir string, db *badger.DB, v uint64) (string, error) {
	path := fmt.Sprintf("%s.schema%d-backup-%s", filepath.Clean(dir), v, time.Now().Format("20060102-150405"))
	err := atomicfile.WriteFunc(path, 0o600, true, func(w io.Writer) error {
		_, err := db.Backup(w, 0)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("back up the store before upgrading it: %w", err)
	}
	return path, atomicfile.SyncDir(filepath.Dir(path))
}

// isNewStore says whether dir holds no Badger database yet.
func isNewStore(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, badger.ManifestFilename))
	return errors.Is(err, os.ErrNotExist)
}
