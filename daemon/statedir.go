package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lockWait is how long xced waits for the state directory's lock: after
// kill -9 the old process's lock is released once the kernel has torn it
// down, which a restart right after can beat.
const lockWait = 5 * time.Second

// prepareStateDir creates dir (0755: users reach the socket through it) and
// checks, when xced runs as root, that no other user can change it: xced
// keeps root's job files there, so dir and every directory above it must
// be root's and not writable by anyone else (a sticky one such as /tmp
// excepted above dir).
func prepareStateDir(dir string) error {
	return prepareDir(dir, 0o755)
}

// prepareDir is prepareStateDir for a directory created with mode perm
// (a worker's: 0711).
func prepareDir(dir string, perm os.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	if os.Geteuid() != 0 {
		return nil // a user's own xced holds nothing but that user's files
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if err := checkDirOwner(dir, fi, true, false); err != nil {
		return err
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("state directory: %w", err)
		}
		if err := checkDirOwner(p, fi, true, true); err != nil {
			return err
		}
		if p == "/" || p == "." {
			return nil
		}
	}
}

// checkDirOwner refuses a directory that someone other than its owner can
// write, and (asRoot) one that root does not own.
func checkDirOwner(path string, fi os.FileInfo, asRoot, stickyOK bool) error {
	if !fi.IsDir() {
		return fmt.Errorf("state directory %s: not a directory", path)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if stickyOK && fi.Mode()&os.ModeSticky != 0 {
		return nil
	}
	if asRoot && st.Uid != 0 {
		return fmt.Errorf("state directory %s is owned by uid %d: xced runs as root and keeps root's files there, so it must be root's (chown root %s)", path, st.Uid, path)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("state directory %s is writable by other users (mode %04o): xced keeps its job files there (chmod go-w %s)", path, fi.Mode().Perm(), path)
	}
	return nil
}

// lockStateDir takes DIR/xced.lock, waiting up to lockWait for a previous
// xced's lock to go away. The file is 0600 so that no other user can open
// it, and so hold the lock and keep xced from starting.
func lockStateDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "xced.lock")
	lock, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// A lock file from an older xced may be 0644.
	if err := lock.Chmod(0o600); err != nil {
		lock.Close()
		return nil, fmt.Errorf("chmod %s: %w", path, err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return lock, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			lock.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("another xced is running with state directory %s", dir)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
