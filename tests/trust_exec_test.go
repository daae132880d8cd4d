package tests

import (
	"xce/lib/testenv"

	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// The execution layer's trust boundary, tried as a hostile user would:
// xced runs as root, the attacker is an ordinary user created for the test
// (xcetest1), and xcetest2 is a bystander whose file must stay whole.

// trustCluster is a cluster other users can use: its directories are
// reachable and the work directory writable by all.
// testUser returns the uid of an unprivileged user made for the tests; the
// test is skipped unless root.
func testUser(t *testing.T, name string) int {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: xced must run as root and the attacker as another user")
	}
	uid, _ := testenv.User(t, name)
	return uid
}

func trustCluster(t *testing.T) *cluster {
	c := newCluster(t)
	os.Chmod(c.dir, 0o755)
	os.Chmod(c.work, 0o777)
	return c
}

// precious is a file the attacker must not change: content and owner.
func precious(t *testing.T, c *cluster, name string, uid int) string {
	path := filepath.Join(c.dir, name)
	if err := os.WriteFile(path, []byte("precious "+name+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chown(path, uid, uid)
	return path
}

func checkPrecious(t *testing.T, path string, uid int) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, _ := os.ReadFile(path)
	st := fi.Sys().(*syscall.Stat_t)
	if int(st.Uid) != uid || !fi.Mode().IsRegular() || string(b) != "precious "+filepath.Base(path)+"\n" {
		t.Errorf("%s changed: owner %d (want %d), mode %v, content %q", path, st.Uid, uid, fi.Mode(), b)
	}
}

// attackerSource races xced in the job directories of jobs FIRST..LAST:
// "plant" puts links to TARGET1 and TARGET2 where root writes the launch
// file and opens the shepherd's log (and where it chowns the launch file
// by path); "swap" replaces the temporary limits files root chowns by path
// with links to TARGET1.
const attackerSource = `package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	mode, jobs := os.Args[1], os.Args[2]
	first, _ := strconv.Atoi(os.Args[3])
	last, _ := strconv.Atoi(os.Args[4])
	t1, t2 := os.Args[5], os.Args[6]
	stop := os.Args[7]
	wins := 0
	for i := 0; ; i++ {
		if i%1000 == 0 {
			if _, err := os.Stat(stop); err == nil {
				break
			}
		}
		for id := first; id <= last; id++ {
			d := filepath.Join(jobs, strconv.Itoa(id)+".0")
			switch mode {
			case "plant":
				if os.Symlink(t1, filepath.Join(d, "launch")) == nil {
					wins++
				}
				if os.Symlink(t2, filepath.Join(d, "shepherd.log")) == nil {
					wins++
				}
				if os.Rename(filepath.Join(d, "launch"), filepath.Join(d, "launch.away")) == nil &&
					os.Symlink(t1, filepath.Join(d, "launch")) == nil {
					wins++
				}
			case "swap":
				f, err := os.Open(d)
				if err != nil {
					continue
				}
				names, _ := f.Readdirnames(-1)
				f.Close()
				for _, n := range names {
					if strings.HasPrefix(n, ".limits.") && strings.HasSuffix(n, ".tmp") {
						p := filepath.Join(d, n)
						if os.Remove(p) == nil && os.Symlink(t1, p) == nil {
							wins++
						}
					}
				}
			}
		}
	}
	fmt.Println(wins)
}
`

// attacker is the racing program running as uid.
type attacker struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	stop string
}

func startAttacker(t *testing.T, c *cluster, uid int, mode string, first, last int, t1, t2 string) *attacker {
	t.Helper()
	dir := filepath.Join(c.dir, "attacker")
	os.MkdirAll(dir, 0o755)
	src := filepath.Join(dir, "attacker.go")
	bin := filepath.Join(dir, "attacker")
	if _, err := os.Stat(bin); err != nil {
		os.WriteFile(src, []byte(attackerSource), 0o644)
		if out, err := exec.Command("go", "build", "-o", bin, src).CombinedOutput(); err != nil {
			t.Fatalf("build the attacker: %v\n%s", err, out)
		}
	}
	a := &attacker{stop: filepath.Join(dir, "stop-"+mode)}
	os.Remove(a.stop)
	a.cmd = exec.Command(bin, mode, filepath.Join(c.dir, "state", "jobs"), strconv.Itoa(first), strconv.Itoa(last), t1, t2, a.stop)
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	a.cmd.Stdout = &a.out
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.cmd.Process.Kill(); a.cmd.Wait() })
	return a
}

