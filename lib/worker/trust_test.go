package worker

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"xce/lib/api"
	jobexec "xce/lib/exec"
	"xce/lib/testenv"
)

// What root reads from a job's directory is a regular file of the job's
// user, one link, under the cap; a link to /dev/zero or a FIFO is refused
// at once, without reading or blocking.
func TestReadJobFile(t *testing.T) {
	dir := t.TempDir()
	me := os.Geteuid()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("ok"), 0o644)
	if b, err := readJobFile(good, me); err != nil || string(b) != "ok" {
		t.Fatalf("readJobFile(good) = %q, %v", b, err)
	}
	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, maxJobFile+1), 0o644)
	linked := filepath.Join(dir, "linked")
	os.WriteFile(linked, []byte("x"), 0o644)
	os.Link(linked, filepath.Join(dir, "linked2"))
	bad := map[string]int{zero: me, fifo: me, big: me, linked: me, good: me + 1}
	for path, uid := range bad {
		done := make(chan error, 1)
		go func() { _, err := readJobFile(path, uid); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("readJobFile(%s, uid %d) read it", filepath.Base(path), uid)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("readJobFile(%s) blocks", filepath.Base(path))
		}
	}
}

// fakeShepherd is a shepherd command that says pid on its started pipe
// and then sleeps: a user who took over its shepherd (ptrace) could do so.
func fakeShepherd(t *testing.T, pid int) []string {
	script := filepath.Join(t.TempDir(), "fake-shepherd.sh")
	text := "echo " + strconv.Itoa(pid) + " >&3\nexec 3>&-\nsleep 60\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"/bin/sh", script}
}

// victim is a process group the job's user must not be able to aim root's
// signals at.
func victim(t *testing.T) *exec.Cmd {
	v := exec.Command("sleep", "60")
	v.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := v.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Process.Kill(); v.Wait() })
	return v
}

func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// A shepherd that names another process group as the job's (on its pipe,
// or stored so before a restart) gets no signal sent to it: the group is
// not in the shepherd's session.
func TestForgedPgidRefused(t *testing.T) {
	v := victim(t)
	w, rs := newWorker(t, "")
	w.cfg.Shepherd = fakeShepherd(t, v.Process.Pid)
	if err := w.Start(job(1, "true", t.TempDir())); err != nil {
		t.Fatal(err)
	}
	rep := <-rs.ch
	if rep.Started == nil || int(rep.Started.Pid) != v.Process.Pid {
		t.Fatalf("report %+v, want the start with the pid the pipe said", rep)
	}
	if err := w.Signal(1, 0, syscall.SIGKILL); err == nil && w.cg == nil {
		t.Error("Signal accepted a process group outside the shepherd's session")
	}
	shepherd := w.ShepherdPid(1, 0)
	t.Cleanup(func() { syscall.Kill(-shepherd, syscall.SIGKILL) }) // its sleep

	// After a restart: the stored pid is the forged one.
	w2, _ := newWorker(t, "")
	w2.cfg.RunDir = w.cfg.RunDir
	j := job(1, "true", "")
	j.Pid, j.ShepherdPid = int32(v.Process.Pid), int32(shepherd)
	w2.Reattach(j)
	if err := w2.Signal(1, 0, syscall.SIGKILL); err == nil && w2.cg == nil {
		t.Error("Signal after Reattach accepted a process group outside the shepherd's session")
	}
	// The shepherd's end kills what is left of the job: not the victim.
	syscall.Kill(shepherd, syscall.SIGKILL)
	ev := rs.finished(t)
	if ev.TermReason != api.TermReason_TERM_CTRL_PID {
		t.Errorf("end %v, want TERM_CTRL_PID", ev)
	}
	if !running(v.Process.Pid) {
		t.Error("the victim was killed")
	}
}

// A shepherd killed with -9: the job ends EXIT 137 with TERM_CTRL_PID, and
// its processes are killed.
func TestShepherdKilled(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	if err := w.Start(job(1, "sleep 60 & sleep 60", t.TempDir())); err != nil {
		t.Fatal(err)
	}
	rep := <-rs.ch
	if rep.Started == nil {
		t.Fatalf("report %+v, want the start", rep)
	}
	pgid := int(rep.Started.Pid)
	syscall.Kill(w.ShepherdPid(1, 0), syscall.SIGKILL)
	ev := rs.finished(t)
	if ev.State != api.JobState_EXIT || ev.ExitStatus != 137 || ev.TermReason != api.TermReason_TERM_CTRL_PID {
		t.Errorf("end %v, want EXIT 137 TERM_CTRL_PID", ev)
	}
	for i := 0; i < 100 && running(pgid); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if ids, err := jobexec.ReadProcIDs(pgid); err == nil && running(pgid) {
		syscall.Kill(-pgid, syscall.SIGKILL)
		t.Errorf("the job's process %d (%+v) outlived its shepherd", pgid, ids)
	}
}

