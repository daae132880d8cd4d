package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"
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
	// A backup of an older release's store is upgraded here (the backup
	// file is the copy of the original); a newer one is refused.
	if err := loadBackup(r, dir, badgerOptions(dir), upgradeBackup); err != nil {
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

// upgradeBackup upgrades a restored backup of an older release's store,
// and refuses a newer one.
func upgradeBackup(db *badger.DB) error {
	v, err := readSchema(db)
	if err == nil && v > SchemaVersion {
		err = &SchemaError{Dir: db.Opts().Dir, Version: v}
	}
	if err == nil {
		err = upgradeFrom(db, v)
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

// loadBackup creates a Badger database in dir, with opts, from a backup
// stream, and runs then on it; on failure it removes dir.
func loadBackup(r io.Reader, dir string, opts badger.Options, then func(*badger.DB) error) error {
	// A stream that is not a backup is found out before a database is
	// made for it: its first list is read and checked first.
	c := &checkedBackup{r: bufio.NewReaderSize(r, 1<<20)}
	switch err := c.next(); {
	case err == io.EOF:
		c.err = io.EOF // an empty backup: an empty store
	case err != nil:
		return fmt.Errorf("read the backup: %w", err)
	}
	db, err := badger.Open(opts)
	if err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := db.Load(c, 64); err != nil {
		db.Close()
		os.RemoveAll(dir)
		return fmt.Errorf("read the backup: %w", err)
	}
	if err := then(db); err != nil {
		db.Close()
		os.RemoveAll(dir)
		return err
	}
	if err := db.Close(); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("write %s: %w", dir, err)
	}
	return nil
}

// A backup stream is Badger's: [length:8 little-endian][pb.KVList]
// repeated. Badger writes lists of a few MB; maxBackupList bounds one.
const maxBackupList = 1 << 30

// LooksLikeBackup reports whether head, the start of a file, looks like
// a backup stream: a list's length, then a KVList whose first field (its
// first KV) is tag 0x0a.
func LooksLikeBackup(head []byte) bool {
	return len(head) > 9 && head[8] == 0x0a && binary.LittleEndian.Uint64(head) <= maxBackupList
}

// maxBackupVersion bounds a record's version (Badger's commit timestamp,
// one more each commit) in a backup stream.
const maxBackupVersion = 1 << 62

// checkedBackup passes a backup stream on to Badger's Load one whole list
// at a time, once the list is all there and decodes. Load sizes its
// buffer by the length it reads: a damaged length would have it allocate
// up to 2^64 bytes (or fail to) before finding that the stream has no
// such list. Here the list is read in as it comes, so what is held is
// never more than what the stream has. And a damaged version of 2^64-1
// has Badger count to it, for ever (its next timestamp wraps to 0).
type checkedBackup struct {
	r   *bufio.Reader
	buf bytes.Buffer // the list being handed on, with its length
	err error        // what ends the stream, once buf is drained
}

func (c *checkedBackup) Read(p []byte) (int, error) {
	if c.buf.Len() == 0 {
		if c.err != nil {
			return 0, c.err
		}
		if c.err = c.next(); c.err != nil {
			c.buf.Reset()
			return 0, c.err
		}
	}
	return c.buf.Read(p)
}

// next reads the next list into buf and checks it; io.EOF where the
// stream ends between lists.
func (c *checkedBackup) next() error {
	c.buf.Reset()
	var size [8]byte
	n, err := io.ReadFull(c.r, size[:])
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return fmt.Errorf("cut short: %d bytes of a list's length (%v)", n, err)
	}
	want := binary.LittleEndian.Uint64(size[:])
	if want > maxBackupList {
		return fmt.Errorf("damaged: a list of %d bytes", want)
	}
	c.buf.Write(size[:])
	if m, err := io.CopyN(&c.buf, c.r, int64(want)); err != nil {
		if err == io.EOF {
			return fmt.Errorf("cut short: %d of a list's %d bytes", m, want)
		}
		return err
	}
	var list pb.KVList
	if err := proto.Unmarshal(c.buf.Bytes()[8:], &list); err != nil {
		return fmt.Errorf("damaged: %w", err)
	}
	for _, kv := range list.Kv {
		if kv.Version > maxBackupVersion {
			return fmt.Errorf("damaged: record %q has version %d", kv.Key, kv.Version)
		}
	}
	return nil
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
