package worker

import (
	"xce/lib/testenv"

	"os"
	"sync"
	"testing"
	"time"

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

func newWorker(t *testing.T, shepherd string) (*Worker, *reports) {
	rs := &reports{ch: make(chan Report, 100)}
	w, err := New(Config{
		Host: "hostA", ClusterName: "c", RunDir: t.TempDir(), Shepherd: []string{shepherd},
		KillGrace: time.Second, TerminateInterval: 200 * time.Millisecond, Report: rs.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	return w, rs
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
	if err := w.Terminate(2, 0); err != nil {
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
