package tests

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// diskCluster is a cluster whose state directory (store, job
// directories, spool files) is a tmpfs of size bytes, and fill, which
// fills that filesystem until leave bytes are free (a file of its own the
// returned release removes). It skips unless the tests run as root.
func diskCluster(t *testing.T, size string, args ...string) (c *cluster, state string, fill func(leave uint64), release func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs as the state directory")
	}
	dir, err := os.MkdirTemp("", "xce-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	state = filepath.Join(dir, "state")
	os.MkdirAll(state, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0755", "tmpfs", state).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o777)
	os.Chmod(work, 0o777|os.ModeSticky)
	c = &cluster{t: t, dir: dir, work: work, args: args}
	filler := filepath.Join(state, "filler")
	t.Cleanup(func() {
		if c.cmd != nil {
			c.runQuiet("bkill", "-r", "-u", "all", "0")
		}
		c.stop()
		time.Sleep(100 * time.Millisecond)
		exec.Command("umount", "-l", state).Run()
		os.RemoveAll(dir)
	})
	fill = func(leave uint64) {
		t.Helper()
		var st unix.Statfs_t
		if err := unix.Statfs(state, &st); err != nil {
			t.Fatal(err)
		}
		free := st.Bavail * uint64(st.Bsize)
		if free <= leave {
			return
		}
		f, err := os.OpenFile(filler, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		io.CopyN(f, zeroReader{}, int64(free-leave))
	}
	release = func() { os.Remove(filler) }
	return c, state, fill, release
}

// A full disk where the jobs are launched: the worker cannot write a
// job's launch file. The jobs never ran, so they stay pending with the
// reason (bjobs -p) instead of ending EXIT 127, and run once space
// returns.
func TestDiskFullAtDispatch(t *testing.T) {
	c, _, fill, release := diskCluster(t, "160m")
	c.start()
	var ids []string
	for range 5 {
		ids = append(ids, c.submit("", "-H", "true"))
	}
	fill(0)
	for _, id := range ids {
		c.must("", "bresume", id)
	}
	// Each is dispatched, fails to start, and pends with the reason.
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for {
			out := c.must("", "bjobs", "-p", id)
			if strings.Contains(out, "Failed to start the job on its host") && strings.Contains(out, "no space left on device") {
				break
			}
			if st := c.stat(id); st == "EXIT" || st == "DONE" || time.Now().After(deadline) {
				t.Fatalf("job %s on a full disk: %s\n%s\n%s", id, st, out, c.must("", "bhist", "-l", id))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, id := range ids {
		if st := c.stat(id); st != "PEND" {
			t.Errorf("job %s on a full disk: %s, want PEND", id, st)
		}
	}
	release()
	for _, id := range ids {
		if st := c.waitStateWithin(id, 90*time.Second, "DONE", "EXIT"); st != "DONE" {
			t.Errorf("job %s once space returned: %s\n%s", id, st, c.must("", "bhist", "-l", id))
		}
	}
}
