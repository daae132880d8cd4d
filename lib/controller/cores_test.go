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

// No core is ever held by two running jobs: identical -n 1 jobs placed
// in one cycle get a core each, as many as the host has; two jobs
// ending while others wait give their cores to two of them, in the
// cycle that takes the ends.
func TestCoresNeverShared(t *testing.T) {
	conf, err := config.Parse("test.toml", []byte(enforceConfig))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fx := &fakeExec{running: map[key]bool{}, autoExit: -1}
	c, err := New(Config{Host: "hostA", Slots: 8, NCPUs: 4, Cluster: conf}, st, keptExec{fx})
	if err != nil {
		t.Fatal(err)
	}
	fx.c = c
	// Submitted before the controller runs: its first cycle places them
	// together.
	var ids []int64
	for range 6 {
		r, err := c.Submit(alice, &api.JobSpec{Command: "sleep 60"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.JobId)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	running := func() []int64 {
		var out []int64
		for _, id := range ids {
			if c.stateOf(id, 0) == api.JobState_RUN {
				out = append(out, id)
			}
		}
		return out
	}
	distinct := func(when string) {
		t.Helper()
		held := map[int32]int64{}
		for _, id := range running() {
			cores := cpusOf(c.execHosts(id))
			if len(cores) != 1 {
				t.Errorf("%s: job %d holds cores %v, want one", when, id, cores)
			}
			for _, core := range cores {
				if other, ok := held[core]; ok {
					t.Errorf("%s: core %d is held by jobs %d and %d", when, core, other, id)
				}
				held[core] = id
			}
		}
	}
	waitFor(t, "four jobs running", func() bool { return len(running()) == 4 })
	distinct("placed in one cycle")

	// Two end and one more is submitted while the cycle starts the two
	// left pending and the new one (4 cores: one of the three pends).
	first := running()
	freed := append(cpusOf(c.execHosts(first[0])), cpusOf(c.execHosts(first[1]))...)
	r, err := c.Submit(alice, &api.JobSpec{Command: "sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, r.JobId)
	fx.end(first[0], 0, 0, 0)
	fx.end(first[1], 0, 0, 0)
	waitFor(t, "two more jobs running", func() bool {
		return c.stateOf(first[0], 0) == api.JobState_DONE && c.stateOf(first[1], 0) == api.JobState_DONE && len(running()) == 4
	})
	distinct("after two ended")
	var took []int32
	for _, id := range running() {
		if !slices.Contains(first, id) {
			took = append(took, cpusOf(c.execHosts(id))...)
		}
	}
	slices.Sort(took)
	slices.Sort(freed)
	if !slices.Equal(took, freed) {
		t.Errorf("the jobs started after two ended hold cores %v, want the freed %v", took, freed)
	}
}

// A job whose host failed may still run there (it is rerun elsewhere or
// ended, and its old instance is ended once the host's worker is back):
// the cores that instance holds are given to no new job until its end is
// reported.
func TestStaleCoresWithheld(t *testing.T) {
	conf, err := config.Parse("test.toml", []byte(enforceConfig))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fx := &fakeExec{running: map[key]bool{}, autoExit: -1}
	c, err := New(Config{Host: "hostA", Slots: 4, NCPUs: 4, Cluster: conf}, st, keptExec{fx})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hostNamed("hostB")
	h.exec, h.attrs, h.slots = keptExec{fx}, &api.Host{Name: "hostB", Ncpus: 4}, 4
	schema := conf.Schema()
	cores := func() []int { return c.schedHost(h, schema).CPUs }
	if got := cores(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("hostB's cores %v, want 0-3", got)
	}
	r := &rec{job: &api.Job{JobId: 7, State: api.JobState_RUN,
		ExecHosts: []*api.HostSlots{{Host: "hostB", Slots: 2, Cpus: []int32{1, 2}}}}}
	c.hostFailed(r, "hostB", time.Now())
	if got := cores(); !slices.Equal(got, []int{0, 3}) {
		t.Errorf("with job 7's old instance on cores 1 and 2, hostB offers %v, want [0 3]", got)
	}
	// Its end reported (applyReport drops it from c.stale).
	delete(c.stale["hostB"], key{7, 0})
	if got := cores(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("after the old instance's end hostB offers %v, want 0-3", got)
	}
	if len(c.staleCores) != 0 {
		t.Errorf("stale cores kept after the end: %v", c.staleCores)
	}
}
