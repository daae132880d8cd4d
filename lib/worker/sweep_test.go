package worker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"xce/lib/container"
)

// fakeRuntime puts a podman on PATH that logs its arguments to the
// returned file and, for ps, lists names (or hangs when hang is set).
func fakeRuntime(t *testing.T, names string, hang bool) (log string) {
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	ps := "printf '" + names + "'"
	if hang {
		ps = "exec sleep 1000"
	}
	script := "#!/bin/sh\necho \"$*\" >>" + log + "\ncase \"$1\" in\nps) " + ps + ";;\nrm) exit 0;;\nesac\n"
	if err := os.WriteFile(filepath.Join(dir, "podman"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	saved := sweepRuntimes
	sweepRuntimes = []container.Runtime{container.Podman}
	t.Cleanup(func() { sweepRuntimes = saved })
	return log
}

// TestSweepContainers: at the worker's start, the containers of this
// cluster and host whose job the worker does not watch and whose
// shepherd is gone are removed; a watched job's, a live shepherd's and
// names that are not a job's of this cluster are left.
func TestSweepContainers(t *testing.T) {
	w, _ := newWorker(t, "/bin/false")
	log := fakeRuntime(t, `xce-c-5\nxce-c-6-2\nxce-c-7\nxce-c-9\nsomething-else\nxce-other-8\n`, false)
	w.mu.Lock()
	w.jobs[jobKey{6, 2}] = &proc{id: 6, idx: 2}
	w.mu.Unlock()
	// Job 7's shepherd lives (a session leader named as one).
	sh := exec.Command("/bin/sleep", "100")
	sh.Args[0] = "xce-shepherd"
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Process.Kill(); sh.Wait() })
	// Job 9's shepherd is gone: its record names a pid that is not one.
	for id, pid := range map[int64]int{7: sh.Process.Pid, 9: 1} {
		os.MkdirAll(w.JobDir(id, 0), 0o700)
		w.writePids(jobKey{id, 0}, pid, pid)
	}
	w.SweepContainers()
	b, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		"ps -a --filter label=xce.cluster=c --filter label=xce.host=hostA --format {{.Names}}",
		"rm -f --ignore --time 0 xce-c-5",
		"rm -f --ignore --time 0 xce-c-9",
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("runtime calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

// TestSweepHungRuntime: a runtime whose listing hangs is killed at the
// timeout and the sweep returns, removing nothing.
func TestSweepHungRuntime(t *testing.T) {
	w, _ := newWorker(t, "/bin/false")
	log := fakeRuntime(t, "", true)
	saved := sweepListTimeout
	sweepListTimeout = 100 * time.Millisecond
	t.Cleanup(func() { sweepListTimeout = saved })
	w.SweepContainers()
	b, _ := os.ReadFile(log)
	if calls := strings.TrimSpace(string(b)); strings.Contains(calls, "\nrm ") || !strings.HasPrefix(calls, "ps ") {
		t.Errorf("runtime calls: %q, want one ps and no rm", calls)
	}
}
