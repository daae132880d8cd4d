package sched

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
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

// TestClaimGPUSimulation: random claims of devices (and fpga instances)
// on hosts with GPUs, and random jobs of them or of none asking -gpu,
// rusage[ngpus_physical] or fpga, cycle after cycle with jobs ending and
// claims deleted and made again: no device is in two claims, no job
// outside a claim gets a claimed device, a claim's job gets only its
// claim's devices and no other of its jobs the same one, no device is
// shared with an exclusive job; and a restart (the running allocations
// in another order) changes no decision.
func TestClaimGPUSimulation(t *testing.T) {
	used := 0 // claim jobs' devices, over all cycles
	for seed := uint64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 33))
		s := &Snapshot{Now: t0, Schema: instSchema, Queues: []Queue{{Name: "normal", Priority: 1}}}
		for i := range 2 + rng.IntN(4) {
			var fpgas []string
			for k := range rng.IntN(3) {
				fpgas = append(fpgas, fmt.Sprintf("fpga%d", k))
			}
			h := instHost(fmt.Sprintf("h%d", i), 4+rng.IntN(6), fpgas...)
			if i > 0 || rng.IntN(2) == 0 {
				h.GPUs = devs(append(times(1+rng.IntN(3), v100), times(rng.IntN(3), a100)...)...)
			}
			s.Hosts = append(s.Hosts, h)
		}
		for i := range 1 + rng.IntN(4) {
			r := fmt.Sprintf("rusage[ngpus_physical=%d]", 1+rng.IntN(2))
			if rng.IntN(3) == 0 {
				r = "rusage[ngpus_physical=1:fpga=1]"
			}
			s.Claims = append(s.Claims, Claim{Name: fmt.Sprintf("c%d", i), Rusage: claimSet(r)})
		}
		next := int64(1)
		for cycle := range 40 {
			for range rng.IntN(6) {
				var j Job
				switch rng.IntN(4) {
				case 0:
					j = instJob(next, "rusage[ngpus_physical=1]", 1)
				case 1:
					j = instJob(next, "rusage[fpga=1]", 1)
				default:
					j = instJob(next, "select[type==any]", 1+rng.IntN(2))
					j.GPU = &GPUReq{Num: 1 + rng.IntN(2), Exclusive: rng.IntN(3) == 0}
					if rng.IntN(4) == 0 {
						j.GPU.Model = "A100"
					}
				}
				if rng.IntN(2) == 0 {
					j.Claim = s.Claims[rng.IntN(len(s.Claims))].Name
				}
				s.Jobs = append(s.Jobs, j)
				next++
			}
			s.Now = t0.Add(time.Duration(cycle) * time.Minute)
			d := Schedule(s)
			if cycle%5 == 4 {
				if d2 := Schedule(restartedSnapshot(s, rng)); !reflect.DeepEqual(d.Placements, d2.Placements) || !reflect.DeepEqual(d.Claims, d2.Claims) {
					t.Fatalf("seed %d cycle %d: after a restart the decision differs:\n%+v\n%+v", seed, cycle, d, d2)
				}
			}
			for _, cp := range d.Claims {
				for i := range s.Claims {
					if s.Claims[i].Name == cp.Name {
						h := cp.Held
						s.Claims[i].Held = &h
					}
				}
			}
			placed := map[JobKey]Placement{}
			for _, p := range d.Placements {
				placed[p.Job] = p
			}
			s.Jobs = slices.DeleteFunc(s.Jobs, func(j Job) bool {
				p, ok := placed[j.Key]
				if ok {
					s.Running = append(s.Running, Alloc{Job: j.Key, User: j.User, Queue: j.Queue, Start: s.Now, Claim: j.Claim, Hosts: p.Hosts})
				}
				return ok
			})
			used += checkClaimGPUs(t, s, fmt.Sprintf("seed %d cycle %d", seed, cycle))
			s.Running = slices.DeleteFunc(s.Running, func(Alloc) bool { return rng.IntN(4) == 0 })
			if rng.IntN(5) == 0 {
				i := rng.IntN(len(s.Claims))
				name := s.Claims[i].Name
				if !slices.ContainsFunc(s.Running, func(a Alloc) bool { return a.Claim == name }) {
					s.Claims[i].Held = nil
				}
			}
		}
	}
	if used < 100 {
		t.Errorf("a weak test: claim jobs used %d devices", used)
	}
}

// checkClaimGPUs checks the running jobs' devices against the claims'
// and returns how many devices claim jobs use.
func checkClaimGPUs(t *testing.T, s *Snapshot, at string) int {
	t.Helper()
	claimOf := map[string]string{} // "host/index" -> the claim holding it
	claimHost := map[string]string{}
	for _, cl := range s.Claims {
		if cl.Held == nil {
			continue
		}
		claimHost[cl.Name] = cl.Held.Host
		for _, n := range cl.Held.Instances[ngpusPhysical] {
			k := cl.Held.Host + "/" + n
			if other, dup := claimOf[k]; dup {
				t.Fatalf("%s: device %s in claims %s and %s", at, k, other, cl.Name)
			}
			claimOf[k] = cl.Name
		}
	}
	inClaim := map[string]JobKey{} // device -> the claim job using it
	jobs := map[string]int{}       // device -> ordinary jobs using it
	alone := map[string]bool{}
	for _, a := range s.Running {
		for _, ha := range a.Hosts {
			if ha.GPU == nil {
				continue
			}
			for _, idx := range ha.GPU.Devices {
				k := fmt.Sprintf("%s/%d", ha.Host, idx)
				owner, claimed := claimOf[k]
				switch {
				case a.Claim != "" && claimed && owner == a.Claim:
					if other, dup := inClaim[k]; dup {
						t.Fatalf("%s: claim %s's device %s given to jobs %v and %v", at, owner, k, other, a.Job)
					}
					inClaim[k] = a.Job
				case claimed:
					t.Fatalf("%s: job %v (claim %q) got device %s of claim %s", at, a.Job, a.Claim, k, owner)
				default:
					if alone[k] || ha.GPU.Exclusive && jobs[k] > 0 {
						t.Fatalf("%s: device %s shared with an exclusive job (job %v)", at, k, a.Job)
					}
					jobs[k]++
					alone[k] = alone[k] || ha.GPU.Exclusive
				}
			}
		}
	}
	return len(inClaim)
}
