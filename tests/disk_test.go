package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// diskCluster is a cluster whose state directory (store, job
// directories, spool files), or its subdirectory sub when sub is not "",
// is a tmpfs of size bytes, and fill, which fills that filesystem until
// leave bytes are free (a file of its own the returned release removes).
// It skips unless the tests run as root.
func diskCluster(t *testing.T, size, sub string, args ...string) (c *cluster, state string, fill func(leave uint64), release func()) {
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
	mnt := filepath.Join(state, sub)
	os.MkdirAll(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0755", "tmpfs", mnt).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o777)
	os.Chmod(work, 0o777|os.ModeSticky)
	c = &cluster{t: t, dir: dir, work: work, args: args}
	filler := filepath.Join(mnt, ".filler")
	t.Cleanup(func() {
		if c.cmd != nil {
			c.runQuiet("bkill", "-r", "-u", "all", "0")
		}
		c.stop()
		time.Sleep(100 * time.Millisecond)
		exec.Command("umount", "-l", mnt).Run()
		os.RemoveAll(dir)
	})
	fill = func(leave uint64) {
		t.Helper()
		fillDisk(t, mnt, filler, leave)
	}
	release = func() { os.Remove(filler) }
	return c, state, fill, release
}

// A full disk where the jobs are launched (the worker's, not the
// store's): the worker cannot write a job's launch file. The jobs never ran, so they stay pending with the
// reason (bjobs -p) instead of ending EXIT 127, and run once space
// returns.
func TestDiskFullAtDispatch(t *testing.T) {
	c, _, fill, release := diskCluster(t, "16m", "jobs")
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

// xced restarted below the free-space floor: it starts read-only instead
// of refusing to start (which led admins to lower --min-free and let
// Badger's compactions fill the disk): queries answer, a running job's
// end is recorded, bsub is refused with how to free space, a pending job
// is not dispatched, and nothing crashes. `xced store check` then works
// in place on the nearly full disk (it copied the whole store). Space
// freed and xced restarted, work goes on.
func TestDiskFullRestartReadOnly(t *testing.T) {
	c, state, fill, release := diskCluster(t, "160m", "")
	c.start()
	done := c.submit("", "true")
	c.waitState(done, "DONE")
	long := c.submit("", "sleep 8")
	c.waitState(long, "RUN")
	held := c.submit("", "-H", "true")
	c.stop()

	fill(10 << 20)
	c.start()
	if got := c.stat(done); got != "DONE" {
		t.Errorf("job %s read-only: %q", done, got)
	}
	c.must("", "bhist", "-l", done)
	r := c.run("", "bsub", "true")
	want := "The controller's disk is full"
	if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "free space on that disk") ||
		!strings.Contains(r.stderr, "xced restarts by itself") || !strings.Contains(r.stderr, "Job not submitted.") {
		t.Fatalf("bsub read-only: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// The running job's end is recorded.
	if st := c.waitStateWithin(long, 90*time.Second, "DONE", "EXIT"); st != "DONE" {
		t.Errorf("job %s read-only: %s", long, st)
	}
	// A pending job waits, with the reason.
	c.must("", "bresume", held)
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := c.must("", "bjobs", "-p", held)
		if strings.Contains(out, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s read-only: no disk reason in\n%s", held, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st := c.stat(held); st != "PEND" {
		t.Errorf("job %s dispatched read-only: %s", held, st)
	}
	c.must("", "bqueues")
	if c.cmd.ProcessState != nil || strings.Contains(c.log.String(), "SIGBUS") || strings.Contains(c.log.String(), "panic") {
		t.Fatalf("xced read-only crashed:\n%s", c.log)
	}
	c.stop()

	// The check works in place, with 10 MB free.
	fill(10 << 20)
	r = c.xced("store", "check", "--dir", state)
	if r.code != 0 || !strings.Contains(r.stdout, "is whole") {
		t.Fatalf("xced store check with 10 MB free: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	release()
	c.start()
	id := c.submit("", "true")
	c.waitState(id, "DONE")
	c.waitState(held, "DONE")
}

// Read-only after a start below the floor ends by itself: once space is
// freed, xced (looking every second here) restarts in place, writable,
// and takes submissions again without anyone restarting it; a job that
// ran through it ends as it should.
func TestDiskReadOnlyEndsWhenSpaceReturns(t *testing.T) {
	c, _, fill, release := diskCluster(t, "160m", "", "--disk-check-interval", "1s")
	c.start()
	long := c.submit("", "sleep 6")
	c.waitState(long, "RUN")
	c.stop()
	fill(10 << 20)
	c.start()
	pid := c.cmd.Process.Pid
	if r := c.run("", "bsub", "true"); r.code == 0 || !strings.Contains(r.stderr, "runs read-only") {
		t.Fatalf("bsub read-only: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	release()
	deadline := time.Now().Add(60 * time.Second)
	var id string
	for {
		r := c.run("", "bsub", "true")
		if m := submittedRE.FindStringSubmatch(r.stdout); r.code == 0 && m != nil {
			id = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("xced still refuses bsub 60 s after space was freed: %s\n%s", r.stderr, c.log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(c.log.String(), "xced restarts to leave read-only mode") {
		t.Errorf("xced's log does not say it left read-only mode:\n%s", c.log)
	}
	if c.cmd.Process.Pid != pid || c.cmd.ProcessState != nil {
		t.Errorf("xced is not the process it was (pid %d, state %v)", pid, c.cmd.ProcessState)
	}
	c.waitState(id, "DONE")
	if st := c.waitStateWithin(long, 90*time.Second, "DONE", "EXIT"); st != "DONE" {
		t.Errorf("job %s, running through the restarts: %s", long, st)
	}
}

// One user's job writes without end to its spool file, which lives in
// the state directory beside the store: the output is cut where the
// disk would go below the spool's reserve (twice the store's floor), the
// output says so, and another user's submissions are still taken and
// run. Before, the output filled the disk and every submission was
// refused.
func TestSpoolCannotFillControllerDisk(t *testing.T) {
	const nobody = 65534
	c, _, _, _ := diskCluster(t, "192m", "")
	c.start()
	// The job writes 250 MB and stays: its spool file holds the output
	// until it ends.
	r := c.runAs(nobody, "", "bsub", "-o", "big.out", "head -c 250000000 /dev/zero; touch written; sleep 600")
	m := submittedRE.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("bsub as nobody: %d %q %q", r.code, r.stdout, r.stderr)
	}
	big := m[1]
	deadline := time.Now().Add(120 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(c.work, "written")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s did not write its output: %s", big, c.stat(big))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Another user's submission is taken and runs meanwhile.
	r = c.run("", "bsub", "true")
	m = submittedRE.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("another user's bsub while a job's output fills the spool: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c.waitState(m[1], "DONE")
	c.must("", "bkill", big)
	c.waitStateWithin(big, 120*time.Second, "EXIT")
	// The output says where it was cut.
	f, err := os.Open(filepath.Join(c.work, "big.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	tail := make([]byte, 64<<10)
	n, _ := f.ReadAt(tail, max(0, fi.Size()-int64(len(tail))))
	if !strings.Contains(string(tail[:n]), "The job's output was cut after") {
		t.Errorf("big.out (%d bytes) does not say where the output was cut; its end:\n%q", fi.Size(), tail[max(0, n-2000):n])
	}
}
