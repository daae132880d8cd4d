package tests

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"xce/lib/cgroup"
	"xce/lib/testenv"
)

// Containment (issue 30): every job in a cgroup of its own, tried as the
// job's user (xcetest1) would.

// cgCluster starts a cluster whose worker puts jobs in cgroups, usable by
// other users; skipped unless root on a host where cgroups can be made.
func cgCluster(t *testing.T, args ...string) (*cluster, int) {
	t.Helper()
	uid := testUser(t, "xcetest1")
	probe := fmt.Sprintf("xce-e2e-probe-%d", os.Getpid())
	m, err := cgroup.New(cgroup.Config{Cluster: "probe", Parent: probe})
	if err != nil {
		t.Skipf("no cgroups the worker could make here: %v", err)
	}
	m.Close()
	testenv.RemoveCgroupTree(probe)
	c := newCluster(t, args...)
	os.Chmod(c.dir, 0o755)
	os.Chmod(c.work, 0o777)
	if !strings.Contains(c.log.String(), "a cgroup per job") {
		t.Fatalf("xced does not say it puts jobs in cgroups:\n%s", c.log)
	}
	return c, uid
}

// cgDir is job id's cgroup directory in hierarchy ctrl (v1), or in the
// unified tree.
func cgDir(c *cluster, id, ctrl string) string {
	var parent string
	for _, e := range c.env {
		if p, ok := strings.CutPrefix(e, "XCE_CGROUP_PARENT="); ok {
			parent = p
		}
	}
	rel := filepath.Join(parent, "xce", "xce", "job."+id+".0")
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", ctrl, "cgroup.procs")); err == nil {
		return filepath.Join("/sys/fs/cgroup", ctrl, rel)
	}
	return filepath.Join("/sys/fs/cgroup", rel)
}

func cgPids(t *testing.T, dir string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		p, _ := strconv.Atoi(f)
		pids = append(pids, p)
	}
	return pids
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// cpuTicks is a process's user+system time (USER_HZ), -1 when it is gone.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// alive says whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// busyScript leaves two busy loops behind that left the job's session
// (setsid) and were double-forked away from the job's tree.
const busyScript = `setsid sh -c '(sh -c "while :; do :; done" &) ; (sh -c "while :; do :; done" &)' ; sleep 1000`

// bstop freezes every process of the job, those that called setsid and
// double-forked included; bresume thaws them; bkill leaves nothing.
func TestCgroupStopResumeKill(t *testing.T) {
	c, uid := cgCluster(t)
	id := submitAs(t, c, uid, "-o", "/dev/null", busyScript)
	c.waitState(id, "RUN")
	dir := cgDir(c, id, "freezer")
	var pids []int
	waitFor(t, "the job's processes in its cgroup", func() bool { pids = cgPids(t, dir); return len(pids) >= 5 })
	// The busy loops: the processes that use CPU.
	var busy []int
	waitFor(t, "the busy loops", func() bool {
		busy = busy[:0]
		for _, p := range cgPids(t, dir) {
			if cpuTicks(p) >= 3 {
				busy = append(busy, p)
			}
		}
		return len(busy) >= 2
	})
	c.must("", "bstop", id)
	c.waitState(id, "USUSP")
	time.Sleep(200 * time.Millisecond)
	before := map[int]int64{}
	for _, p := range busy {
		before[p] = cpuTicks(p)
	}
	time.Sleep(500 * time.Millisecond)
	for _, p := range busy {
		if now := cpuTicks(p); now != before[p] {
			t.Errorf("pid %d's CPU time went on while the job was stopped: %d -> %d", p, before[p], now)
		}
	}
	c.must("", "bresume", id)
	c.waitState(id, "RUN")
	for _, p := range busy {
		waitFor(t, fmt.Sprintf("pid %d's CPU time to go on after bresume (it was %d)", p, before[p]), func() bool {
			return cpuTicks(p) > before[p]
		})
	}
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
	waitFor(t, "the job's processes to go", func() bool {
		for _, p := range pids {
			if alive(p) {
				return false
			}
		}
		return true
	})
	waitFor(t, "the job's cgroup to be removed", func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) })
}

