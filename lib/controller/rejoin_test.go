package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/store"
)

// rejoinExec is a worker that kept its jobs over a restart and records
// what the controller hands it back: the adoptions, then the limits.
type rejoinExec struct {
	keptExec
	mu      sync.Mutex
	adopted []key
	limits  map[key]*api.JobSpec
	// limitsFirst: limits came for a job before its adoption.
	limitsFirst bool
}

func (r *rejoinExec) Reattach(j *api.Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.adopted = append(r.adopted, key{j.JobId, j.ArrayIndex})
}

func (r *rejoinExec) SetLimits(id int64, idx int32, l *api.JobSpec) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := key{id, idx}
	adopted := false
	for _, a := range r.adopted {
		adopted = adopted || a == k
	}
	r.limitsFirst = r.limitsFirst || !adopted
	if r.limits == nil {
		r.limits = map[key]*api.JobSpec{}
	}
	r.limits[k] = l
	return nil
}

// A worker that adopts the running jobs again after a restart gets each
// one's limits with it, not only a reservation job's: the adoption
// carries no spec, and without them the restarted worker has no backstop
// for the run limit (-W) or the deadline (-t). The limits are those of
// now (a bmod -W while the controller ran is in them).
func TestRejoinGivesEveryJobItsLimits(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := config.Parse("test.toml", []byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	start := func(ex Executor) (*Controller, func()) {
		c, err := New(Config{Host: "hostA", Slots: 4, Cluster: conf}, st, ex)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		return c, func() { cancel(); <-done }
	}
	fx := &fakeExec{running: map[key]bool{}, autoExit: -1}
	c, stop := start(keptExec{fx})
	fx.c = c
	deadline := time.Now().Add(3 * time.Hour).Unix()
	limited, err := c.Submit(alice, &api.JobSpec{Command: "sleep 600", RunLimitSec: 3600, TermTime: deadline})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := c.Submit(alice, &api.JobSpec{Command: "sleep 600"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both jobs running", func() bool {
		return c.stateOf(limited.JobId, 0) == api.JobState_RUN && c.stateOf(plain.JobId, 0) == api.JobState_RUN
	})
	rep := c.Modify(alice, &api.ModifyRequest{Ref: &api.JobRef{JobId: limited.JobId}, Spec: &api.JobSpec{RunLimitSec: 5400}, Fields: []string{"run_limit_sec"}})
	if e := rep.GetResults(); len(e) != 1 || e[0].GetError() != "" {
		t.Fatalf("bmod -W: %v", rep)
	}
	stop()
	st.Close()

	st, err = store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rx := &rejoinExec{keptExec: keptExec{&fakeExec{running: map[key]bool{}, autoExit: -1}}}
	c, stop = start(rx)
	defer stop()
	rx.fakeExec.c = c
	rx.mu.Lock()
	defer rx.mu.Unlock()
	if len(rx.adopted) != 2 {
		t.Fatalf("adopted %v, want both jobs", rx.adopted)
	}
	if rx.limitsFirst {
		t.Error("limits were sent before the job's adoption")
	}
	l := rx.limits[key{limited.JobId, 0}]
	if l.GetRunLimitSec() != 5400 || l.GetTermTime() != deadline {
		t.Errorf("the limited job's limits after the restart: run limit %d s, deadline %d; want 5400 (bmod's) and %d",
			l.GetRunLimitSec(), l.GetTermTime(), deadline)
	}
	if _, ok := rx.limits[key{plain.JobId, 0}]; !ok {
		t.Error("the job without limits was not sent its (empty) limits")
	}
}
