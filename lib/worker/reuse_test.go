package worker

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/cgroup"
	"xce/lib/testenv"
)

// reuseWorker is a worker whose jobs get cgroups, the condition of a
// shepherd's reuse; the test is skipped where none can be made.
func reuseWorker(t *testing.T, shep string) (*Worker, *reports) {
	t.Helper()
	w, rs := newWorker(t, shep)
	if w.cg == nil {
		t.Skip("no cgroups here (root and a writable cgroup tree are needed): shepherds are not reused without them")
	}
	return w, rs
}

// withIdleShepherd is a worker that has run job 1, whose shepherd (idle)
// now waits for the next job; dir is the jobs' directory.
func withIdleShepherd(t *testing.T) (w *Worker, rs *reports, shep, dir string, idle int) {
	t.Helper()
	shep = testenv.BuildShepherd(t)
	w, rs = reuseWorker(t, shep)
	dir = t.TempDir()
	if err := w.Start(job(1, "true", dir)); err != nil {
		t.Fatal(err)
	}
	rs.finished(t)
	return w, rs, shep, dir, shepherdOf(w, 1)
}

// shepherdOf is the shepherd the worker recorded for a job.
func shepherdOf(w *Worker, id int64) int {
	pid, _ := w.readPids(jobKey{id, 0})
	return pid
}

// A shepherd that recorded its job's end takes its user's next job; the
// next job sees nothing of the last one's (umask, directory, environment,
// processes), and the idle shepherd waits outside every job's cgroup. An
// idle shepherd killed meanwhile is not handed anything: the next job gets
// a new one. Close lets the idle shepherds go.
func TestShepherdReuse(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := reuseWorker(t, shep)
	dir1, dir2 := t.TempDir(), t.TempDir()

	j1 := job(1, "sleep 300 & echo $! > bg; umask; true", dir1)
	j1.Spec.Umask = 0o077
	j1.Spec.Env = append(j1.Spec.Env, "LEAK=yes")
	j1.Spec.OutputFile = filepath.Join(dir1, "out")
	if err := w.Start(j1); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.State != api.JobState_DONE {
		t.Fatalf("job 1 ended %v: %s", ev.State, ev.Detail)
	}
	first := shepherdOf(w, 1)
	bg, _ := strconv.Atoi(strings.TrimSpace(readOrEmpty(filepath.Join(dir1, "bg"))))
	if bg <= 0 {
		t.Fatal("job 1 did not say its background process")
	}

	j2 := job(2, `umask; pwd; echo "LEAK=$LEAK"; kill -0 `+strconv.Itoa(bg)+` 2>/dev/null && echo alive; true`, dir2)
	j2.Spec.OutputFile = filepath.Join(dir2, "out")
	if err := w.Start(j2); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.State != api.JobState_DONE {
		t.Fatalf("job 2 ended %v: %s", ev.State, ev.Detail)
	}
	if second := shepherdOf(w, 2); second != first || first <= 0 {
		t.Errorf("job 2's shepherd is %d, job 1's %d: want the same process", second, first)
	}
	out := readOrEmpty(filepath.Join(dir2, "out"))
	if want := "0022\n" + dir2 + "\nLEAK=\n"; !strings.Contains(out, want) {
		t.Errorf("job 2 saw\n%s\nwant its output to be\n%s", out, want)
	}
	if strings.Contains(out, "\nalive\n") {
		t.Errorf("job 1's background process was alive in job 2:\n%s", out)
	}

	// Idle, it waits in the idle cgroup, not in job 2's.
	w.idle.mu.Lock()
	icg := w.idle.cg
	w.idle.mu.Unlock()
	if icg == nil {
		t.Fatal("no idle shepherds' cgroup")
	}
	if pids, _ := icg.Pids(); !slices.Contains(pids, first) {
		t.Errorf("the idle cgroup holds %v, not the idle shepherd %d", pids, first)
	}

	// Another user's job is not handed it.
	if s := w.takeIdle(newCredKey(os.Getuid()+1, os.Getgid(), nil)); s != nil {
		t.Error("another user's job would get this user's idle shepherd")
	}

	// Killed while idle: the next job gets a shepherd of its own.
	syscall.Kill(first, syscall.SIGKILL)
	waitGone(t, first, "the killed shepherd is still there")
	if err := w.Start(job(3, "true", dir2)); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.State != api.JobState_DONE {
		t.Fatalf("job 3 ended %v: %s", ev.State, ev.Detail)
	}
	third := shepherdOf(w, 3)
	if third == first || third <= 0 {
		t.Errorf("job 3's shepherd is %d, after %d was killed", third, first)
	}

	w.Close()
	waitGone(t, third, "an idle shepherd outlived the worker's Close")
}