// A setuid program the job started runs as another user, which the
// shepherd cannot signal: the worker kills it with the cgroup.
func TestCgroupSetuidChildKilled(t *testing.T) {
	c, uid := cgCluster(t)
	other := testUser(t, "xcetest2")
	bin := filepath.Join(c.dir, "suidsleep")
	in, err := os.Open("/bin/sleep")
	if err != nil {
		t.Skip(err)
	}
	out, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(out, in)
	out.Close()
	in.Close()
	os.Chown(bin, other, other)
	syscall.Chmod(bin, 0o4755)
	id := submitAs(t, c, uid, "-o", "/dev/null", bin+" 1000 & sleep 1000")
	c.waitState(id, "RUN")
	dir := cgDir(c, id, "freezer")
	var suid int
	waitFor(t, "the job's processes", func() bool { return len(cgPids(t, dir)) >= 3 })
	time.Sleep(200 * time.Millisecond)
	func() bool {
		for _, p := range cgPids(t, dir) {
			// Its effective uid (/proc/PID is root's: it is not dumpable).
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
			if m := regexp.MustCompile(`(?m)^Uid:\s+\d+\s+(\d+)`).FindSubmatch(b); m != nil && string(m[1]) == strconv.Itoa(other) {
				suid = p
				return true
			}
		}
		return false
	}()
	if suid == 0 {
		for _, p := range cgPids(t, dir) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
			cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			t.Logf("pid %d %q: %s %s", p, cl, regexp.MustCompile(`(?m)^Uid:.*$`).Find(b), regexp.MustCompile(`(?m)^NoNewPrivs:.*$`).Find(b))
		}
		fi, _ := os.Stat(bin)
		t.Fatalf("no process of uid %d in the job's cgroup (%v %v)", other, fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid)
	}
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
	waitFor(t, "the setuid child to die", func() bool { return !alive(suid) })
}

var regexpMaxMem = regexp.MustCompile(`MAX MEM: (\d+) (Mbytes|Kbytes|Gbytes)`)

