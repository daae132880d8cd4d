package worker

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"xce/lib/api/rpc"
	"xce/lib/container"
	"xce/lib/testenv"
)

// TestTrustedScript: a script run as another user by root must be
// changeable by no one but root and that user.
func TestTrustedScript(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to own files as others")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	good := filepath.Join(base, "good")
	open := filepath.Join(base, "open")
	sticky := filepath.Join(base, "sticky")
	for dir, mode := range map[string]os.FileMode{good: 0o755, open: 0o777, sticky: 0o777 | os.ModeSticky} {
		os.Mkdir(dir, 0o755)
		os.Chmod(dir, mode)
		os.WriteFile(filepath.Join(dir, "s"), []byte("#!/bin/sh\n"), 0o755)
	}
	os.WriteFile(filepath.Join(good, "writable"), []byte("#!/bin/sh\n"), 0o755)
	os.Chmod(filepath.Join(good, "writable"), 0o777)
	os.WriteFile(filepath.Join(good, "theirs"), []byte("#!/bin/sh\n"), 0o755)
	os.Chown(filepath.Join(good, "theirs"), 4242, 4242)
	os.WriteFile(filepath.Join(good, "plain"), []byte("data\n"), 0o644)
	os.Symlink(filepath.Join(open, "s"), filepath.Join(good, "link"))
	for _, c := range []struct {
		path string
		uid  int
		ok   bool
	}{
		{filepath.Join(good, "s"), 65534, true},
		{filepath.Join(good, "s"), 0, true},
		{filepath.Join(sticky, "s"), 65534, true},
		{filepath.Join(open, "s"), 65534, false},
		{filepath.Join(good, "writable"), 65534, false},
		{filepath.Join(good, "theirs"), 65534, false},
		{filepath.Join(good, "theirs"), 4242, true},
		{filepath.Join(good, "theirs"), 0, false},
		{filepath.Join(good, "link"), 65534, false},
		{filepath.Join(good, "plain"), 65534, false},
		{"relative/s", 65534, false},
	} {
		err := trustedScript(c.path, c.uid)
		if (err == nil) != c.ok {
			t.Errorf("trustedScript(%s, %d) = %v, want ok=%v", c.path, c.uid, err, c.ok)
		}
	}
}

