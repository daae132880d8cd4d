package sim

import (
	"fmt"
	"testing"
)

// TestReplaysCPUTime: a job's CPU time in the trace (SWF field 6, per
// processor) counts in its user's fairshare history, as the controller
// counts a finished job's: u1's first job used far more CPU than it ran,
// so that u2 goes first when both wait; with no CPU time in the trace
// (run time on each slot), u1, whose use is older, goes first.
func TestReplaysCPUTime(t *testing.T) {
	conf := `
[cluster]
name = "t"
default_queue = "fair"

[hosts.a]
slots = 1

[queues.fair]
fairshare = { u1 = 1, u2 = 1 }
`
	line := func(id, submit, run, cpu, user int) string {
		return fmt.Sprintf("%d %d -1 %d 1 %d -1 1 -1 -1 1 %d -1 -1 -1 -1 -1 -1\n", id, submit, run, cpu, user)
	}
	first := func(cpu int) int64 {
		tr := mustSWF(t, line(1, 0, 100, cpu, 1)+line(2, 1, 100, -1, 2)+line(3, 150, 10, -1, 1)+line(4, 150, 10, -1, 2))
		r, err := Run(tr, Options{Config: mustConfig(t, conf)})
		if err != nil {
			t.Fatal(err)
		}
		if r.Jobs[2].Start < r.Jobs[3].Start {
			return 3
		}
		return 4
	}
	if got := first(100_000); got != 4 {
		t.Errorf("with u1's CPU time in the trace job %d started first, want 4 (u2's)", got)
	}
	if got := first(-1); got != 3 {
		t.Errorf("without CPU times job %d started first, want 3 (u1's)", got)
	}
}