// end stops the attacker and returns how many links it planted.
func (a *attacker) end(t *testing.T) int {
	os.WriteFile(a.stop, nil, 0o644)
	a.cmd.Wait()
	n, _ := strconv.Atoi(strings.TrimSpace(a.out.String()))
	return n
}

func submitAs(t *testing.T, c *cluster, uid int, args ...string) string {
	t.Helper()
	r := c.runAs(uid, "", "bsub", args...)
	m := submittedRE.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("bsub as uid %d: %d %q %q", uid, r.code, r.stdout, r.stderr)
	}
	return m[1]
}

// Finding: worker.Start chowned the job directory to the user and then
// wrote the launch file and opened the shepherd's log in it by path, so a
// user's links made root overwrite, append to and chown files. Now the job
// directory is root's (0711) and root's files are made in it.
func TestTrustJobDirRace(t *testing.T) {
	uid := testUser(t, "xcetest1")
	other := testUser(t, "xcetest2")
	c := trustCluster(t)
	rootFile := precious(t, c, "root-file", 0)
	otherFile := precious(t, c, "other-file", other)
	first, _ := strconv.Atoi(submitAs(t, c, uid, "-o", "/dev/null", "true"))
	const n = 8
	a := startAttacker(t, c, uid, "plant", first+1, first+n, rootFile, otherFile)
	var ids []string
	for i := 0; i < n; i++ {
		ids = append(ids, submitAs(t, c, uid, "-o", "/dev/null", "true"))
		time.Sleep(100 * time.Millisecond)
	}
	for _, id := range ids {
		c.waitState(id, "DONE", "EXIT")
	}
	t.Logf("links planted in job directories: %d", a.end(t))
	checkPrecious(t, rootFile, 0)
	checkPrecious(t, otherFile, other)
}

// Finding: bmod -W of a running job wrote a temporary file in the user's
// directory and chowned it by path: a root file became the user's. Now the
// limits file is root's, in the job's root-owned directory.
func TestTrustLimitsChown(t *testing.T) {
	uid := testUser(t, "xcetest1")
	c := trustCluster(t)
	rootFile := precious(t, c, "root-file", 0)
	id := submitAs(t, c, uid, "-o", "/dev/null", "sleep 300")
	c.waitState(id, "RUN")
	n, _ := strconv.Atoi(id)
	a := startAttacker(t, c, uid, "swap", n, n, rootFile, rootFile)
	for i := 0; i < 20; i++ {
		if r := c.runAs(uid, "", "bmod", "-W", strconv.Itoa(100+i), id); r.code != 0 {
			t.Fatalf("bmod -W: %d %q", r.code, r.stderr)
		}
	}
	t.Logf("temporary limits files replaced: %d", a.end(t))
	checkPrecious(t, rootFile, 0)
	// Where the limits went: root's file in a directory only root writes.
	jobDir := filepath.Join(c.dir, "state", "jobs", id+".0")
	for _, p := range []string{jobDir, filepath.Join(jobDir, "limits")} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 || fi.Mode()&os.ModeSymlink != 0 {
			t.Errorf("%s: owner %d mode %v, want root's and writable by root only", p, st.Uid, fi.Mode())
		}
	}
	c.must("", "bkill", "-r", id)
}

