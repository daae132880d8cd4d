// Package atomicfile owns the one way XCE replaces a small file so that a
// reader sees the old content or the new, never a part: a temporary file
// in the same directory (created afresh, never through a link), written,
// given its mode by descriptor, optionally synced, then renamed into
// place. It imports nothing of ours.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with data, the file's mode perm. With sync the data
// is on disk before the rename (the caller syncs the directory when the
// rename itself must survive a crash).
func Write(path string, data []byte, perm os.FileMode, sync bool) error {
	return WriteFunc(path, perm, sync, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc is Write for content too large to hold: write streams it into
// the temporary file.
func WriteFunc(path string, perm os.FileMode, sync bool, write func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// SyncDir makes the entries of dir durable: a rename into it, or a file
// made there, survives a crash once it returns.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
