package worker

import (
	"fmt"
	"xce/lib/testenv"

	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"xce/lib/api"
)

type reports struct {
	mu  sync.Mutex
	got []Report
	ch  chan Report
}

func (r *reports) add(rep Report) {
	r.mu.Lock()
	r.got = append(r.got, rep)
	r.mu.Unlock()
	r.ch <- rep
}

func (r *reports) finished(t *testing.T) *api.Event {
	t.Helper()
	for {
		select {
		case rep := <-r.ch:
			if rep.Finished != nil {
				return rep.Finished
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no finish report")
		}
	}
}

// testCgroupParent is the scratch cgroup parent of this test process's
// workers; TestMain removes it.
var testCgroupParent = fmt.Sprintf("xce-worker-test-%d", os.Getpid())

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveCgroupTree(testCgroupParent)
	os.Exit(code)
}

func newWorker(t *testing.T, shepherd string) (*Worker, *reports) {
	rs := &reports{ch: make(chan Report, 100)}
	w, err := New(Config{
		Host: "hostA", ClusterName: "c", RunDir: t.TempDir(), Shepherd: []string{shepherd},
		KillGrace: time.Second, TerminateInterval: 200 * time.Millisecond, Report: rs.add,
		CgroupParent: testCgroupParent,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w, rs
}

// killAtEnd kills job id when the test ends and waits for its end, so
// that its shepherd, which outlives the worker by design, is not still
// writing in the directories the test's cleanup removes.
func killAtEnd(t *testing.T, w *Worker, rs *reports, id int64) {
	t.Cleanup(func() {
		if w.Signal(id, 0, syscall.SIGKILL) != nil {
			return // it has ended
		}
		for {
			if ev := rs.finished(t); ev.GetJobId() == id {
				return
			}
		}
	})
}

func job(id int64, cmd string, dir string) *api.Job {
	return &api.Job{
		JobId: id, State: api.JobState_RUN, SubmitTime: time.Now().UnixNano(),
		ExecHosts: []*api.HostSlots{{Host: "hostA", Slots: 1}},
		Spec:      &api.JobSpec{Command: cmd, SubmitCwd: dir, Env: []string{"PATH=/usr/bin:/bin"}, Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())},
	}
}

// A job runs to its end through a real shepherd; a termination asked for
// before the shepherd existed still ends the job; a worker that comes back
// finds the real end of a job that ran on without it.
func TestStartTerminateReattach(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	dir := t.TempDir()
	w, rs := newWorker(t, shep)
	if err := w.Start(job(1, "exit 4", dir)); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.ExitStatus != 4 || ev.State != api.JobState_EXIT {
		t.Errorf("exit 4 ended as %v/%d", ev.State, ev.ExitStatus)
	}

	// bkill between the dispatch and the launch.
	if err := w.Terminate(2, 0, api.TermReason_TERM_OWNER); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(job(2, "sleep 30", dir)); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.ExitStatus != 130 && ev.ExitStatus != 143 && ev.ExitStatus != 137 {
		t.Errorf("terminated job ended with %d", ev.ExitStatus)
	}

	// The controller goes away while a job runs; a new worker reattaches.
	if err := w.Start(job(3, "sleep 1; exit 6", dir)); err != nil {
		t.Fatal(err)
	}
	var pid int
	for i := 0; i < 100 && pid == 0; i++ {
		pid = w.ShepherdPid(3, 0)
		time.Sleep(10 * time.Millisecond)
	}
	abandon(w)
	w2, rs2 := newWorker(t, shep)
	w2.cfg.RunDir = w.cfg.RunDir
	j := job(3, "sleep 1; exit 6", dir)
	j.ShepherdPid = int32(pid)
	if w2.NeverStarted(j) {
		t.Fatal("a running job looks never started")
	}
	w2.Reattach(j)
	if ev := rs2.finished(t); ev.ExitStatus != 6 {
		t.Errorf("reattached job ended with %d, want 6", ev.ExitStatus)
	}
	if !w2.NeverStarted(job(9, "true", dir)) {
		t.Error("a job with no files looks started")
	}
}

// A worker killed between starting a shepherd and letting it start the
// job (before or after recording its pid) leaves no job behind: the
// shepherd exits without starting it, and the restarted worker finds the
// job never started, so the controller dispatches it again.
func TestKilledDuringLaunch(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	for _, at := range []string{"started", "recorded"} {
		t.Run(at, func(t *testing.T) {
			defer func() { crashAt = "" }()
			crashAt = at
			dir := t.TempDir()
			w, _ := newWorker(t, shep)
			ran := dir + "/ran"
			j := job(1, "touch "+ran, dir)
			if err := w.Start(j); err != nil {
				t.Fatal(err)
			}
			crashAt = ""
			w2, _ := newWorker(t, shep)
			w2.cfg.RunDir = w.cfg.RunDir
			// The orphaned shepherd exits at once; a restarted worker
			// asks later.
			deadline := time.Now().Add(10 * time.Second)
			for !w2.NeverStarted(j) {
				if time.Now().After(deadline) {
					t.Fatal("the job still looks started")
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			if _, err := os.Stat(ran); err == nil {
				t.Error("the job ran")
			}
			// Dispatched again, it runs.
			w3, rs := newWorker(t, shep)
			w3.cfg.RunDir = w.cfg.RunDir
			if err := w3.Start(job(1, "touch "+ran, dir)); err != nil {
				t.Fatal(err)
			}
			if ev := rs.finished(t); ev.State != api.JobState_DONE {
				t.Errorf("the job dispatched again ended %v", ev.State)
			}
			if _, err := os.Stat(ran); err != nil {
				t.Errorf("the job dispatched again did not run: %v", err)
			}
		})
	}
}

// A job that built a 25,000-level tree in its directory: the cleanup
// removes it all with a few descriptors (the process's limit is set just
// above what it has open), where os.RemoveAll held one a level and failed
// at the limit, leaving the tree.
func TestRemoveDeepTree(t *testing.T) {
	w, _ := newWorker(t, "/bin/true")
	user := w.userDir(7, 0)
	if err := os.MkdirAll(user, 0o700); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(user, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25000 {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatalf("level %d: %v", i, err)
		}
		fd = next
	}
	unix.Close(fd)
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(len(ents) + 32)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	w.Remove(7, 0)
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	if _, err := os.Lstat(w.JobDir(7, 0)); !os.IsNotExist(err) {
		t.Fatalf("the job's directory is left (limit %d descriptors): %v", lim.Cur, err)
	}
}
