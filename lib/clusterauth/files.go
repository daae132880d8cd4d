package clusterauth

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// readFile reads what, the file at path, without following a link in its
// last component and without blocking on a FIFO, as a regular file of at
// most max bytes. With secret, the file must also be the caller's (or
// root's) and closed to group and others: whoever can write the token or
// the key can stand in for the controller.
func readFile(path, what string, max int64, secret bool) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP {
		return nil, fmt.Errorf("%s %s is a symbolic link; give the file itself", what, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	// Checked on the raw descriptor: os.NewFile would poll a FIFO.
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", what, &fs.PathError{Op: "stat", Path: path, Err: err})
	}
	euid := os.Geteuid()
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = fmt.Errorf("%s %s is not a regular file (mode %#o)", what, path, st.Mode)
	case secret && int(st.Uid) != euid && st.Uid != 0:
		err = fmt.Errorf("%s %s is owned by uid %d, not by uid %d or root; chown it", what, path, st.Uid, euid)
	case secret && st.Mode&0o077 != 0:
		err = fmt.Errorf("%s %s can be accessed by group or others (mode %#o); chmod 600 %s", what, path, st.Mode&0o777, path)
	case st.Size > max:
		err = fmt.Errorf("%s %s is %d bytes, more than %d", what, path, st.Size, max)
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s %s is more than %d bytes", what, path, max)
	}
	return b, nil
}

func readSecret(path, what string, max int64) ([]byte, error) {
	return readFile(path, what, max, true)
}

// writeNew writes data to path, mode perm, only if path does not exist
// (an error satisfying errors.Is(err, fs.ErrExist) if it does): a fresh
// temporary file in the same directory (O_EXCL|O_NOFOLLOW), written and
// synced, then hard-linked to path, which fails rather than replace. So a
// reader sees all of the file or none, and a crash leaves at worst a
// temporary file. lib/atomicfile renames, which would replace a file
// another start has just written.
func writeNew(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+filepath.Base(path)+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm) // the umask does not apply
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the new name survives a crash
		d.Close()
	}
	return nil
}
