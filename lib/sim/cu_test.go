package sim

import (
	"strings"
	"testing"
)

// TestComputeUnits: the simulator places jobs in compute units as the
// live scheduler does (a queue whose requirement keeps each job in one
// rack).
func TestComputeUnits(t *testing.T) {
	conf := mustConfig(t, `
[cluster]
name = "t"
default_queue = "q"
compute_unit_types = ["rack"]

[hosts.a]
slots = 2
[hosts.b]
slots = 2
[hosts.c]
slots = 2
[hosts.d]
slots = 2

[queues.q]
res_req = "cu[maxcus=1]"

[[compute_units]]
name = "r1"
type = "rack"
members = ["a", "b"]

[[compute_units]]
name = "r2"
type = "rack"
members = ["c", "d"]
`)
	tr := mustSWF(t, "; MaxProcs: 8\n"+
		swfLine(1, 0, 100, 1, 100, 1, 1)+ // one slot of r1 until 100
		swfLine(2, 10, 50, 4, 100, 1, 1)+ // 4 slots in one rack: r2
		swfLine(3, 20, 50, 4, 100, 1, 1)) // r1 has 3 free, r2 none: waits for job 2's end at 60
	r, err := Run(tr, Options{Config: conf})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]JobResult{}
	for _, j := range r.Jobs {
		byID[r.Trace.Jobs[j.Trace].ID] = j
	}
	if h := byID[2].Hosts(); strings.Contains(h, "a") || strings.Contains(h, "b") {
		t.Errorf("job 2 ran on %s, want r2 (c, d) only", h)
	}
	if s := byID[3].Start.Seconds(); s < 60 {
		t.Errorf("job 3 started at %v, before a rack had 4 free slots", s)
	}
	for id, j := range byID {
		if j.Outcome != Done {
			t.Errorf("job %d: outcome %v", id, j.Outcome)
		}
	}
}