// The peak is the cgroup's: 300 MB held for a fraction of a second, far
// shorter than the shepherd's sampling, shows in bjobs -l.
func TestCgroupPeakMemory(t *testing.T) {
	needPerl(t)
	c, uid := cgCluster(t)
	id := submitAs(t, c, uid, "-o", "/dev/null", `perl -e '$x = "a" x (300 << 20); select(undef, undef, undef, 0.2); exit 0'`)
	c.waitState(id, "DONE")
	l := c.must("", "bjobs", "-l", id)
	m := regexpMaxMem.FindStringSubmatch(l)
	if m == nil {
		t.Fatalf("no MAX MEM in bjobs -l:\n%s", l)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	if m[2] == "Gbytes" {
		v *= 1024
	}
	if m[2] == "Kbytes" {
		v /= 1024
	}
	if v < 300 {
		t.Errorf("MAX MEM %s %s, want at least 300 Mbytes:\n%s", m[1], m[2], l)
	}
	// bacct's MEM is the same peak, from the job's end.
	acct := c.must("", "bacct", "-l", id)
	if m := regexp.MustCompile(`(?m)^\s+[\d.]+\s+\d+\s+\d+\s+\w+\s+[\d.]+\s+(\d+)M\s+\d+M$`).FindStringSubmatch(acct); m == nil {
		t.Errorf("no MEM in bacct -l:\n%s", acct)
	} else if n, _ := strconv.Atoi(m[1]); n < 300 {
		t.Errorf("bacct MEM %sM, want at least 300M:\n%s", m[1], acct)
	}
}

// With memory enforced, a job past its -M is killed by the kernel inside
// its cgroup and ends TERM_MEMLIMIT; the job beside it runs on.
func TestCgroupMemoryEnforced(t *testing.T) {
	needPerl(t)
	conf := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(conf, []byte("[cluster]\nresource_enforce = [\"memory\"]\n\n[queues.normal]\npriority = 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, uid := cgCluster(t, "--config", conf)
	beside := submitAs(t, c, uid, "-o", "/dev/null", "sleep 4")
	over := submitAs(t, c, uid, "-o", "/dev/null", "-M", "64MB", `perl -e '$x = "a" x (300 << 20); sleep 30'`)
	c.waitState(over, "EXIT")
	if r := exitReason(c, over); !strings.Contains(r, "TERM_MEMLIMIT") {
		t.Errorf("exit reason %q, want TERM_MEMLIMIT\n%s", r, c.must("", "bjobs", "-l", over))
	}
	if s := c.stat(beside); s != "RUN" && s != "DONE" {
		t.Errorf("the job beside it is %s", s)
	}
	c.waitState(beside, "DONE")
}

// cgMemLimit is a job's cgroup memory limit in bytes (-1: none), v1 or v2.
func cgMemLimit(t *testing.T, c *cluster, id string) int64 {
	t.Helper()
	dir := cgDir(c, id, "memory")
	file := filepath.Join(dir, "memory.limit_in_bytes")
	if _, err := os.Stat(file); err != nil {
		file = filepath.Join(dir, "memory.max")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(v, 10, 64)
	if v == "max" || err == nil && n >= 1<<62 {
		return -1
	}
	if err != nil {
		t.Fatalf("%s: %q", file, v)
	}
	return n
}

// With memory enforced, a job's cgroup limit is its -M times its slots
// on the host (LSF without bsub -hl), and bmod -M of the running job
// changes it the same way.
func TestCgroupMemoryLimitSlotsBmod(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(conf, []byte("[cluster]\nresource_enforce = [\"memory\"]\n\n[queues.normal]\npriority = 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, uid := cgCluster(t, "--config", conf)
	stop := filepath.Join(c.work, "stop")
	id := submitAs(t, c, uid, "-o", "/dev/null", "-n", "2", "-M", "64MB", "while [ ! -e "+stop+" ]; do sleep 0.05; done")
	c.waitState(id, "RUN")
	var lim int64
	waitFor(t, "the job's cgroup", func() bool {
		_, err := os.Stat(cgDir(c, id, "memory"))
		return err == nil
	})
	if lim = cgMemLimit(t, c, id); lim != 128<<20 {
		t.Errorf("cgroup memory limit of -n 2 -M 64MB: %d, want %d", lim, 128<<20)
	}
	c.must("", "bmod", "-M", "100MB", id)
	waitFor(t, "the cgroup's new limit", func() bool { lim = cgMemLimit(t, c, id); return lim == 200<<20 })
	os.WriteFile(stop, nil, 0o644)
	c.waitState(id, "DONE")
}

// The job cannot raise its own limit or move itself out of its cgroup:
// its files are root's.
func TestCgroupJobCannotEscape(t *testing.T) {
	c, uid := cgCluster(t)
	out := filepath.Join(c.work, "escape.out")
	script := `d=$(grep -E '^[0-9]+:memory:' /proc/self/cgroup | cut -d: -f3); f=$(grep -E '^[0-9]+:freezer:' /proc/self/cgroup | cut -d: -f3)
echo "mem=$d freezer=$f"
echo 99999999999 > /sys/fs/cgroup/memory$d/memory.limit_in_bytes && echo RAISED
echo $$ > /sys/fs/cgroup/freezer/cgroup.procs && echo MOVED-ROOT
echo $$ > /sys/fs/cgroup/freezer$f/../cgroup.procs && echo MOVED-PARENT
echo 1 > /sys/fs/cgroup/freezer$f/notify_on_release && echo WROTE
grep -E '^[0-9]+:freezer:' /proc/self/cgroup
exit 0`
	id := submitAs(t, c, uid, "-o", out, script)
	c.waitState(id, "DONE")
	b, _ := os.ReadFile(out)
	for _, bad := range []string{"RAISED", "MOVED", "WROTE"} {
		if regexp.MustCompile(`(?m)^` + bad).Match(b) {
			t.Errorf("the job got out: %s\n%s", bad, b)
		}
	}
	if !strings.Contains(string(b), "job."+id+".0") {
		t.Errorf("the job's output does not show it in its cgroup:\n%s", b)
	}
}

// A job that kills its shepherd leaves nothing behind: what it moved out
// of its session dies with the cgroup.
func TestCgroupShepherdKilled(t *testing.T) {
	c, uid := cgCluster(t)
	id := submitAs(t, c, uid, "-o", "/dev/null", `setsid sleep 1000 & sleep 0.5; kill -KILL $LSB_JOBRES_PID; sleep 1000`)
	dir := cgDir(c, id, "freezer")
	var pids []int
	waitFor(t, "the job in its cgroup", func() bool {
		if p := cgPids(t, dir); len(p) > 0 {
			pids = append(pids, p...)
		}
		return c.stat(id) == "EXIT"
	})
	waitFor(t, "the job's processes to go", func() bool {
		for _, p := range pids {
			if alive(p) {
				return false
			}
		}
		return true
	})
	// The empty cgroup is removed just after the job's end is reported.
	waitFor(t, "the job's cgroup to be removed", func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) })
}

// A job that stops its shepherd still meets its run limit: the worker
// ends it, and what it moved out of its session, itself.
func TestCgroupShepherdStoppedRunLimit(t *testing.T) {
	// The queue's run limit, in seconds (-W counts minutes).
	conf := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(conf, []byte("[queues.normal]\npriority = 30\ndefault_run_limit = \"5s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, uid := cgCluster(t, "--config", conf)
	id := submitAs(t, c, uid, "-o", "/dev/null", `setsid sleep 1000 & sleep 0.5; kill -STOP $LSB_JOBRES_PID; sleep 1000`)
	dir := cgDir(c, id, "freezer")
	c.waitState(id, "RUN")
	var pids []int
	waitFor(t, "the job's processes", func() bool { pids = cgPids(t, dir); return len(pids) >= 3 })
	c.waitStateWithin(id, 3*time.Minute, "EXIT")
	if r := exitReason(c, id); !strings.Contains(r, "TERM_RUNLIMIT") {
		t.Errorf("exit reason %q, want TERM_RUNLIMIT", r)
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("pid %d outlived the job", p)
		}
	}
}

// A worker that cannot make cgroups (here: not root) runs jobs as before
// and says why at its start.
func TestCgroupFallbackSaysSo(t *testing.T) {
	uid := testUser(t, "xcetest1")
	dir, err := os.MkdirTemp("", "xce-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o700)
	os.Chown(state, uid, uid)
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	os.Chown(work, uid, uid)
	cmd := exec.Command(filepath.Join(binDir, "xced"), "--dir", state, "--slots", "2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProcess(cmd) })
	c := &cluster{t: t, dir: dir, work: work}
	waitFor(t, "xced as "+strconv.Itoa(uid), func() bool { return c.runAs(uid, "", "bqueues").code == 0 })
	id := submitAs(t, c, uid, "-o", filepath.Join(work, "out"), "echo ran")
	c.waitState(id, "DONE")
	if b, _ := os.ReadFile(filepath.Join(work, "out")); !strings.Contains(string(b), "ran") {
		t.Errorf("the job's output: %q", b)
	}
	stopProcess(cmd)
	if !strings.Contains(log.String(), "job containment: process tree") || !strings.Contains(log.String(), "does not run as root") {
		t.Errorf("xced did not say it runs without cgroups, and why:\n%s", log.String())
	}
}
