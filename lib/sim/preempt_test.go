package sim

import "testing"

const urgentQueues = `
[cluster]
name = "t"
default_queue = "q2"

[hosts.a]
slots = 4

[queues.q1]
priority = 70
preemptive = ["lower"]

[queues.q2]
priority = 30
`

// TestPreemption: an urgent job suspends the job holding the host, which
// resumes when it ends and finishes later by the time it was suspended;
// the report counts the preemption.
func TestPreemption(t *testing.T) {
	tr := mustSWF(t, "; MaxProcs: 4\n"+
		swfLine(1, 0, 100, 4, 1000, 1, 2)+ // holds the host from 0
		swfLine(2, 10, 30, 2, 100, 2, 1)) // urgent: preempts job 1 at 10, ends at 40
	r, err := Run(tr, Options{Config: mustConfig(t, urgentQueues)})
	if err != nil {
		t.Fatal(err)
	}
	got := starts(r)
	if got[1] != 0 || got[2] != 10 {
		t.Errorf("starts %v, want job 1 at 0 and job 2 at 10", got)
	}
	if r.Preemptions != 1 {
		t.Errorf("%d preemptions, want 1", r.Preemptions)
	}
	if end := r.Jobs[0].End.Seconds(); end != 130 {
		t.Errorf("job 1 ended at %v s, want 130 (100 s of run, 30 s suspended)", end)
	}
	if s := Summarise(r); s.Preemptions != 1 {
		t.Errorf("summary: %d preemptions", s.Preemptions)
	}
}
