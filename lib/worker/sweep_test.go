package worker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
		writePids(t, w, jobKey{id, 0}, pid, pid)
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

// TestSweepRootlessStores: the sweep also lists, as each noted user of
// rootless podman, that user's store, and removes there, as that user,
// the containers no job runs; a user is forgotten once their store
// keeps none and no job of theirs runs here.
func TestSweepRootlessStores(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the runtime as another user")
	}
	const nobody = 65534
	w, _ := newWorker(t, "/bin/false")
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o777)
	log := filepath.Join(dir, "calls")
	// Root's store holds nothing of ours; nobody's holds jobs 5 and 6.
	script := "#!/bin/sh\necho \"$(id -u) $*\" >>" + log + "\ncase \"$1\" in\nps) [ \"$(id -u)\" = 0 ] || printf 'xce-c-5\\nxce-c-6\\n';;\nrm) exit 0;;\nesac\n"
	if err := os.WriteFile(filepath.Join(dir, "podman"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	saved := sweepRuntimes
	sweepRuntimes = []container.Runtime{container.Podman}
	t.Cleanup(func() { sweepRuntimes = saved })

	p6 := &proc{id: 6, uid: nobody, ctr: container.Podman}
	w.mu.Lock()
	w.jobs[jobKey{6, 0}] = p6
	w.mu.Unlock()
	w.noteContainerUser(p6)
	w.noteContainerUser(&proc{id: 7, uid: 0, ctr: container.Podman}) // root's: not noted
	if got := w.containerUsers(); len(got) != 1 || got[0] != nobody {
		t.Fatalf("noted users %v, want [%d]", got, nobody)
	}
	// Root writes first: a log every user may append to.
	fresh := func() { os.WriteFile(log, nil, 0o666); os.Chmod(log, 0o666) }
	fresh()
	calls := func() string {
		b, _ := os.ReadFile(log)
		fresh()
		return strings.TrimSpace(string(b))
	}
	ps := "ps -a --filter label=xce.cluster=c --filter label=xce.host=hostA --format {{.Names}}"
	w.SweepContainers()
	want := "0 " + ps + "\n65534 " + ps + "\n65534 rm -f --ignore --time 0 xce-c-5"
	if got := calls(); got != want {
		t.Errorf("runtime calls:\n%s\nwant:\n%s", got, want)
	}
	if got := w.containerUsers(); len(got) != 1 {
		t.Errorf("a user whose job runs was forgotten: %v", got)
	}
	// Job 6 has ended: its container goes, and so does the user.
	w.mu.Lock()
	delete(w.jobs, jobKey{6, 0})
	w.mu.Unlock()
	w.SweepContainers()
	want = "0 " + ps + "\n65534 " + ps + "\n65534 rm -f --ignore --time 0 xce-c-5\n65534 rm -f --ignore --time 0 xce-c-6"
	if got := calls(); got != want {
		t.Errorf("runtime calls:\n%s\nwant:\n%s", got, want)
	}
	if got := w.containerUsers(); len(got) != 0 {
		t.Errorf("noted users %v after their store was swept clean", got)
	}
	w.SweepContainers()
	if got := calls(); got != "0 "+ps {
		t.Errorf("runtime calls after the user was forgotten: %q", got)
	}
}

// writePids plants a job's pids record as the worker leaves it.
func writePids(t *testing.T, w *Worker, k jobKey, shepherd, pgid int) {
	t.Helper()
	path := filepath.Join(w.JobDir(k.id, k.idx), pidsName)
	if err := os.WriteFile(path, []byte(strconv.Itoa(shepherd)+" "+strconv.Itoa(pgid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}
