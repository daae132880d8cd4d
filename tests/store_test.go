package tests

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// xced runs xced itself (not as the daemon the cluster keeps): a store
// command, or a start that is expected to fail. It waits up to a minute.
func (c *cluster) xced(args ...string) result {
	c.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "xced"), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		c.t.Fatalf("xced %s did not end:\n%s%s", strings.Join(args, " "), out.String(), errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

func (c *cluster) state() string { return filepath.Join(c.dir, "state") }

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func storeFile(t *testing.T, db, suffix string) string {
	t.Helper()
	ents, _ := os.ReadDir(db)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			return filepath.Join(db, e.Name())
		}
	}
	t.Fatalf("no %s file in %s", suffix, db)
	return ""
}

// dataEnd is where a file's data ends (logs are preallocated with zeros).
func dataEnd(b []byte) int {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return n
}

func flipByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[dataEnd(b)/2] ^= 0x04
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func truncateFile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(dataEnd(b)/2)); err != nil {
		t.Fatal(err)
	}
}

// storeWithJobs makes a store of 303 held jobs (3 jobs, an array of 300)
// and returns a copy of it as a clean stop leaves it (tables) and as
// kill -9 leaves it (the memtable log).
func storeWithJobs(t *testing.T) (clean, crashed string) {
	c := newCluster(t)
	for i := 0; i < 3; i++ {
		c.submit("", "-H", "true")
	}
	c.submit("", "-H", "-J", "arr[1-300]", "true")
	tmp := t.TempDir()
	crashed, clean = filepath.Join(tmp, "crashed"), filepath.Join(tmp, "clean")
	c.crash()
	copyTree(t, filepath.Join(c.state(), "db"), crashed)
	c.start()
	c.stop()
	copyTree(t, filepath.Join(c.state(), "db"), clean)
	return clean, crashed
}

var salvagedRE = regexp.MustCompile(`Salvaged \d+ records: (\d+) live jobs`)