// A job that ended while no worker watched it ends at the time it ended,
// not when a new worker found it.
func TestEndWhileAway(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	if err := w.Start(job(1, "exit 3", t.TempDir())); err != nil {
		t.Fatal(err)
	}
	rs.finished(t) // the first worker's view: the shepherd is gone
	_, status, _ := w.files(1, 0)
	if _, err := os.Stat(status); err != nil {
		t.Fatal(err)
	}
	found := time.Now()
	w2, rs2 := newWorker(t, shep)
	w2.cfg.RunDir = w.cfg.RunDir
	j := job(1, "exit 3", "")
	j.StartTime = found.Add(-time.Hour).UnixNano()
	w2.Reattach(j)
	ev := rs2.finished(t)
	if ev.ExitStatus != 3 || ev.Time >= found.UnixNano() {
		t.Errorf("end %v at %v, want exit 3 before %v", ev, time.Unix(0, ev.Time), found)
	}
}

// The job's directory: root's files in a directory only root can write,
// the user's directory given by descriptor (checked as far as a test
// running as one user can: modes and places).
func TestJobDirLayout(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	if err := w.Start(job(1, "sleep 1", t.TempDir())); err != nil {
		t.Fatal(err)
	}
	<-rs.ch
	if err := w.SetLimits(1, 0, &api.JobSpec{RunLimitSec: 100}); err != nil {
		t.Fatal(err)
	}
	dir := w.JobDir(1, 0)
	for name, mode := range map[string]os.FileMode{"": 0o711 | os.ModeDir, "launch": 0o600, "limits": 0o644,
		"shepherd.log": 0o600, "job": 0o700 | os.ModeDir} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
		} else if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", filepath.Join(dir, name), fi.Mode(), mode)
		}
	}
	rs.finished(t)
}

// A failed pre-exec's PEND_AGAIN comes through as the shepherd recorded
// it (the end checks must not turn it into a FINISH).
func TestPendAgainKept(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	j := job(1, "true", t.TempDir())
	j.Spec.PreExec = "exit 1"
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.Type != api.EventType_PEND_AGAIN {
		t.Errorf("end %v, want PEND_AGAIN", ev)
	}
}

// A worker that restarts before the controller stored the job's pids (the
// started report was lost with the old worker) finds the shepherd through
// its own record and reports the job's real end, not TERM_CTRL_PID.
func TestReattachWithoutStoredPids(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	if err := w.Start(job(1, "sleep 1; exit 4", t.TempDir())); err != nil {
		t.Fatal(err)
	}
	w2, rs2 := newWorker(t, shep)
	w2.cfg.RunDir = w.cfg.RunDir
	j := job(1, "sleep 1; exit 4", "")
	j.StartTime = time.Now().Add(-time.Minute).UnixNano()
	if w2.NeverStarted(j) {
		t.Fatal("a started job without stored pids was taken for never started")
	}
	w2.Reattach(j) // Pid and ShepherdPid unknown to the controller
	ev := rs2.finished(t)
	if ev.ExitStatus != 4 || ev.TermReason == api.TermReason_TERM_CTRL_PID {
		t.Errorf("end: exit %d, %v; want exit 4", ev.ExitStatus, ev.TermReason)
	}
	rs.finished(t)
}

// checkGroup before root signals a job's process group: a group whose
// leader is gone is the job's while a member is in the shepherd's session,
// not another's, and an empty group is errNoGroup (signal 0 says so
// without reading /proc).
func TestCheckGroup(t *testing.T) {
	// A session of its own whose leader leaves a member behind and exits.
	sh := exec.Command("sh", "-c", "sleep 30 </dev/null >/dev/null 2>&1 & echo $!")
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := sh.Output()
	if err != nil {
		t.Fatal(err)
	}
	leader := sh.Process.Pid // reaped: the group has no leader now
	member, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("sh said %q", out)
	}
	defer syscall.Kill(member, syscall.SIGKILL)
	if err := checkGroup(leader, leader); err != nil {
		t.Errorf("a group left with a member in the shepherd's session: %v", err)
	}
	if err := checkGroup(leader, leader+100000); err == nil || errors.Is(err, errNoGroup) {
		t.Errorf("a group in another session: %v, want a refusal", err)
	}

	// A group that is empty: its only process has ended and been reaped.
	one := exec.Command("true")
	one.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := one.Run(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := checkGroup(one.Process.Pid, one.Process.Pid)
		if errors.Is(err, errNoGroup) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an empty group: %v, want errNoGroup", err)
		}
		time.Sleep(10 * time.Millisecond) // its pid was reused meanwhile
	}
}
