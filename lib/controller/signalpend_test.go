package controller

import (
	"syscall"
	"testing"

	"xce/lib/api"
)

// bkill -s on a pending job, as LSF: KILL, TERM and INT end it; STOP and
// TSTP suspend it (PSUSP) and CONT resumes it; other signals are refused.
func TestSignalPendingJobs(t *testing.T) {
	c, fx := newTestController(t, 1, -1)
	run, _ := c.Submit(alice, &api.JobSpec{Command: "r"})
	waitFor(t, "running", func() bool { return c.stateOf(run.JobId, 0) == api.JobState_RUN })
	sig := func(id int64, s syscall.Signal) string {
		t.Helper()
		rep := c.Signal(alice, &api.SignalRequest{Action: api.SignalRequest_SIGNAL, Signal: int32(s), Refs: []*api.JobRef{{JobId: id, ArrayIndex: -1}}})
		return rep.Results[0].Error
	}
	for _, s := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT} {
		p, err := c.Submit(alice, &api.JobSpec{Command: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if e := sig(p.JobId, s); e != "" || c.stateOf(p.JobId, 0) != api.JobState_EXIT {
			t.Errorf("bkill -s %v of a pending job: %q, state %v; want it ended", s, e, c.stateOf(p.JobId, 0))
		}
	}
	p, _ := c.Submit(alice, &api.JobSpec{Command: "p"})
	if e := sig(p.JobId, syscall.SIGCONT); e != errNotSuspended {
		t.Errorf("bkill -s CONT of a pending job: %q", e)
	}
	for _, s := range []syscall.Signal{syscall.SIGSTOP, syscall.SIGTSTP} {
		if e := sig(p.JobId, s); e != "" || c.stateOf(p.JobId, 0) != api.JobState_PSUSP {
			t.Errorf("bkill -s %v of a pending job: %q, state %v; want PSUSP", s, e, c.stateOf(p.JobId, 0))
		}
		if e := sig(p.JobId, syscall.SIGCONT); e != "" || c.stateOf(p.JobId, 0) != api.JobState_PEND {
			t.Errorf("bkill -s CONT of a PSUSP job: %q, state %v; want PEND", e, c.stateOf(p.JobId, 0))
		}
	}
	if e := sig(p.JobId, syscall.SIGUSR1); e != errNotStarted || c.stateOf(p.JobId, 0) != api.JobState_PEND {
		t.Errorf("bkill -s USR1 of a pending job: %q, state %v", e, c.stateOf(p.JobId, 0))
	}
	// A started job still gets the signal itself.
	if e := sig(run.JobId, syscall.SIGUSR1); e != "" {
		t.Errorf("bkill -s USR1 of a running job: %q", e)
	}
	fx.mu.Lock()
	sigs := append([]syscall.Signal{}, fx.signals...)
	fx.mu.Unlock()
	if len(sigs) != 1 || sigs[0] != syscall.SIGUSR1 {
		t.Errorf("signals sent to hosts %v, want [user defined signal 1]", sigs)
	}
}
