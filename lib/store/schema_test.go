package store

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
)

// untar unpacks a testdata store into dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Clean(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			out.Close()
		}
	}
}

func storeSchema(t *testing.T, st *Store) uint64 {
	t.Helper()
	v, err := readSchema(st.db)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A store made by the release before the schema version was recorded
// (testdata/make-store-fixture.sh) opens, is backed up beside itself and
// upgraded, and keeps everything it held; the backup restores.
func TestSchemaUpgradeFromV1(t *testing.T) {
	top := t.TempDir()
	untar(t, "testdata/store-v1.tar.gz", top)
	dir := filepath.Join(top, "db")
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v := storeSchema(t, st); v != SchemaVersion {
		t.Errorf("schema version %d after the upgrade, want %d", v, SchemaVersion)
	}
	checkFixture(t, st)
	st.Close()
	backups, _ := filepath.Glob(filepath.Join(top, "db.schema1-backup-*"))
	if len(backups) != 1 {
		t.Fatalf("backups beside the store: %v", backups)
	}

	// Opened again: already upgraded, no second backup.
	st, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkFixture(t, st)
	st.Close()
	if again, _ := filepath.Glob(filepath.Join(top, "db.schema1-backup-*")); len(again) != 1 {
		t.Errorf("backups after a second open: %v", again)
	}

	// The backup is the old store, as `xced store restore` takes it.
	f, err := os.Open(backups[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	restored := filepath.Join(top, "restored")
	if jobs, err := Restore(bufio.NewReader(f), restored, 0); err != nil || jobs != 4 {
		t.Fatalf("restore of the backup: %d jobs, %v", jobs, err)
	}
	st, err = Open(restored)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v := storeSchema(t, st); v != SchemaVersion {
		t.Errorf("restored store: schema version %d, want %d", v, SchemaVersion)
	}
	checkFixture(t, st)
}

// checkFixture checks what TestMakeStoreFixture wrote.
func checkFixture(t *testing.T, st *Store) {
	t.Helper()
	l, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Jobs) != 4 {
		t.Errorf("%d jobs, want 4", len(l.Jobs))
	}
	if c, err := st.IDCeiling(); err != nil || c < 2000 {
		t.Errorf("id ceiling %d, %v", c, err)
	}
	if m, err := st.Meta("queue/"); err != nil || string(m["queue/night"]) != "closed" {
		t.Errorf("queue state %q, %v", m, err)
	}
	spec, _, err := st.Spec(7)
	if err != nil || spec.GetCommand() != "true" || strings.Join(spec.GetEnv(), ",") != "" {
		t.Errorf("job 7's spec %v, %v", spec, err)
	}
}

// A new store is stamped with this release's version and not backed up.
func TestSchemaNewStore(t *testing.T) {
	top := t.TempDir()
	st, err := Open(filepath.Join(top, "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v := storeSchema(t, st); v != SchemaVersion {
		t.Errorf("schema version %d, want %d", v, SchemaVersion)
	}
	if b, _ := filepath.Glob(filepath.Join(top, "db.schema*")); len(b) != 0 {
		t.Errorf("a new store was backed up: %v", b)
	}
}

// A store of a later release is refused, with both versions named, and
// left as it was.
func TestSchemaNewerRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Submit(fixtureSubmission(7, 1, nil)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	setRawSchema(t, dir, 7)

	_, err = Open(dir)
	var se *SchemaError
	if !errors.As(err, &se) || se.Version != 7 {
		t.Fatalf("open of a version 7 store: %v", err)
	}
	want := "store schema version 7 is newer than this xced (2): "
	if SchemaVersion != 2 || !strings.Contains(err.Error(), want) {
		t.Errorf("message %q, want it to say %q", err, want)
	}
	// Refused again the same way: nothing was changed.
	if _, err := Open(dir); !errors.As(err, &se) {
		t.Errorf("second open: %v", err)
	}
}

// setRawSchema records version v in the closed store in dir, as a later
// release would.
func setRawSchema(t *testing.T, dir string, v uint64) {
	t.Helper()
	db, err := badger.Open(badgerOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set(keySchema, b[:]) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// A replicated log entry of a later format stops the store from applying
// the log, naming both formats, instead of being skipped.
func TestLogFormatNewerRefused(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := &batch{}
	b.Set([]byte("m/x"), []byte("1"))
	good := encodeBatch(b)
	later := append([]byte{2}, good[1:]...)
	if _, err := st.ApplyReplicated([]Entry{{Index: 1, Data: good}}); err != nil {
		t.Fatal(err)
	}
	_, err = st.ApplyReplicated([]Entry{{Index: 2, Data: later}})
	var lf *LogFormatError
	if !errors.As(err, &lf) || !strings.Contains(err.Error(), "replicated log entry format 2 is newer than this xced (1)") {
		t.Fatalf("an entry of format 2: %v", err)
	}
	if st.Applied() != 1 {
		t.Errorf("applied %d, want 1", st.Applied())
	}
}
