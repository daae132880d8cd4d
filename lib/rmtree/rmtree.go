// Package rmtree removes a directory tree that a user may have built: as
// deep as the user liked, holding links, without following any, with a
// bounded number of open descriptors.
//
// os.RemoveAll follows no link either, but it holds a descriptor for
// every level it is inside: a tree 25,000 levels deep takes a root
// daemon to its descriptor limit, and the removal fails. Here the walk
// keeps at most MaxOpen directories open. When it reaches that depth, the
// directory it would enter next is moved (renameat, never replacing
// anything) to the top of the tree under a new name, where a later pass
// removes it: the tree gets shallower as it is removed, and no path is
// ever resolved again from a name, so nothing a user renames meanwhile
// can lead the walk out of the tree.
//
// It imports nothing of ours.
package rmtree

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// MaxOpen is the most directories RemoveAll holds open at once.
const MaxOpen = 16

// batch is how many names one read of a directory takes.
const batch = 256

// RemoveAll removes path and everything under it; path itself is not
// followed when it is a link (the link is removed). A missing path is no
// error.
func RemoveAll(path string) error {
	parent, base := filepath.Split(filepath.Clean(path))
	if parent == "" {
		parent = "."
	}
	pfd, err := unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &os.PathError{Op: "open", Path: parent, Err: err}
	}
	defer unix.Close(pfd)
	return removeAt(pfd, base, path)
}

// removeAt removes name in the directory dfd (shown as path in errors).
func removeAt(dfd int, name, path string) error {
	err := unlinkAt(dfd, name)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	top := os.NewFile(uintptr(fd), path)
	err = empty(top)
	top.Close()
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

// unlinkAt removes a file, a link or an empty directory.
func unlinkAt(dfd int, name string) error {
	err := unix.Unlinkat(dfd, name, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		// EPERM: what some systems say for a directory; if it meant
		// the file cannot be removed, removing it as a directory says
		// so again (ENOTDIR is then taken for the first error).
		if derr := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); derr == nil || !errors.Is(derr, unix.ENOTDIR) {
			return derr
		}
	}
	return err
}

// level is an open directory of the walk and its name in its parent.
type level struct {
	f    *os.File
	name string
}

// empty removes everything in the directory top, depth first, holding at
// most MaxOpen directories open (top included).
func empty(top *os.File) error {
	stack := []level{{f: top}}
	moved := 0
	var failed error
	defer func() {
		for _, l := range stack[1:] {
			l.f.Close()
		}
	}()
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		if _, err := cur.f.Seek(0, io.SeekStart); err != nil {
			return &os.PathError{Op: "seek", Path: top.Name(), Err: err}
		}
		names, err := cur.f.Readdirnames(batch)
		if err != nil && !errors.Is(err, io.EOF) {
			return &os.PathError{Op: "read directory", Path: top.Name(), Err: err}
		}
		progress, descended := false, false
		for _, name := range names {
			err := unlinkAt(int(cur.f.Fd()), name)
			if err == nil || errors.Is(err, unix.ENOENT) {
				progress = true
				continue
			}
			if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
				failed = &os.PathError{Op: "remove", Path: filepath.Join(top.Name(), "...", name), Err: err}
				continue
			}
			if len(stack) >= MaxOpen {
				// Too deep to enter: moved to the top, to be removed
				// from there.
				if err := moveTop(cur.f, name, top, &moved); err != nil {
					failed = err
					continue
				}
				progress = true
				continue
			}
			fd, err := unix.Openat(int(cur.f.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				if errors.Is(err, unix.ENOENT) {
					progress = true
					continue
				}
				failed = &os.PathError{Op: "open", Path: filepath.Join(top.Name(), "...", name), Err: err}
				continue
			}
			stack = append(stack, level{f: os.NewFile(uintptr(fd), name), name: name})
			descended = true
			break
		}
		if descended || progress {
			continue
		}
		// Nothing left here that can go: leave the directory.
		if len(stack) == 1 {
			return failed
		}
		stack = stack[:len(stack)-1]
		cur.f.Close()
		parent := stack[len(stack)-1].f
		if err := unix.Unlinkat(int(parent.Fd()), cur.name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
			if failed == nil {
				failed = &os.PathError{Op: "remove", Path: filepath.Join(top.Name(), "...", cur.name), Err: err}
			}
			// The parent keeps it; a later read of the parent finds
			// it again, so end the walk rather than loop.
			return failed
		}
	}
	return failed
}

// moveTop renames the directory name in dir to a new name in top,
// replacing nothing.
func moveTop(dir *os.File, name string, top *os.File, moved *int) error {
	for {
		*moved++
		to := ".rmtree." + strconv.Itoa(*moved)
		err := unix.Renameat2(int(dir.Fd()), name, int(top.Fd()), to, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return fmt.Errorf("move %s up to %s: %w", name, top.Name(), err)
		}
		return nil
	}
}
