package sim

import (
	"strconv"
	"strings"
	"testing"
)

// A queue's per-host slot limit holds on each host, not over the cluster:
// a job larger than one host's share spreads over hosts, and several jobs
// of the queue run at once on different hosts. (Counted over the cluster,
// as it was, the 4-slot job pended for ever and the 3-slot jobs ran one
// at a time.)
func TestQueueHostSlotLimit(t *testing.T) {
	conf := mustConfig(t, `
[cluster]
name = "t"
default_queue = "q"

[queues.q]
max_slots_per_host = 3
`)
	// job submit wait run procs cpu mem reqprocs reqtime reqmem status user group exe queue partition prec think
	tr := mustSWF(t, `1 0 -1 100 4 -1 -1 4 200 -1 1 1 -1 -1 0 -1 -1 -1
2 0 -1 100 3 -1 -1 3 200 -1 1 2 -1 -1 0 -1 -1 -1
3 0 -1 100 3 -1 -1 3 200 -1 1 3 -1 -1 0 -1 -1 -1
`)
	r, err := Run(tr, Options{Config: conf, Hosts: 4, Slots: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Jobs) != 3 {
		t.Fatalf("%d jobs in the result, want 3", len(r.Jobs))
	}
	perHost := map[string]int{} // the queue's slots on each host (all start at once)
	for i, j := range r.Jobs {
		if j.Outcome != Done {
			t.Fatalf("job %d: outcome %v, want done", i+1, j.Outcome)
		}
		if j.Start != 0 {
			t.Errorf("job %d started at %v, want at once (4 hosts of 4 slots, 10 slots asked)", i+1, j.Start)
		}
		for _, hs := range strings.Split(j.Hosts(), ":") {
			n, h := 1, hs
			if c, name, ok := strings.Cut(hs, "*"); ok {
				n, _ = strconv.Atoi(c)
				h = name
			}
			perHost[h] += n
		}
	}
	for h, n := range perHost {
		if n > 3 {
			t.Errorf("host %s ran %d slots of the queue, past its max_slots_per_host of 3 (%v)", h, n, perHost)
		}
	}
}