// Where shepherds are not reused (NoShepherdReuse), each job has its own.
func TestShepherdNoReuse(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := reuseWorker(t, shep)
	w.cfg.NoShepherdReuse = true
	dir := t.TempDir()
	for id := int64(1); id <= 2; id++ {
		if err := w.Start(job(id, "true", dir)); err != nil {
			t.Fatal(err)
		}
		if ev := rs.finished(t); ev.State != api.JobState_DONE {
			t.Fatalf("job %d ended %v", id, ev.State)
		}
	}
	if a, b := shepherdOf(w, 1), shepherdOf(w, 2); a == b {
		t.Errorf("both jobs had shepherd %d", a)
	}
}

// A worker killed in a handover (the idle shepherd recorded for the job,
// its go not sent) leaves the job never started, as with a new shepherd:
// the idle one sees its socket close and exits.
func TestKilledDuringHandover(t *testing.T) {
	w, _, shep, dir, idle := withIdleShepherd(t)
	defer func() { crashAt = "" }()
	crashAt = "recorded"
	ran := filepath.Join(dir, "ran")
	j := job(2, "touch "+ran, dir)
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	crashAt = ""
	if got := shepherdOf(w, 2); got != idle {
		t.Fatalf("job 2 was recorded with shepherd %d, not the idle %d", got, idle)
	}
	w2, _ := newWorker(t, shep)
	w2.cfg.RunDir = w.cfg.RunDir
	for deadline := time.Now().Add(10 * time.Second); !w2.NeverStarted(j); {
		if time.Now().After(deadline) {
			t.Fatal("the job still looks started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(ran); err == nil {
		t.Error("the job ran")
	}
}

// abandon closes the worker's ends of its shepherds' sockets, as the
// worker's death would: busy shepherds exit after their jobs, idle ones
// at once.
func abandon(w *Worker) {
	w.mu.Lock()
	for _, p := range w.jobs {
		if p.sh != nil {
			p.sh.letGo()
		}
	}
	w.mu.Unlock()
	w.closeIdle()
}

func readOrEmpty(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// waitGone waits until process pid has gone (been reaped), and fails the
// test with msg after 10 s.
func waitGone(t *testing.T, pid int, msg string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); processExists(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
	}
}

// processExists reports whether pid is a process that has not been reaped.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// A worker that goes while a handed shepherd runs a job: the shepherd
// runs the job to its end and exits (its socket closed), and the
// restarted worker reports the job's real end, as with a new shepherd.
func TestHandedShepherdOutlivesWorker(t *testing.T) {
	w, _, shep, dir, idle := withIdleShepherd(t)
	j := job(2, "sleep 1; exit 6", dir)
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	if got := shepherdOf(w, 2); got != idle {
		t.Fatalf("job 2 runs in shepherd %d, not the idle %d", got, idle)
	}
	abandon(w)
	w2, rs2 := newWorker(t, shep)
	w2.cfg.RunDir = w.cfg.RunDir
	j.ShepherdPid = int32(idle)
	if w2.NeverStarted(j) {
		t.Fatal("a running job looks never started")
	}
	w2.Reattach(j)
	if ev := rs2.finished(t); ev.ExitStatus != 6 {
		t.Errorf("the reattached job ended with %d (%s), want 6", ev.ExitStatus, ev.Detail)
	}
	waitGone(t, idle, "the shepherd lives on after its job without a worker")
}

// A job whose cgroup is in the cpuset hierarchy too (resource_enforce cpu):
// its shepherd, kept idle, leaves that cgroup in every hierarchy, so the
// job's cgroup is removed at its end, and the next job of the user still
// gets the kept shepherd.
func TestShepherdReuseLeavesEveryHierarchy(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := reuseWorker(t, shep)
	if w.cg.Version() != cgroup.V1 || !w.cg.Has("cpuset") {
		t.Skip("no cgroup v1 cpuset hierarchy here")
	}
	w.cfg.Containment = func(*api.Job) *api.Containment {
		return &api.Containment{ProcessTracking: true, CgroupAcct: true, ResourceEnforce: []string{"cpu"}}
	}
	dir := t.TempDir()
	start := func(id int64) {
		j := job(id, "sleep 0.3", dir)
		j.ExecHosts[0].Cpus = []int32{0}
		if err := w.Start(j); err != nil {
			t.Fatal(err)
		}
	}
	start(1)
	var dirs []string
	for deadline := time.Now().Add(5 * time.Second); dirs == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("job 1 has no cgroup")
		}
		w.mu.Lock()
		if p := w.jobs[jobKey{1, 0}]; p != nil && p.cg != nil {
			dirs = []string{p.cg.Dir("freezer"), p.cg.Dir("cpuset")}
		}
		w.mu.Unlock()
	}
	if ev := rs.finished(t); ev.State != api.JobState_DONE {
		t.Fatalf("job 1 ended %v: %s", ev.State, ev.Detail)
	}
	// Removed while its shepherd waits idle.
	for _, d := range dirs {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(d); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				procs, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
				t.Errorf("job 1's cgroup %s is still there, holding %q", d, procs)
				break
			}
		}
	}
	start(2)
	if ev := rs.finished(t); ev.State != api.JobState_DONE {
		t.Fatalf("job 2 ended %v: %s", ev.State, ev.Detail)
	}
	if a, b := shepherdOf(w, 1), shepherdOf(w, 2); a != b {
		t.Errorf("jobs 1 and 2 had shepherds %d and %d, want one", a, b)
	}
}

