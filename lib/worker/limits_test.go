package worker

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"xce/lib/api"
	"xce/lib/testenv"
)

// New limits that reach the worker before the job's shepherd (the
// controller records a dispatch, then launches; a bmod can come in
// between) are the job's once it runs: here a hard memory limit it is
// over, which ends it TERM_MEMLIMIT instead of letting it finish.
func TestLimitsBeforeStart(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	if err := w.SetLimits(1, 0, &api.JobSpec{MemLimitKb: 1, MemLimitHard: true}); err != nil {
		t.Fatalf("limits for a job not started yet: %v", err)
	}
	if err := w.Start(job(1, "sleep 20", t.TempDir())); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.TermReason != api.TermReason_TERM_MEMLIMIT {
		t.Errorf("the job ended %v %v (%s), want TERM_MEMLIMIT from the limits given before it started", ev.State, ev.TermReason, ev.Detail)
	}
	w.mu.Lock()
	left := len(w.limitsPending)
	w.mu.Unlock()
	if left != 0 {
		t.Errorf("%d pending limits left after the start", left)
	}
}

// With memory enforced by the kernel, the job's cgroup holds its limit
// times its slots on the host, and bmod -M changes it there the same
// way, also for a job that had no limit before.
func TestBmodCgroupMemLimit(t *testing.T) {
	c := &api.Containment{ProcessTracking: true, CgroupAcct: true, ResourceEnforce: []string{"memory"}}
	w, rs := containedWorker(t, c)
	dir := t.TempDir()
	stop := filepath.Join(dir, "stop")
	j := job(1, "while [ ! -e "+stop+" ]; do sleep 0.05; done", dir)
	j.ExecHosts = []*api.HostSlots{{Host: "hostA", Slots: 2}, {Host: "hostB", Slots: 3}, {Host: "hostA", Slots: 1}}
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	defer func() {
		os.WriteFile(stop, nil, 0o644)
		rs.finished(t)
	}()
	w.mu.Lock()
	p := w.jobs[jobKey{1, 0}]
	w.mu.Unlock()
	if p == nil || p.cg == nil {
		t.Fatal("the job has no cgroup")
	}
	if lim, err := p.cg.MemLimit(); err != nil || lim != 0 {
		t.Fatalf("a job without -M: cgroup limit %d %v, want none", lim, err)
	}
	if err := w.SetLimits(1, 0, &api.JobSpec{MemLimitKb: 100 << 10}); err != nil {
		t.Fatal(err)
	}
	// 3 slots here: 300 MB.
	if lim, err := p.cg.MemLimit(); err != nil || lim != 300<<20 {
		t.Errorf("after bmod -M 100MB the cgroup's limit is %d %v, want %d", lim, err, 300<<20)
	}
	w.mu.Lock()
	enforced := p.memEnforced
	w.mu.Unlock()
	if !enforced {
		t.Error("after bmod -M an OOM kill in the cgroup would not end the job TERM_MEMLIMIT")
	}
	if err := w.SetLimits(1, 0, &api.JobSpec{}); err != nil {
		t.Fatal(err)
	}
	if lim, err := p.cg.MemLimit(); err != nil || lim != 0 {
		t.Errorf("after bmod -Mn the cgroup's limit is %d %v, want none", lim, err)
	}
}

// Where the kernel holds the memory limit (its cgroup's: the job's limit
// times its slots here), the shepherd does not enforce the job's -M with
// its own sum, as LSF ignores LSB_MEMLIMIT_ENFORCE under
// LSB_RESOURCE_ENFORCE="memory": a 2-slot job with -M 80MB that holds
// 100 MB runs to its end.
func TestKernelMemoryLimitOnly(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl (the memory-hungry job) is not installed")
	}
	c := &api.Containment{ProcessTracking: true, CgroupAcct: true, ResourceEnforce: []string{"memory"}, MemLimitKb: 2 * 80 << 10}
	w, rs := containedWorker(t, c)
	w.cfg.MemlimitEnforce = true
	// ("a" x N would hold the string twice for a moment.)
	j := job(1, `perl -e '$x = "a"; $x x= (100 << 20); sleep 3'`, t.TempDir())
	j.ExecHosts[0].Slots = 2
	j.Spec.MemLimitKb = 80 << 10
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.State != api.JobState_DONE {
		t.Errorf("the job ended %v %v (%s), want DONE under its cgroup's 160 MB", ev.State, ev.TermReason, ev.Detail)
	}
}

// A job that stops its shepherd does not escape a memory limit LSF
// enforces by sampling (memlimit_enforce): the worker reads the job's
// resident memory from its cgroup and ends it TERM_MEMLIMIT.
func TestSampledMemoryLimitShepherdStopped(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl (the memory-hungry job) is not installed")
	}
	w, rs := containedWorker(t, &api.Containment{ProcessTracking: true, CgroupAcct: true})
	if !w.cg.Has("memory") {
		t.Skip("no memory controller")
	}
	w.cfg.MemlimitEnforce = true
	j := job(1, `kill -STOP $LSB_JOBRES_PID; perl -e '$x = "a"; $x x= (100 << 20); sleep 60'`, t.TempDir())
	j.Spec.MemLimitKb = 32 << 10
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.TermReason != api.TermReason_TERM_MEMLIMIT {
		t.Errorf("the job ended %v %v (%s), want TERM_MEMLIMIT", ev.State, ev.TermReason, ev.Detail)
	}
}
