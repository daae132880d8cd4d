package sched

import (
	"slices"
	"strings"
	"testing"
)

// TestClaimGPU: a claim of two GPUs on a host that lists three, one
// shared by a running job, holds the two unused ones alone (named as
// ngpus_physical instances); its jobs get devices from them (the A100
// one for gmodel=A100), an ordinary job only the shared one, an
// exclusive ordinary job nothing; a running job of the claim keeps its
// device inside the claim, and a job asking rusage[ngpus_physical]
// instead of -gpu gets a device too.
func TestClaimGPU(t *testing.T) {
	h := instHost("a", 8)
	h.GPUs = devs(v100, v100, a100)
	s := &Snapshot{Now: t0, Schema: instSchema, Queues: []Queue{{Name: "normal", Priority: 1}}, Hosts: []Host{h},
		Running: []Alloc{gpuRun(100, "a", false, 0, 0)},
		Claims:  []Claim{{Name: "c1", Rusage: claimSet("rusage[ngpus_physical=2]")}}}
	d := Schedule(s)
	if len(d.Claims) != 1 || !slices.Equal(d.Claims[0].Held.Instances[ngpusPhysical], []string{"1", "2"}) {
		t.Fatalf("claim not allocated devices 1 and 2: %+v", d)
	}
	held := d.Claims[0].Held
	s.Claims[0].Held = &held
	gv := Look(s).Hosts["a"].GPUs
	if len(gv) != 3 || gv[0].Exclusive || !gv[1].Exclusive || !gv[2].Exclusive {
		t.Fatalf("devices as bhosts sees them: %+v, want 1 and 2 held alone", gv)
	}

	s.Jobs = []Job{gpuJob(1, "num=1:gmodel=A100"), gpuJob(2, "num=1"), gpuJob(3, "num=1"), gpuJob(4, "num=1:x"), gpuJob(5, "num=1")}
	s.Jobs[0].Claim, s.Jobs[1].Claim, s.Jobs[4].Claim = "c1", "c1", "c1"
	d = Schedule(s)
	got := map[int64][]int{}
	for _, p := range d.Placements {
		if g := p.Hosts[0].GPU; g != nil {
			got[p.Job.ID] = g.Devices
		}
	}
	if !slices.Equal(got[1], []int{2}) || !slices.Equal(got[2], []int{1}) || !slices.Equal(got[3], []int{0}) || len(got) != 3 {
		t.Fatalf("devices %v, want job 1 [2], job 2 [1] (the claim's), job 3 [0]", got)
	}
	for id, want := range map[int64]string{4: "GPU", 5: "within claim c1"} {
		if why := strings.Join(d.Pending[JobKey{ID: id}], "|"); !strings.Contains(why, want) {
			t.Errorf("job %d pends %q, want %q", id, why, want)
		}
	}

	// Job 1 runs on device 2 inside the claim: a claim job for an A100
	// waits, one asking rusage[ngpus_physical=1] gets device 1.
	run := gpuRun(1, "a", false, 0, 2)
	run.Claim = "c1"
	s.Running = append(s.Running, run)
	s.Jobs = []Job{gpuJob(6, "num=1:gmodel=A100"), instJob(7, "rusage[ngpus_physical=1]", 1)}
	s.Jobs[0].Claim, s.Jobs[1].Claim = "c1", "c1"
	d = Schedule(s)
	if len(d.Placements) != 1 || d.Placements[0].Job.ID != 7 || d.Placements[0].Hosts[0].GPU == nil ||
		!slices.Equal(d.Placements[0].Hosts[0].GPU.Devices, []int{1}) {
		t.Fatalf("placements %+v, want job 7 on device 1", d.Placements)
	}
	if why := strings.Join(d.Pending[JobKey{ID: 6}], "|"); !strings.Contains(why, "within claim c1") {
		t.Errorf("job 6 pends %q", why)
	}
}