// Two workers on one machine (hosts a provider runs side by side) keep
// their idle shepherds apart: one making its idle cgroup does not empty
// the other's.
func TestIdleShepherdsPerHost(t *testing.T) {
	w, rs, shep, dir, idle := withIdleShepherd(t)
	wb, rsb := reuseWorker(t, shep)
	wb.cfg.Host = "hostB"
	jb := job(1, "true", t.TempDir())
	jb.ExecHosts[0].Host = "hostB"
	if err := wb.Start(jb); err != nil {
		t.Fatal(err)
	}
	rsb.finished(t)
	if err := w.Start(job(2, "true", dir)); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.State != api.JobState_DONE {
		t.Fatalf("job 2 ended %v: %s", ev.State, ev.Detail)
	}
	if got := shepherdOf(w, 2); got != idle {
		t.Errorf("job 2 ran in shepherd %d, not in the idle %d that another host's worker left alone", got, idle)
	}
}

// A job reattached after a restart that came before its process group was
// recorded (the pids record says none, nor does the controller) is still
// killed by bkill: through its cgroup, which holds it.
func TestReattachedWithoutGroupIsKilled(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, _ := reuseWorker(t, shep)
	dir := t.TempDir()
	j := job(1, "sleep 60", dir)
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	var sp int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if s, pg := w.readPids(jobKey{1, 0}); pg > 0 {
			sp = s
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job did not start")
		}
	}
	abandon(w)
	// As a crash between the start and its record would have left it.
	if err := os.WriteFile(filepath.Join(w.JobDir(1, 0), pidsName), []byte(strconv.Itoa(sp)+" 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w2, rs2 := newWorker(t, shep)
	w2.cfg.RunDir = w.cfg.RunDir
	j.StartTime = time.Now().UnixNano()
	w2.Reattach(j)
	if err := w2.Terminate(1, 0, api.TermReason_TERM_OWNER); err != nil {
		t.Fatal(err)
	}
	if ev := rs2.finished(t); ev.State != api.JobState_EXIT {
		t.Errorf("the reattached job ended %v (%d), want EXIT", ev.State, ev.ExitStatus)
	}
}
