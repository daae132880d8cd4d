package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, tc := range []struct {
		data string
		perm os.FileMode
		sync bool
	}{{"one", 0o600, false}, {"two, longer", 0o644, true}} {
		if err := Write(path, []byte(tc.data), tc.perm, tc.sync); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		fi, _ := os.Stat(path)
		if err != nil || string(b) != tc.data || fi.Mode().Perm() != tc.perm {
			t.Errorf("after writing %q (%v): %q %v, mode %v", tc.data, tc.perm, b, err, fi.Mode().Perm())
		}
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left in the directory: %v", entries)
	}
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600, false); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}
