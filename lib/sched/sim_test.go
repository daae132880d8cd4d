package sched

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"xce/lib/resreq"
)

// TestDeterminism: the same snapshot gives the same decision.
func TestDeterminism(t *testing.T) {
	s := bigSnapshot(3, 500, 5000, 60, 7)
	s.Queues[0].SlotReserve = true
	for i := range s.Jobs {
		if i%3 == 0 {
			s.Jobs[i].RunLimit = time.Duration(1+i%50) * time.Minute
		}
	}
	d1 := Schedule(s)
	for i := 0; i < 3; i++ {
		if d2 := Schedule(s); !reflect.DeepEqual(d1, d2) {
			t.Fatalf("run %d differs", i)
		}
	}
	if len(d1.Placements) == 0 || len(d1.Pending) == 0 || len(d1.Reservations) == 0 {
		t.Errorf("a weak test: %d placed, %d pending, %d reservations", len(d1.Placements), len(d1.Pending), len(d1.Reservations))
	}
}

// simJob is a job of the simulation: how long it really runs.
type simJob struct {
	Job
	runs time.Duration
	mem  float64 // rusage[mem] per host
	used float64 // what it really uses, per host
}

// TestSimulation drives the scheduler with a discrete-event loop over
// thousands of virtual hosts: jobs arrive, run for their time and end;
// every cycle's decision is checked against the cluster (no host over its
// slots or memory, exclusive jobs alone, every pending job has a reason),
// and every job finishes.
func TestSimulation(t *testing.T) {
	nHosts, nJobs := 2000, 20000
	if testing.Short() {
		nHosts, nJobs = 300, 3000
	}
	r := rand.New(rand.NewPCG(42, 1))
	const hostMem = 64000
	var hs []Host
	for i := 0; i < nHosts; i++ {
		h := Host{Name: fmt.Sprintf("v%04d", i), MaxSlots: 8, Values: testSchema.NewHost()}
		testSchema.Set(h.Values, "type", "X86_64")
		testSchema.Set(h.Values, "r15s", 0.0)
		testSchema.Set(h.Values, "pg", 0.0)
		if i%10 == 0 {
			testSchema.Set(h.Values, "gpu", true)
		}
		hs = append(hs, h)
	}
	reqs := map[string]*resreq.ResReq{}
	parse := func(s string) *resreq.ResReq {
		if reqs[s] == nil {
			reqs[s] = resreq.MustParse(s, resreq.WithSchema(testSchema))
		}
		return reqs[s]
	}
	var arriving []*simJob
	for i := 0; i < nJobs; i++ {
		j := &simJob{runs: time.Duration(1+r.IntN(30)) * time.Minute}
		j.Key = JobKey{ID: int64(i + 1)}
		j.User = fmt.Sprintf("u%d", r.IntN(8))
		j.Queue = []string{"normal", "normal", "fair"}[r.IntN(3)]
		j.Project = "default"
		j.Submit = t0.Add(time.Duration(i) * 100 * time.Millisecond)
		j.mem = float64(1000 * (1 + r.IntN(16)))
		j.used = j.mem * (0.5 + r.Float64())
		j.RunLimit = j.runs + time.Duration(r.IntN(10))*time.Minute
		switch r.IntN(10) {
		case 0:
			j.Req = parse(fmt.Sprintf("gpu rusage[mem=%d] span[hosts=1]", int(j.mem)))
			j.MinSlots = 2
		case 1:
			j.Req = parse(fmt.Sprintf("rusage[mem=%d] span[ptile=4]", int(j.mem)))
			j.MinSlots = 8
		case 2:
			j.Exclusive = true
			j.Req = parse(fmt.Sprintf("rusage[mem=%d]", int(j.mem)))
		default:
			j.Req = parse(fmt.Sprintf("rusage[mem=%d]", int(j.mem)))
			j.MinSlots = 1 + r.IntN(2)
		}
		arriving = append(arriving, j)
	}
	type running struct {
		j     *simJob
		alloc Alloc
		ends  time.Time
	}
	var run []*running
	var pend []*simJob
	now := t0
	done := 0
	queues := []Queue{{Name: "normal", Priority: 30, SlotReserve: true}, {Name: "fair", Priority: 30, Fairshare: &Fairshare{}}}
	for cycle := 0; done < nJobs; cycle++ {
		if cycle > 2000 {
			t.Fatalf("%d of %d jobs done after %d cycles", done, nJobs, cycle)
		}
		// Jobs end.
		kept := run[:0]
		for _, x := range run {
			if !x.ends.After(now) {
				done++
				continue
			}
			kept = append(kept, x)
		}
		run = kept
		for len(arriving) > 0 && !arriving[0].Submit.After(now) {
			pend = append(pend, arriving[0])
			arriving = arriving[1:]
		}
		// The snapshot: hosts report memory available = total - used.
		s := &Snapshot{Now: now, Schema: testSchema, Queues: queues}
		usedMem := map[string]float64{}
		for _, x := range run {
			for _, ha := range x.alloc.Hosts {
				usedMem[ha.Host] += x.j.used
			}
			s.Running = append(s.Running, x.alloc)
		}
		for _, h := range hs {
			h.Values = &resreq.Host{Num: append([]float64(nil), h.Values.Num...), Str: h.Values.Str, Bool: h.Values.Bool}
			testSchema.Set(h.Values, "mem", hostMem-usedMem[h.Name])
			s.Hosts = append(s.Hosts, h)
		}
		byKey := map[JobKey]*simJob{}
		for _, j := range pend {
			s.Jobs = append(s.Jobs, j.Job)
			byKey[j.Key] = j
		}
		d := Schedule(s)
		// Check the decision.
		slots := map[string]int{}
		excl := map[string]int{}
		jobsOn := map[string]int{}
		charged := map[string]float64{}
		for _, x := range run {
			for _, ha := range x.alloc.Hosts {
				slots[ha.Host] += ha.Slots
				jobsOn[ha.Host]++
				charged[ha.Host] += max(x.j.mem, x.j.used)
				if x.alloc.Exclusive {
					excl[ha.Host]++
				}
			}
		}
		placedOn := map[string]bool{}
		for _, p := range d.Placements {
			j := byKey[p.Job]
			if j == nil {
				t.Fatalf("cycle %d: placed unknown job %v", cycle, p.Job)
			}
			delete(byKey, p.Job)
			a := Alloc{Job: p.Job, User: j.User, Queue: j.Queue, Project: j.Project, Start: now, RunLimit: j.RunLimit, Exclusive: j.Exclusive}
			n := 0
			for _, ha := range p.Hosts {
				n += ha.Slots
				slots[ha.Host] += ha.Slots
				jobsOn[ha.Host]++
				charged[ha.Host] += j.mem
				placedOn[ha.Host] = true
				if j.Exclusive {
					excl[ha.Host]++
				}
				ha.Used = map[string]float64{"mem": j.used}
				a.Hosts = append(a.Hosts, ha)
			}
			if n < max(j.MinSlots, 1) || n != p.Slots {
				t.Fatalf("cycle %d: job %v got %d slots (placement says %d), wants %d", cycle, p.Job, n, p.Slots, j.MinSlots)
			}
			run = append(run, &running{j: j, alloc: a, ends: now.Add(j.runs)})
		}
		for h, n := range slots {
			if n > 8 {
				t.Fatalf("cycle %d: host %s has %d slots in use", cycle, h, n)
			}
			if excl[h] > 0 && jobsOn[h] > 1 {
				t.Fatalf("cycle %d: host %s runs an exclusive job and %d others", cycle, h, jobsOn[h]-1)
			}
			// Jobs may use more than they reserved, so only a host that
			// got a job this cycle must have had room for it.
			if placedOn[h] && charged[h] > hostMem+1e-6 {
				t.Fatalf("cycle %d: host %s is charged %v MB of %d", cycle, h, charged[h], hostMem)
			}
		}
		kp := pend[:0]
		for _, j := range pend {
			if _, left := byKey[j.Key]; left {
				if len(d.Pending[j.Key]) == 0 {
					t.Fatalf("cycle %d: job %v pends without a reason", cycle, j.Key)
				}
				kp = append(kp, j)
			}
		}
		pend = kp
		now = now.Add(time.Minute)
	}
	t.Logf("%d jobs on %d hosts done by %v", nJobs, nHosts, now.Sub(t0))
}
