package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/store"
)

// keptExec is fakeExec whose jobs survive a controller restart (the
// embedded worker kept them running).
type keptExec struct{ *fakeExec }

func (keptExec) NeverStarted(*api.Job) bool { return false }

const enforceConfig = `
[cluster]
name = "test"
default_queue = "normal"
resource_enforce = ["memory", "cpu"]
cgroup_acct = false

[hosts.hostA]

[hosts.hostB]
resource_enforce = ["cpu", "gpu"]

[hosts.hostC]
process_tracking = false
resource_enforce = []

[queues.normal]
`

// setContainment gives each host of a job the cluster's settings with
// the host's overrides, and the memory limit times the job's slots there
// where memory is enforced.
func TestSetContainment(t *testing.T) {
	conf, err := config.Parse("test.toml", []byte(enforceConfig))
	if err != nil {
		t.Fatal(err)
	}
	eff, err := newEffSpec(&api.JobSpec{Queue: "normal", MemLimitKb: 100 << 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hosts := []*api.HostSlots{{Host: "hostA", Slots: 2}, {Host: "hostB", Slots: 1}, {Host: "hostC", Slots: 1}, {Host: "hostA", Slots: 1}}
	setContainment(conf, eff, hosts)
	want := []*api.Containment{
		{ProcessTracking: true, CgroupAcct: true, ResourceEnforce: []string{"memory", "cpu"}, MemLimitKb: 3 * 100 << 10},
		{ProcessTracking: true, CgroupAcct: false, ResourceEnforce: []string{"cpu", "gpu"}},
		{ProcessTracking: false, CgroupAcct: false},
		{ProcessTracking: true, CgroupAcct: true, ResourceEnforce: []string{"memory", "cpu"}, MemLimitKb: 3 * 100 << 10},
	}
	for i, hs := range hosts {
		if !containmentEqual(hs.Containment, want[i]) {
			t.Errorf("%s: %v, want %v", hs.Host, hs.Containment, want[i])
		}
	}

	// No memory limit: no cgroup limit (rusage[mem] is not one in LSF).
	eff, _ = newEffSpec(&api.JobSpec{Queue: "normal", ResReq: []string{"rusage[mem=100]"}}, nil)
	hosts = []*api.HostSlots{{Host: "hostA", Slots: 1}}
	setContainment(conf, eff, hosts)
	if hosts[0].Containment.MemLimitKb != 0 {
		t.Errorf("a job without -M: memory limit %d KB, want none", hosts[0].Containment.MemLimitKb)
	}
}

func containmentEqual(a, b *api.Containment) bool {
	return a.GetProcessTracking() == b.GetProcessTracking() && a.GetCgroupAcct() == b.GetCgroupAcct() &&
		slices.Equal(a.GetResourceEnforce(), b.GetResourceEnforce()) && a.GetMemLimitKb() == b.GetMemLimitKb()
}

// runEnforced starts a controller on st with hostA's 4 cores under
// enforceConfig; stop stops it.
func runEnforced(t *testing.T, st *store.Store, text string) (c *Controller, fx *fakeExec, stop func()) {
	t.Helper()
	conf, err := config.Parse("test.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	fx = &fakeExec{running: map[key]bool{}, autoExit: -1}
	c, err = New(Config{Host: "hostA", Slots: 4, NCPUs: 4, Cluster: conf}, st, keptExec{fx})
	if err != nil {
		t.Fatal(err)
	}
	fx.c = c
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	return c, fx, func() { cancel(); <-done }
}

func (c *Controller) execHosts(id int64) []*api.HostSlots {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.jobs[key{id, 0}]; r != nil {
		return r.job.ExecHosts
	}
	return nil
}

func cpusOf(hs []*api.HostSlots) []int32 {
	var out []int32
	for _, h := range hs {
		out = append(out, h.Cpus...)
	}
	return out
}

// With cpu enforced the controller records the cores lib/sched gave
// each job (HostSlots.cpus) and its containment, hands both to the
// worker with the job, and keeps the cores held across a restart.
func TestCoresAndContainmentAtDispatch(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, fx, stop := runEnforced(t, st, enforceConfig)
	a, err := c.Submit(alice, &api.JobSpec{Command: "sleep 60", MinTasks: 2, MemLimitKb: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Submit(alice, &api.JobSpec{Command: "sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	// Running and launched: the launch follows the dispatch's commit.
	waitFor(t, "both jobs launched", func() bool {
		if c.stateOf(a.JobId, 0) != api.JobState_RUN || c.stateOf(b.JobId, 0) != api.JobState_RUN {
			return false
		}
		fx.mu.Lock()
		defer fx.mu.Unlock()
		return len(fx.launched) >= 2
	})
	if got := cpusOf(c.execHosts(a.JobId)); !slices.Equal(got, []int32{0, 1}) {
		t.Errorf("job a's cores %v, want [0 1]", got)
	}
	if got := cpusOf(c.execHosts(b.JobId)); !slices.Equal(got, []int32{2}) {
		t.Errorf("job b's cores %v, want [2]", got)
	}
	fx.mu.Lock()
	var launched *api.Job
	for _, j := range fx.launched {
		if j.JobId == a.JobId {
			launched = j
		}
	}
	fx.mu.Unlock()
	want := &api.Containment{ProcessTracking: true, CgroupAcct: true, ResourceEnforce: []string{"memory", "cpu"}, MemLimitKb: 2 << 20}
	if launched == nil || len(launched.ExecHosts) != 1 || !containmentEqual(launched.ExecHosts[0].Containment, want) ||
		!slices.Equal(launched.ExecHosts[0].Cpus, []int32{0, 1}) {
		t.Fatalf("the worker was handed %v, want hostA's cores [0 1] and containment %v", launched.GetExecHosts(), want)
	}

	// A restart keeps the cores held: a new job gets the one left.
	stop()
	st.Close()
	st, err = store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, _, stop = runEnforced(t, st, enforceConfig)
	defer stop()
	if got := cpusOf(c.execHosts(a.JobId)); !slices.Equal(got, []int32{0, 1}) {
		t.Errorf("after the restart job a's cores are %v, want [0 1]", got)
	}
	d, err := c.Submit(alice, &api.JobSpec{Command: "sleep 60", MinTasks: 2})
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Submit(alice, &api.JobSpec{Command: "sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "job e running", func() bool { return c.stateOf(e.JobId, 0) == api.JobState_RUN })
	if got := cpusOf(c.execHosts(e.JobId)); !slices.Equal(got, []int32{3}) {
		t.Errorf("after the restart job e's cores are %v, want [3]", got)
	}
	time.Sleep(20 * time.Millisecond) // a few more cycles
	if s := c.stateOf(d.JobId, 0); s != api.JobState_PEND {
		t.Errorf("job d (-n 2, one core free) is %v, want PEND", s)
	}
}

func TestTaskBindEnv(t *testing.T) {
	j := &api.Job{ExecHosts: []*api.HostSlots{
		{Host: "hostA", Slots: 1, Cpus: []int32{0}},
		{Host: "hostB", Slots: 2, Cpus: []int32{3, 2}, Containment: &api.Containment{ProcessTracking: true, ResourceEnforce: []string{"cpu"}}},
		{Host: "hostB", Slots: 1, Cpus: []int32{7}},
	}}
	ct, cpus := taskContainment(j, "hostB")
	if !ct.GetProcessTracking() || !slices.Equal(cpus, []int32{3, 2, 7}) {
		t.Errorf("hostB's task: %v %v", ct, cpus)
	}
	env := taskBindEnv([]string{"A=1", "LSB_BIND_CPU_LIST=0", "B=2"}, cpus)
	if want := []string{"A=1", "B=2", "LSB_BIND_CPU_LIST=2,3,7"}; !slices.Equal(env, want) {
		t.Errorf("task environment %v, want %v", env, want)
	}
	if env := taskBindEnv([]string{"A=1"}, nil); !slices.Equal(env, []string{"A=1"}) {
		t.Errorf("without cores: %v", env)
	}
}
