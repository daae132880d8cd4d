package worker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/cgroup"
	"xce/lib/testenv"
)

// containedWorker is a worker whose jobs get containment c; skipped
// where it cannot make cgroups or lacks what c enforces.
func containedWorker(t *testing.T, c *api.Containment) (*Worker, *reports) {
	t.Helper()
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	if w.cg == nil {
		t.Skip("the worker cannot make cgroups here")
	}
	for _, kind := range c.ResourceEnforce {
		if !w.cg.CanEnforce(kind) {
			t.Skipf("no controller to enforce %s", kind)
		}
	}
	w.cfg.Containment = func(*api.Job) *api.Containment { return c }
	return w, rs
}

// With cpu enforced, the job's cpuset is exactly its cores, and
// LSB_BIND_CPU_LIST names them.
func TestCpuEnforced(t *testing.T) {
	w, rs := containedWorker(t, &api.Containment{ProcessTracking: true, CgroupAcct: true, ResourceEnforce: []string{"cpu"}})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	j := job(1, "grep Cpus_allowed_list /proc/self/status >"+out+"; echo bind=$LSB_BIND_CPU_LIST >>"+out, dir)
	j.ExecHosts[0].Cpus = []int32{0}
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.State != api.JobState_DONE {
		t.Fatalf("job ended %v: %s", ev.State, ev.Detail)
	}
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), "Cpus_allowed_list:\t0\n") || !strings.Contains(string(b), "bind=0\n") {
		t.Errorf("the job's affinity and LSB_BIND_CPU_LIST:\n%s", b)
	}
}

// With gpu enforced, the job opens its own GPU's device and not
// another's. The "GPUs" are nodes with /dev/zero's and /dev/full's
// numbers in a directory of the test's.
func TestGPUEnforced(t *testing.T) {
	w, rs := containedWorker(t, &api.Containment{ProcessTracking: true, CgroupAcct: true, ResourceEnforce: []string{"gpu"}})
	dev := t.TempDir()
	for name, num := range map[string]uint64{"nvidia0": unix.Mkdev(1, 5), "nvidia1": unix.Mkdev(1, 7)} {
		if err := unix.Mknod(filepath.Join(dev, name), syscall.S_IFCHR|0o666, int(num)); err != nil {
			t.Skipf("mknod: %v", err)
		}
	}
	w.cfg.DevDir = dev
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	j := job(1, "{ head -c1 "+dev+"/nvidia0 >/dev/null && echo own; head -c1 "+dev+"/nvidia1 >/dev/null || echo other-denied; } >"+out+" 2>&1", dir)
	j.ExecHosts[0].Gpus = []int32{0}
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	rs.finished(t)
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), "own\n") || !strings.Contains(string(b), "other-denied\n") {
		t.Errorf("the job's devices:\n%s", b)
	}
}

// The CPU-time limit is the worker's from the job's cgroup: a job that
// stops its shepherd (whose samples would otherwise enforce it) and then
// spins still ends TERM_CPULIMIT.
func TestCPULimitFromCgroup(t *testing.T) {
	w, rs := containedWorker(t, &api.Containment{ProcessTracking: true, CgroupAcct: true})
	if !w.cg.Has("cpuacct") && w.cg.Version() == cgroup.V1 {
		t.Skip("no cpuacct controller")
	}
	dir := t.TempDir()
	j := job(1, "kill -STOP $LSB_JOBRES_PID; while :; do :; done", dir)
	j.Spec.CpuLimitSec = 1
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	ev := rs.finished(t)
	if ev.TermReason != api.TermReason_TERM_CPULIMIT {
		t.Errorf("the job ended %v (%s), want TERM_CPULIMIT", ev.TermReason, ev.Detail)
	}
	if ev.CpuTimeMs < 1000 {
		t.Errorf("CPU time %d ms, under the limit of 1 s", ev.CpuTimeMs)
	}
}

