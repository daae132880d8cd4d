package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// xced restarted at once after kill -9, without waiting for the old
// process to be gone, comes up with every job: it waits for the dead
// controller's locks rather than refusing to start.
func TestRestartRightAfterKill9(t *testing.T) {
	c := newCluster(t)
	const jobs = 20
	for range jobs {
		c.submit("", "-H", "true")
	}
	for i := range 5 {
		old := c.cmd
		if err := old.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		c.start() // not waited for: the old one may still hold its locks
		old.Wait()
		out := c.must("", "bjobs", "-noheader", "-o", "stat", "-u", "all")
		if n := strings.Count(out, "PSUSP"); n != jobs {
			t.Fatalf("restart %d: %d held jobs, want %d:\n%s", i+1, n, jobs, out)
		}
	}
}

// The locks of a controller being torn down go one at a time (the state
// directory's, then the database's): xced waits for each, here held by
// this test and released after a delay, instead of calling the database
// in use or damaged.
func TestRestartWaitsForLocks(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "-H", "true")
	c.stop()
	state := filepath.Join(c.dir, "state")
	hold := func(path string) *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatalf("lock %s: %v", path, err)
		}
		return f
	}
	stateLock := hold(filepath.Join(state, "xced.lock"))
	dbLock := hold(filepath.Join(state, "db"))
	go func() {
		time.Sleep(300 * time.Millisecond)
		stateLock.Close()
		time.Sleep(300 * time.Millisecond)
		dbLock.Close()
	}()
	c.start()
	if got := c.stat(id); got != "PSUSP" {
		t.Fatalf("job %s after the restart: %q, want PSUSP", id, got)
	}
}