// Finding: a job wrote a fake pid into its start file and, after an xced
// restart, bkill signalled the process group it named, as root. Now the
// job's process group is what the shepherd's pipe said at the start,
// stored by the controller, and checked before any signal.
func TestTrustForgedStartPid(t *testing.T) {
	uid := testUser(t, "xcetest1")
	c := trustCluster(t)
	v := exec.Command("sleep", "300")
	v.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := v.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Process.Kill(); v.Wait() })
	fake, _ := proto.Marshal(&api.Event{Type: api.EventType_START, State: api.JobState_RUN, Pid: int32(v.Process.Pid)})
	fakeFile := filepath.Join(c.work, "fake-start")
	os.WriteFile(fakeFile, fake, 0o644)
	id := submitAs(t, c, uid, "-o", "/dev/null",
		`sleep 2; cp `+fakeFile+` "$(dirname "$LSB_JOBFILENAME")/start.new" && mv "$(dirname "$LSB_JOBFILENAME")/start.new" "$(dirname "$LSB_JOBFILENAME")/start"; touch `+c.work+`/forged.$LSB_JOBID; sleep 300`)
	c.waitState(id, "RUN")
	waitFile(t, filepath.Join(c.work, "forged."+id))
	c.crash()
	c.start()
	c.waitState(id, "RUN")
	if r := c.runAs(uid, "", "bkill", id); r.code != 0 {
		t.Fatalf("bkill: %d %q", r.code, r.stderr)
	}
	c.waitState(id, "EXIT")
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", v.Process.Pid)); err != nil || strings.Contains(string(b), ") Z ") {
		t.Errorf("the process group the job named (%d) was signalled: %q %v", v.Process.Pid, b, err)
	}
}

// Finding: a job replaced its usage file with a FIFO (or a link to
// /dev/zero), and xced's read of it froze the scheduler (or ate memory).
// Now such a file is refused without blocking; bjobs keeps answering.
func TestTrustUsageFIFO(t *testing.T) {
	uid := testUser(t, "xcetest1")
	c := trustCluster(t)
	id := submitAs(t, c, uid, "-o", "/dev/null",
		`d=$(dirname "$LSB_JOBFILENAME"); while :; do mkfifo "$d/u.$$" && mv -f "$d/u.$$" "$d/status.usage"; touch `+c.work+`/fifo.$LSB_JOBID; sleep 0.2; done`)
	c.waitState(id, "RUN")
	waitFile(t, filepath.Join(c.work, "fifo."+id))
	for i := 0; i < 10; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "bjobs"), "-l", id)
		cmd.Env = append(os.Environ(), "XCE_DIR="+filepath.Join(c.dir, "state"))
		out, err := cmd.CombinedOutput()
		hung := ctx.Err() != nil
		cancel()
		if hung {
			t.Fatalf("bjobs -l hangs while the job's usage file is a FIFO")
		}
		if err != nil {
			t.Fatalf("bjobs -l: %v\n%s", err, out)
		}
		time.Sleep(300 * time.Millisecond)
	}
	c.must("", "bkill", "-r", id)
}

// Finding: a shepherd killed with -9 left its job EXIT with exit code 0
// and a wrong reason while the job's processes ran on untracked; a job
// shell killed from outside left its children running. Now the first ends
// EXIT 137 with TERM_CTRL_PID, and in both the job's processes are killed.
func TestTrustShepherdKilled(t *testing.T) {
	uid := testUser(t, "xcetest1")
	c := trustCluster(t)
	id := submitAs(t, c, uid, "-o", "/dev/null",
		`sleep 300 & cat /proc/$$/stat > `+c.work+`/stat.$LSB_JOBID; wait`)
	c.waitState(id, "RUN")
	f := waitFile(t, filepath.Join(c.work, "stat."+id))
	pgid, sid := statIDs(t, f)
	syscall.Kill(sid, syscall.SIGKILL) // the shepherd
	c.waitState(id, "EXIT")
	out := c.must("", "bjobs", "-noheader", "-o", "exit_code exit_reason", id)
	if f := strings.Fields(out); len(f) < 2 || f[0] != "137" || !strings.Contains(out, "TERM_CTRL_PID") {
		t.Errorf("bjobs -o 'exit_code exit_reason' = %q, want 137 and TERM_CTRL_PID", out)
	}
	groupGone(t, pgid)

	// The job shell killed from outside: its background child goes too.
	id = submitAs(t, c, uid, "-o", "/dev/null",
		`sleep 300 & cat /proc/$$/stat > `+c.work+`/stat.$LSB_JOBID; wait`)
	c.waitState(id, "RUN")
	pgid, _ = statIDs(t, waitFile(t, filepath.Join(c.work, "stat."+id)))
	syscall.Kill(pgid, syscall.SIGKILL)
	c.waitState(id, "EXIT")
	groupGone(t, pgid)
}

