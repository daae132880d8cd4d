package main

import (
	"log/slog"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"xce/lib/store"
)

// Read-only mode, for a store opened below its free-space floor, ends by
// itself: xced looks at the free space now and then, and once it is back
// above the floor it stops as on SIGTERM (running jobs keep running) and
// starts again in place (the same process id, arguments and environment),
// now writable. It restarts rather than lifting the mode in place because
// the store was opened without compactions (space.go in lib/store), and
// Badger starts those only when it opens.

// restartWritable is set when xced stops to start again writable.
var restartWritable atomic.Bool

// watchSpace checks the free space on dir's disk every interval until
// stop is closed; once it is at least minFree it asks xced to stop
// (SIGTERM to itself) and to start again.
func watchSpace(dir string, minFree uint64, interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if err := store.OpenCheckSpace(dir, minFree); err != nil {
			continue
		}
		free, _ := store.FreeSpace(dir)
		slog.Warn("the disk holding the store is back above its free-space floor: xced restarts to leave read-only mode",
			"dir", dir, "free_mb", free>>20, "need_mb", minFree>>20)
		restartWritable.Store(true)
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		return
	}
}

// reexec starts xced again in this process, as it was started.
func reexec() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, os.Args, os.Environ())
}
