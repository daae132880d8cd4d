package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/migrate"

	"xce/lib/atomicfile"
)

// The raft log and raft's stable state (current term, last vote) live in
// DIR/raft-wal, hashicorp/raft-wal's segment files: an append is one
// write and one fsync. raft-boltdb, which candidates used before, syncs
// twice per append (its data pages, then its meta page), and that second
// fsync was most of a replicated submission's added latency; raft-wal is
// the log store HashiCorp's own Consul now uses by default.
const (
	walDir   = "raft-wal"
	boltFile = "raft.db" // the log of candidates before raft-wal
)

// walSegmentSize is the size of one log segment file, allocated whole
// when it is made. A candidate keeps about SnapshotThreshold +
// TrailingLogs entries of at most a cycle's writes each: a few segments.
const walSegmentSize = 16 << 20

// walLog is a raft-wal log with its metadata store, which WAL.Close
// leaves open (raft-wal v0.4.0): its file lock would block the next open
// in the same process, a candidate restarted in place.
type walLog struct {
	*wal.WAL
	meta *metadb.BoltMetaDB
}

func openWAL(dir string, logger hclog.Logger) (*walLog, error) {
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(dir, wal.WithSegmentSize(walSegmentSize), wal.WithLogger(logger), wal.WithMetaStore(meta))
	if err != nil {
		meta.Close()
		return nil, err
	}
	return &walLog{WAL: w, meta: meta}, nil
}

// Close closes the log, then its metadata store.
func (l *walLog) Close() error {
	err := l.WAL.Close()
	if merr := l.meta.Close(); err == nil {
		err = merr
	}
	return err
}

// openLog opens (or makes) the candidate's log in dir. A candidate that
// ran with raft-boltdb has its log and stable state copied over first;
// the old file is kept as raft.db.migrated until an administrator
// removes it.
func openLog(dir string, logger hclog.Logger) (*walLog, error) {
	path := filepath.Join(dir, walDir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, boltFile)); err == nil {
			if err := migrateBolt(dir, logger); err != nil {
				return nil, fmt.Errorf("copy the raft log from %s to %s: %w", boltFile, walDir, err)
			}
		}
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, err
	}
	return openWAL(path, logger)
}

// migrateBolt copies raft.db's log and stable state into a new raft-wal
// directory. It builds the copy beside its final name and renames it
// into place, so a crash midway leaves raft.db alone and the next start
// copies again.
func migrateBolt(dir string, logger hclog.Logger) error {
	tmp := filepath.Join(dir, walDir+".copying")
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	src, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, boltFile)})
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := openWAL(tmp, logger)
	if err != nil {
		return err
	}
	ctx := context.Background()
	err = migrate.CopyLogs(ctx, dst, src, 1<<20, nil)
	if err == nil {
		err = migrate.CopyStable(ctx, dst, src, nil, nil, nil)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := atomicfile.SyncDir(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, walDir)); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(dir, boltFile), filepath.Join(dir, boltFile+".migrated")); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return err
	}
	last, _ := src.LastIndex()
	slog.Info("raft log moved to raft-wal; the old log is kept as raft.db.migrated", "dir", dir, "last_index", last)
	return nil
}