// A job that ended while xced was down records the time it ended, not
// the time xced found it: its run time is shorter than xced's absence.
func TestTrustEndWhileDown(t *testing.T) {
	c := newCluster(t)
	before := time.Now()
	id := c.submit("", "-o", "/dev/null", "touch "+c.work+"/began.$LSB_JOBID; sleep 2; touch "+c.work+"/ended.$LSB_JOBID")
	// RUN is shown from dispatch on; the crash must come once the job's
	// own shell runs, or a loaded machine lets it land before the worker
	// has let the shepherd start the job (which then never starts).
	waitFile(t, filepath.Join(c.work, "began."+id))
	running := time.Now()
	c.crash()
	waitFile(t, filepath.Join(c.work, "ended."+id))
	ended := time.Now()
	// Down for longer than the job could have run: a run time counted to
	// the restart would be at least this long.
	time.Sleep(running.Sub(before) + 4*time.Second)
	c.start()
	c.waitState(id, "DONE")
	out := c.must("", "bjobs", "-noheader", "-o", "run_time", id)
	sec, err := strconv.Atoi(strings.Fields(out)[0])
	if err != nil {
		t.Fatalf("run_time %q", out)
	}
	if max := int(ended.Sub(before)/time.Second) + 2; sec > max {
		t.Errorf("run time %d s, want at most %d s: the end was taken when xced came back", sec, max)
	}
}

// waitFile waits for a file a job writes and returns its path.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	for i := 0; i < 600; i++ {
		if b, err := os.ReadFile(path); err == nil && (len(b) > 0 || !strings.Contains(filepath.Base(path), "stat.")) {
			return path
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
	return ""
}

// statIDs returns the process group and session of a /proc/PID/stat copy.
func statIDs(t *testing.T, path string) (pgid, sid int) {
	b, _ := os.ReadFile(path)
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 4 {
		t.Fatalf("stat %q", s)
	}
	pgid, _ = strconv.Atoi(f[2])
	sid, _ = strconv.Atoi(f[3])
	return pgid, sid
}

// groupGone checks that no live process is left in process group pgid.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	var left []string
	for i := 0; i < 100; i++ {
		left = left[:0]
		names, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				continue
			}
			s := string(b)
			f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
			if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
				left = append(left, n)
			}
		}
		if len(left) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	t.Errorf("processes of the job's group %d outlived it: %v", pgid, left)
}

// A process a job started that left its process group and session
// (setsid) is still the job's: it ends with the job, when the job ends by
// itself and when it is killed.
func TestEscapedProcessesEndWithTheJob(t *testing.T) {
	c := newCluster(t)
	gone := func(pidFile string) {
		t.Helper()
		var pid string
		for i := 0; i < 100; i++ {
			b, _ := os.ReadFile(filepath.Join(c.work, pidFile))
			if pid = strings.TrimSpace(string(b)); pid != "" {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if pid == "" {
			t.Fatalf("%s: no pid written", pidFile)
		}
		for i := 0; i < 100; i++ {
			if _, err := os.Stat("/proc/" + pid); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		st, _ := os.ReadFile("/proc/" + pid + "/stat")
		if n, err := strconv.Atoi(pid); err == nil {
			syscall.Kill(n, syscall.SIGKILL)
		}
		t.Errorf("process %s that left the job's session outlived the job: %s", pid, st)
	}
	done := c.submit("", "setsid sleep 300 & echo $! > esc1.pid; sleep 1")
	c.waitState(done, "DONE")
	gone("esc1.pid")
	killed := c.submit("", "setsid sleep 300 & echo $! > esc2.pid; sleep 300")
	c.waitState(killed, "RUN")
	for i := 0; i < 100; i++ {
		if b, _ := os.ReadFile(filepath.Join(c.work, "esc2.pid")); len(b) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.must("", "bkill", killed)
	c.waitState(killed, "EXIT")
	gone("esc2.pid")
}