// A worker that adopts a running job after a restart knows its cgroup's
// memory limit from the cgroup, whatever the job's record says: an OOM
// kill there ends the job TERM_MEMLIMIT. The controller's record carries
// no spec, so the adopted job has no backstop for its run limit or
// deadline until the limits the controller sends right after the
// adoption arm it.
func TestAdoptedMemoryLimit(t *testing.T) {
	c := &api.Containment{ProcessTracking: true, CgroupAcct: true, ResourceEnforce: []string{"memory"}, MemLimitKb: 64 << 10}
	w, rs := containedWorker(t, c)
	dir := t.TempDir()
	stop := filepath.Join(dir, "stop")
	j := job(1, "while [ ! -e "+stop+" ]; do sleep 0.05; done", dir)
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	w2, rs2 := newWorker(t, w.cfg.Shepherd[0])
	defer func() {
		// Both workers see the end; each waits for its cgroup's removal
		// (Close).
		os.WriteFile(stop, nil, 0o644)
		rs.finished(t)
		rs2.finished(t)
	}()
	w2.cfg.RunDir = w.cfg.RunDir
	if w2.cg == nil {
		t.Skip("no cgroups")
	}
	// As the controller adopts it: no spec, no containment in the
	// record, none configured.
	w2.Reattach(&api.Job{JobId: 1, State: api.JobState_RUN, StartTime: time.Now().UnixNano(), ShepherdPid: int32(w.ShepherdPid(1, 0))})
	w2.mu.Lock()
	p := w2.jobs[jobKey{1, 0}]
	armed := p != nil && p.limitsChanged != nil
	w2.mu.Unlock()
	if p == nil || p.cg == nil {
		t.Fatal("the adopted job has no cgroup")
	}
	if !p.memEnforced {
		t.Error("the adopted job's memory limit is not known as enforced: an OOM kill would not end it TERM_MEMLIMIT")
	}
	if lim, err := p.cg.MemLimit(); err != nil || lim != 64<<20 {
		t.Errorf("the cgroup's memory limit: %d %v, want %d", lim, err, 64<<20)
	}
	if armed {
		t.Fatal("a job adopted without its spec has a backstop already: the limits' arming is not tested")
	}
	deadline := time.Now().Add(time.Hour).Unix()
	if err := w2.SetLimits(1, 0, &api.JobSpec{RunLimitSec: 600, TermTime: deadline}); err != nil {
		t.Fatal(err)
	}
	w2.mu.Lock()
	armed, run, term := p.limitsChanged != nil, p.runSec, p.termTime
	w2.mu.Unlock()
	if !armed || run != 600 || term != deadline {
		t.Errorf("after its limits: backstop armed %v, run limit %d s, deadline %d; want armed, 600 and %d", armed, run, term, deadline)
	}
}

// A job started again under its id right after its end (a requeue) gets
// a cgroup of its own: the old one, removed after the end was reported,
// is gone before the new one is made, never after.
func TestCgroupRemovedBeforeRerun(t *testing.T) {
	w, rs := containedWorker(t, &api.Containment{ProcessTracking: true, CgroupAcct: true})
	dir := t.TempDir()
	for run := range 3 {
		out := filepath.Join(dir, "cg"+strconv.Itoa(run))
		if err := w.Start(job(1, "grep -E '^[0-9]+:freezer:' /proc/self/cgroup >"+out, dir)); err != nil {
			t.Fatal(err)
		}
		if ev := rs.finished(t); ev.State != api.JobState_DONE {
			t.Fatalf("run %d ended %v: %s", run, ev.State, ev.Detail)
		}
		w.Remove(1, 0)
		b, _ := os.ReadFile(out)
		if !strings.Contains(string(b), "/job.1.0\n") {
			t.Errorf("run %d was not in its cgroup: %q", run, b)
		}
	}
}

// A blaunch task on a host where its job's shepherd does not run joins a
// cgroup made there for the job's tasks, with the job's limits on that
// host: its memory limit and its cores there.
func TestTaskCgroupLimits(t *testing.T) {
	w, _ := newWorker(t, "/bin/true")
	if w.cg == nil {
		t.Skip("the worker cannot make cgroups here")
	}
	if !w.cg.CanEnforce("memory") || !w.cg.CanEnforce("cpu") {
		t.Skip("no memory or cpuset controller")
	}
	ts := &rpc.TaskStart{JobId: 9, Index: 2, Cpus: []int32{0},
		Containment: &api.Containment{ProcessTracking: true, CgroupAcct: true, ResourceEnforce: []string{"memory", "cpu"}, MemLimitKb: 96 << 10}}
	cg, local := w.taskCgroup(ts)
	if cg == nil || local {
		t.Fatalf("task cgroup %v (local %v), want one made here", cg, local)
	}
	defer w.endTaskCgroup(jobKey{9, 2})
	if !strings.HasSuffix(cg.Path(), "/job.9.2") {
		t.Errorf("the task cgroup is %s, want the job's name", cg.Path())
	}
	if lim, err := cg.MemLimit(); err != nil || lim != 96<<20 {
		t.Errorf("the task cgroup's memory limit %d %v, want %d", lim, err, 96<<20)
	}
	if d := cg.Dir("cpuset"); d != "" {
		if b, err := os.ReadFile(filepath.Join(d, "cpuset.cpus")); err != nil || strings.TrimSpace(string(b)) != "0" {
			t.Errorf("the task cgroup's cores %q %v, want 0", b, err)
		}
	}
	// The job's other tasks here join the same one.
	if again, _ := w.taskCgroup(ts); again != cg {
		t.Error("a second task of the job got another cgroup")
	}
}