// TestExecDriver: a job's exec_driver scripts run as its context user:
// the starter once, when the job's process asks on its task socket,
// with the job's arguments, its output and exit status the job's; the
// controller at each signal, with the signal's name; the monitor
// periodically. A starter others could change is refused.
func TestExecDriver(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the driver as another user")
	}
	shep := testenv.BuildShepherd(t)
	w, _ := newWorker(t, shep)
	saved := driverMonitorInterval
	driverMonitorInterval = 20 * time.Millisecond
	t.Cleanup(func() { driverMonitorInterval = saved })

	base := t.TempDir()
	os.Chmod(filepath.Dir(base), 0o755)
	os.Chmod(base, 0o755)
	scripts, out := filepath.Join(base, "scripts"), filepath.Join(base, "out")
	os.Mkdir(scripts, 0o755)
	os.Mkdir(out, 0o755)
	os.Chmod(out, 0o777)
	write := func(name, body string) string {
		p := filepath.Join(scripts, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	starter := write("starter", `echo "starter $(id -u) $LSB_CONTAINER_NAME $*"; echo oops >&2; exit 3`+"\n")
	controller := write("controller", `echo "$1 $(id -u) $LSB_CONTAINER_NAME $LSB_JOBID" >>`+out+"/control\n")
	monitor := write("monitor", `echo "monitor $(id -u)" >`+out+"/monitor\n")

	dir := t.TempDir()
	j := job(1, "sleep 60", dir)
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	k := jobKey{1, 0}
	// Before the directories go: the job ends (which stops its monitor)
	// and a script run already under way finishes writing into out.
	t.Cleanup(func() {
		w.Signal(1, 0, syscall.SIGKILL)
		for range 1000 {
			w.mu.Lock()
			_, running := w.jobs[k]
			w.mu.Unlock()
			if !running {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		for range 100 {
			if os.RemoveAll(out) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	w.mu.Lock()
	p := w.jobs[k]
	p.ctr = container.Docker
	p.driver = &container.ExecDriver{User: "nobody", Starter: starter, Controller: controller, Monitor: monitor}
	w.mu.Unlock()
	w.driverMonitor(k, p)

	sock := filepath.Join(w.JobDir(1, 0), TaskSocketName)
	c := taskClient(t, sock, os.Getuid())
	env := []string{"PATH=/usr/bin:/bin", "LSB_CONTAINER_NAME=xce-c-1"}
	r := runLaunch(t, c, &rpc.TaskLaunch{Argv: []string{"docker", "run", "img", "true"}, Env: env, Cwd: dir, DriverStarter: true}, 0)
	if r.err != nil || len(r.ids) != 1 {
		t.Fatalf("the starter: %v, ids %v", r.err, r.ids)
	}
	id := r.ids[0]
	if got, want := r.out[id], "starter 65534 xce-c-1 docker run img true\n"; got != want {
		t.Errorf("the starter wrote %q, want %q", got, want)
	}
	if x := r.exits[id]; x == nil || x.ExitCode != 3 || r.stderr != "oops\n" {
		t.Errorf("the starter ended %v with stderr %q, want exit code 3 and oops", x, r.stderr)
	}
	r = runLaunch(t, c, &rpc.TaskLaunch{Argv: []string{"x"}, Env: env, DriverStarter: true}, 0)
	if r.err == nil || !strings.Contains(r.err.Error(), "has run already") {
		t.Errorf("a second starter: %v, want refused", r.err)
	}

	w.Signal(1, 0, syscall.SIGSTOP)
	w.Signal(1, 0, syscall.SIGCONT)
	// (Each signal's controller runs in the background: in any order.)
	waitFile(t, filepath.Join(out, "control"), "CONT 65534 xce-c-1 1", "STOP 65534 xce-c-1 1")
	waitFile(t, filepath.Join(out, "monitor"), "monitor 65534")

	// A starter others could change is not run as the context user.
	os.Chmod(scripts, 0o777)
	w.mu.Lock()
	p.driverStarted = false
	w.mu.Unlock()
	r = runLaunch(t, c, &rpc.TaskLaunch{Argv: []string{"x"}, Env: env, DriverStarter: true}, 0)
	if r.err == nil || !strings.Contains(r.err.Error(), "writable by others") {
		t.Errorf("a starter in a directory anyone can write: %v, want refused", r.err)
	}
}

// waitFile waits for path to hold the lines want, in any order.
func waitFile(t *testing.T, path string, want ...string) {
	t.Helper()
	var lines []string
	for range 500 {
		b, _ := os.ReadFile(path)
		lines = strings.Split(strings.TrimSpace(string(b)), "\n")
		slices.Sort(lines)
		if slices.Equal(lines, want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%s holds %q, want %q", path, lines, want)
}

// TestDriverControlQueuedSignal: a signal asked for before the job's
// start is known waits, and goes at the start; the job's exec_driver
// controller hears of it then, as it does of a signal to a started job.
func TestDriverControlQueuedSignal(t *testing.T) {
	w, _ := newWorker(t, "/bin/true") // nothing here starts a shepherd
	dir := t.TempDir()
	out := filepath.Join(dir, "control")
	controller := filepath.Join(dir, "controller")
	if err := os.WriteFile(controller, []byte("#!/bin/sh\necho \"$1\" >>"+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	k := jobKey{7, 0}
	p := &proc{id: 7, uid: os.Getuid(), gid: os.Getgid(), launching: true, ctr: container.Docker,
		driver: &container.ExecDriver{Controller: controller}}
	w.mu.Lock()
	w.jobs[k] = p
	w.mu.Unlock()
	if err := w.Signal(7, 0, syscall.SIGSTOP); err != nil {
		t.Fatalf("a signal before the start: %v, want it kept for the start", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the controller ran before the job's start")
	}
	// The job's process starts: the signal goes, and the controller runs.
	job := exec.Command("sleep", "30")
	job.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { job.Process.Kill(); job.Wait() })
	w.reportStart(k, p, job.Process.Pid)
	waitFile(t, out, "STOP")
}
