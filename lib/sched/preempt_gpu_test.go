package sched

import (
	"slices"
	"testing"
)

// A GPU-bound preemption: the host has free slots but its GPUs are held
// by low jobs. A suspended job keeps its GPUs unless PREEMPTABLE_RESOURCES
// names ngpus_physical; then an urgent GPU job suspends only the jobs
// whose GPUs it needs (not the more recent CPU-only one) and gets their
// devices.
func TestPreemptGPU(t *testing.T) {
	run := []Alloc{
		gpuRun(1, "a", true, 0, 0),
		gpuRun(2, "a", true, 0, 1),
		mkRun(3, "bob low 30s - a*1", "", 0), // the most recent, no GPU
	}
	run[0].Queue, run[1].Queue = "low", "low"
	s := preSnap([]Host{gpuHost("a 8", v100, v100)}, run, gpuJob(10, "num=2:x", "q=urgent"))
	if d := Schedule(s); len(d.Placements) != 0 {
		t.Fatalf("placed %v: suspended jobs keep their GPUs by default", d.Placements)
	}
	s.Preempt.Resources = []string{"ngpus_physical"}
	d := Schedule(s)
	if got := renderGPU(s, d); got != "10: a*1[0 1]\n" {
		t.Fatalf("got %q", got)
	}
	v := victimsOf(d, JobKey{ID: 10})
	slices.SortFunc(v, func(a, b JobKey) int { return int(a.ID - b.ID) })
	if !slices.Equal(v, []JobKey{{ID: 1}, {ID: 2}}) {
		t.Errorf("victims %v, want [1 2] (job 3 holds no GPU)", v)
	}
	// One GPU needed: one victim.
	s.Jobs = []Job{gpuJob(11, "num=1:x", "q=urgent")}
	d = Schedule(s)
	if v := victimsOf(d, JobKey{ID: 11}); len(v) != 1 || v[0].ID == 3 {
		t.Errorf("victims %v, want one GPU job", v)
	}
	// A suspended GPU job resumes once its device is free again, not
	// while its preemptor holds it.
	s = preSnap([]Host{gpuHost("a 8", v100)}, []Alloc{gpuRun(1, "a", true, 0, 0), gpuRun(5, "a", true, 0, 0)})
	s.Running[0].Queue = "low"
	s.Running[0].Preempt = AllocPreempt{Suspended: true, Count: 1}
	s.Running[1].Queue = "urgent"
	s.Preempt.Resources = []string{"ngpus_physical"}
	if d := Schedule(s); len(d.Resumes) != 0 {
		t.Errorf("resumed %v beside its preemptor on the same GPU", d.Resumes)
	}
	s.Running = s.Running[:1]
	if d := Schedule(s); !slices.Equal(d.Resumes, []JobKey{{ID: 1}}) {
		t.Errorf("resumes %v, want [1] once the GPU is free", d.Resumes)
	}
}