// A store damaged in any of its file kinds: xced refuses to start and says
// what is damaged and how to recover; xced store check finds it; xced
// store recover salvages what is intact, keeps the damaged store aside and
// reports what was lost; xced then starts with the salvaged jobs and hands
// out no job id again.
func TestStoreDamageRefusedAndRecovered(t *testing.T) {
	clean, crashed := storeWithJobs(t)
	for _, tc := range []struct {
		name, from, file string
		harm             func(*testing.T, string)
		minSalvaged      int
		lost             string // what the report must name as lost
	}{
		{"flip sst", clean, ".sst", flipByte, 0, ""},
		{"truncate sst", clean, ".sst", truncateFile, 0, ""},
		{"flip mem", crashed, ".mem", flipByte, 3, "lost: job 4 ("},
		{"truncate mem", crashed, ".mem", truncateFile, 3, "lost: job 4 ("},
		{"delete mem", crashed, ".mem", func(t *testing.T, p string) { os.Remove(p) }, 0, ""},
		{"flip vlog", crashed, ".vlog", func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			b[len(b)/3] ^= 1
			os.WriteFile(p, b, 0o600)
		}, 303, ""},
		{"flip manifest", clean, "MANIFEST", flipByte, 0, ""},
		{"truncate manifest", clean, "MANIFEST", truncateFile, 0, ""},
		{"delete manifest", clean, "MANIFEST", func(t *testing.T, p string) { os.Remove(p) }, 303, ""},
		{"delete manifest after kill -9", crashed, "MANIFEST", func(t *testing.T, p string) { os.Remove(p) }, 303, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.stop()
			db := filepath.Join(c.state(), "db")
			os.RemoveAll(db)
			copyTree(t, tc.from, db)
			tc.harm(t, storeFile(t, db, tc.file))

			r := c.xced("--dir", c.state())
			if r.code == 0 || !strings.Contains(r.stderr, "is damaged") || !strings.Contains(r.stderr, "xced store recover") {
				t.Fatalf("xced on a damaged store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "SIGBUS") {
				t.Fatalf("xced crashed on a damaged store:\n%s", r.stderr)
			}
			if r := c.xced("store", "check", "--dir", c.state()); r.code == 0 || !strings.Contains(r.stdout, "damaged: ") {
				t.Fatalf("xced store check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = c.xced("store", "recover", "--dir", c.state())
			if r.code != 0 {
				t.Fatalf("xced store recover: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			m := salvagedRE.FindStringSubmatch(r.stdout)
			if m == nil || !strings.Contains(r.stdout, "The damaged store is kept at ") {
				t.Fatalf("xced store recover said:\n%s", r.stdout)
			}
			t.Logf("%s", strings.TrimSpace(r.stdout))
			salvaged, _ := strconv.Atoi(m[1])
			if salvaged < tc.minSalvaged {
				t.Errorf("%d jobs salvaged, want at least %d", salvaged, tc.minSalvaged)
			}
			if !strings.Contains(r.stdout, tc.lost) {
				t.Errorf("the report does not say %q", tc.lost)
			}
			if r := c.xced("store", "check", "--dir", c.state()); r.code != 0 {
				t.Fatalf("xced store check after recover: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			c.start()
			out := c.must("", "bjobs", "-a", "-u", "all", "-noheader", "-o", "jobid")
			if n := len(strings.Fields(out)); n != salvaged {
				t.Errorf("bjobs lists %d jobs after recovery, the report said %d", n, salvaged)
			}
			if id, _ := strconv.Atoi(c.submit("", "-H", "true")); id <= 4 {
				t.Errorf("a job submitted after recovery got id %d, which was handed out before", id)
			}
		})
	}
}

// xced store backup works while xced runs (through its admin socket) and
// gives a consistent copy; restore brings it back with xced stopped, keeps
// the replaced store aside, and job ids handed out after the backup are
// not handed out again.
func TestStoreBackupOnlineAndRestore(t *testing.T) {
	c := newCluster(t)
	var before []string
	for i := 0; i < 5; i++ {
		before = append(before, c.submit("", "-H", "true"))
	}
	file := filepath.Join(t.TempDir(), "xce.backup")
	r := c.xced("store", "backup", "--dir", c.state(), file)
	if r.code != 0 || !strings.Contains(r.stdout, "online") {
		t.Fatalf("xced store backup while xced runs: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	after := c.submit("", "-H", "true")
	if r := c.xced("store", "restore", "--dir", c.state(), file); r.code == 0 {
		t.Fatalf("xced store restore ran while xced runs:\n%s", r.stdout)
	}
	c.stop()
	r = c.xced("store", "restore", "--dir", c.state(), file)
	if r.code != 0 || !strings.Contains(r.stdout, "Restored 5 live jobs") || !strings.Contains(r.stdout, "previous store is kept at") {
		t.Fatalf("xced store restore: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c.start()
	out := c.must("", "bjobs", "-a", "-noheader", "-o", "jobid")
	if got := strings.Join(strings.Fields(out), " "); got != strings.Join(before, " ") {
		t.Errorf("after restore bjobs lists %q, want %q", got, strings.Join(before, " "))
	}
	next, _ := strconv.Atoi(c.submit("", "-H", "true"))
	if a, _ := strconv.Atoi(after); next <= a {
		t.Errorf("job id %d handed out again after the restore (%d was handed out after the backup)", next, a)
	}
}

// The lock file is 0600, so no other user can hold it; a state directory
// other users can write is refused; a lock still held when xced starts (a
// previous xced going away) is waited for.
func TestStateDirLock(t *testing.T) {
	c := newCluster(t)
	lockPath := filepath.Join(c.state(), "xced.lock")
	fi, err := os.Stat(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("xced.lock is %04o, want 0600", fi.Mode().Perm())
	}
	c.stop()

	if os.Geteuid() == 0 {
		os.Chmod(c.state(), 0o777)
		r := c.xced("--dir", c.state())
		if r.code == 0 || !strings.Contains(r.stderr, "writable by other users") {
			t.Errorf("xced on a state directory anyone can write: exit %d\n%s", r.code, r.stderr)
		}
		os.Chmod(c.state(), 0o755)
	}

	// Hold the lock as a previous xced would, briefly, and start.
	f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(time.Second)
		f.Close()
	}()
	c.start()
}

// A full disk: with the store on a small filesystem, submissions are
// refused with the free space named once it is below the floor, queries
// keep working, a running job's end is recorded, and when space returns
// submissions are accepted again. Needs root (mount -t tmpfs).
func TestDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs as the state directory")
	}
	dir, err := os.MkdirTemp("", "xce-")
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	os.MkdirAll(state, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=160m,mode=0755", "tmpfs", state).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	c := &cluster{t: t, dir: dir, work: work}
	t.Cleanup(func() {
		if c.cmd != nil {
			c.runQuiet("bkill", "-r", "-u", "all", "0")
		}
		c.stop()
		time.Sleep(100 * time.Millisecond)
		exec.Command("umount", "-l", state).Run()
		os.RemoveAll(dir)
	})
	c.start()
	running := c.submit("", "-o", filepath.Join(work, "%J.out"), "sleep 2")
	long := c.submit("", "-o", filepath.Join(work, "%J.out"), "sleep 60")
	c.waitState(running, "RUN")
	c.waitState(long, "RUN")

	// Fill the disk to 10 MB free: below the floor.
	filler := filepath.Join(state, "filler")
	fill := func(leave uint64) { fillDisk(t, state, filler, leave) }
	fill(10 << 20)
	r := c.run("", "bsub", "true")
	if r.code == 0 || !regexp.MustCompile(`The controller's disk is full \(\d+ MB free in `+regexp.QuoteMeta(state)+`\): free space on that disk \(\d+ MB needed.*\. Job not submitted\.`).MatchString(r.stderr) {
		t.Fatalf("bsub on a full disk: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	c.must("", "bjobs", "-a")
	if st := c.waitState(running, "DONE", "EXIT"); st != "DONE" {
		t.Errorf("job %s ended %s on the full disk:\n%s", running, st, c.must("", "bhist", "-l", running))
	}
	// Completely full now: a job killed still has its end recorded (the
	// store's log is allocated ahead: no SIGBUS), queries still answer.
	fill(0)
	c.must("", "bkill", long)
	c.waitState(long, "EXIT")
	c.must("", "bhist", "-l", long)

	os.Remove(filler)
	id := c.submit("", "true")
	c.waitState(id, "DONE")

	// Start-up on a full disk: read-only (TestDiskFullRestartReadOnly).
	c.stop()
	c.start()
	if got := c.stat(id); got != "DONE" {
		t.Errorf("job %s after the restart: %s", id, got)
	}
}

// fillDisk grows filler until the file system holding dir has leave
// bytes free (for a non-root user's view: Bavail).
func fillDisk(t *testing.T, dir, filler string, leave uint64) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
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

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
