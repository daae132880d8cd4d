package sched

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"xce/lib/resreq"
)

// openCluster is a random cluster whose hosts are in the order their
// requirements' order[] gives (equal load values), so that placements
// take the open-host index: hosts of 1 to 8 slots, some closed, many
// full or running an exclusive job, and pending jobs of every span.
func openCluster(r *rand.Rand, nHosts, nJobs int) *Snapshot {
	s := &Snapshot{Now: t0, Schema: testSchema, Queues: []Queue{
		{Name: "normal", Priority: 30, SlotReserve: r.IntN(2) == 0},
		{Name: "fair", Priority: 20, Fairshare: &Fairshare{}},
		{Name: "excl", Priority: 25, Exclusive: true},
	}}
	if r.IntN(3) == 0 {
		s.Queues[1].HostSlotLimit = 2
	}
	for i := range nHosts {
		h := Host{Name: fmt.Sprintf("n%04d", i), MaxSlots: 1 + r.IntN(8), Values: testSchema.NewHost()}
		testSchema.Set(h.Values, "type", "X86_64")
		testSchema.Set(h.Values, "mem", float64(16000*(1+r.IntN(4))))
		testSchema.Set(h.Values, "ncpus", float64(h.MaxSlots))
		if r.IntN(30) == 0 {
			h.Status = HostClosed
		}
		s.Hosts = append(s.Hosts, h)
		switch r.IntN(4) {
		case 0, 1: // full, or nearly
			a := Alloc{Job: JobKey{ID: int64(1_000_000 + i)}, User: "run", Queue: "normal", Start: t0.Add(-time.Hour),
				Hosts: []HostAlloc{{Host: h.Name, Slots: max(1, h.MaxSlots-r.IntN(2)), Lead: true}}}
			if r.IntN(2) == 0 {
				a.RunLimit = time.Duration(61+r.IntN(120)) * time.Minute
			}
			a.Exclusive = r.IntN(8) == 0
			s.Running = append(s.Running, a)
		}
	}
	reqs := []string{"", "", "span[hosts=1]", "span[block=2]", "span[ptile=2]", "rusage[mem=4000]", "select[mem>20000]", "span[stripe]"}
	for i := range nJobs {
		j := Job{Key: JobKey{ID: int64(i + 1)}, User: fmt.Sprintf("u%d", r.IntN(4)), Queue: "normal", Project: "default",
			MinSlots: []int{1, 1, 2, 3, 4, 8, 16}[r.IntN(7)], Submit: t0.Add(-time.Duration(nJobs-i) * time.Second)}
		if rs := reqs[r.IntN(len(reqs))]; rs != "" {
			j.Req = resreq.MustParse(rs, resreq.WithSchema(testSchema))
		}
		switch r.IntN(8) {
		case 0:
			j.Queue = "fair"
		case 1:
			j.Queue, j.Exclusive = "excl", true
		case 2, 3:
			j.RunLimit = time.Duration(1+r.IntN(90)) * time.Minute
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// TestOpenIndexSameAsScan: over many random clusters and cycles (the
// placed jobs start, random running ones end, with and without a
// Ledger), placements that skip the hosts the open-host index says are
// full decide exactly what placements that ask every host decide.
func TestOpenIndexSameAsScan(t *testing.T) {
	used := 0
	for seed := range uint64(24) {
		r := rand.New(rand.NewPCG(seed, 29))
		s := openCluster(r, 50+r.IntN(300), 40+r.IntN(200))
		runs, _ := sameOverCycles(t, r, s, fmt.Sprintf("seed %d", seed), "the open-host index",
			func(off bool) { noOpenIndex = off }, &openUsed)
		used += runs
	}
	if used < 500 {
		t.Errorf("a weak test: only %d cycles used the open-host index", used)
	}
}

// sameOverCycles runs 25 cycles of cluster s (the placed jobs start,
// random running ones end, the clock moves), each three ways: with
// off(true) and a ledger of its own, and with off(false) with a ledger
// and without one. It fails the test when the decisions differ, and
// returns in how many of the off(false) runs counter went up, and by
// how much in all.
func sameOverCycles(t *testing.T, r *rand.Rand, s *Snapshot, label, what string, off func(bool), counter *atomic.Int64) (runs int, total int64) {
	t.Helper()
	jobs := map[JobKey]Job{}
	for _, j := range s.Jobs {
		jobs[j.Key] = j
	}
	lOn, scOn, lOff, scOff := NewLedger(), &Scratch{}, NewLedger(), &Scratch{}
	defer off(false)
	for cyc := range 25 {
		var ds [3]*Decision
		for k := range ds {
			x := *s
			switch k {
			case 0: // the mechanism off, ledger and all
				x.Ledger, x.Scratch = lOff, scOff
			case 1:
				x.Ledger, x.Scratch = lOn, scOn
			case 2: // without a ledger
				x.Ledger, x.Scratch = nil, nil
			}
			off(k == 0)
			before := counter.Load()
			ds[k] = Schedule(&x)
			if n := counter.Load() - before; k > 0 && n > 0 {
				runs++
				total += n
			}
		}
		off(false)
		for k := 1; k < len(ds); k++ {
			if !reflect.DeepEqual(ds[0], ds[k]) {
				t.Fatalf("%s, cycle %d, run %d: decisions differ with %s:\n%s", label, cyc, k, what, diffDecisions(ds[0], ds[k]))
			}
		}
		placed := map[JobKey]bool{}
		for _, p := range ds[0].Placements {
			placed[p.Job] = true
			j := jobs[p.Job]
			a := Alloc{Job: p.Job, User: j.User, Queue: j.Queue, Project: j.Project, Start: s.Now, RunLimit: j.RunLimit, Exclusive: j.Exclusive, Hosts: p.Hosts}
			s.Running = append(s.Running, a)
			lOn.Start(&s.Running[len(s.Running)-1])
			lOff.Start(&s.Running[len(s.Running)-1])
		}
		dropPlaced(s, placed)
		endSome(s, r, 5, func(k JobKey) { lOn.End(k); lOff.End(k) })
		s.Now = s.Now.Add(time.Duration(1+r.IntN(20)) * time.Minute)
	}
	return runs, total
}

func TestSeekAsc(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var list []int
		for h := range 300 {
			if r.IntN(3) != 0 {
				list = append(list, h)
			}
		}
		lo := r.IntN(len(list) + 1)
		h := r.IntN(320)
		want := lo
		for want < len(list) && list[want] < h {
			want++
		}
		if got := seekAsc(list, lo, h); got != want {
			t.Fatalf("seekAsc(%v, %d, %d) = %d, want %d", list, lo, h, got, want)
		}
	}
}

// TestRecycleSameDecisions: a caller that hands ended jobs' Hosts back
// (Scratch.Recycle) gets the same decisions, cycle after cycle, as one
// that does not, and reused lists do not change the running jobs'.
func TestRecycleSameDecisions(t *testing.T) {
	run := func(seed uint64, recycle bool) []string {
		r := rand.New(rand.NewPCG(seed, 31))
		s := openCluster(r, 60+r.IntN(100), 100+r.IntN(100))
		jobs := map[JobKey]Job{}
		for _, j := range s.Jobs {
			jobs[j.Key] = j
		}
		s.Ledger, s.Scratch = NewLedger(), &Scratch{}
		var out []string
		for range 30 {
			d := Schedule(s)
			out = append(out, fmt.Sprintf("%v %v", d.Placements, d.Reservations))
			placed := map[JobKey]bool{}
			for _, p := range d.Placements {
				placed[p.Job] = true
				// A recycled list holds nothing past its length.
				if tail := p.Hosts[len(p.Hosts):cap(p.Hosts)]; slices.ContainsFunc(tail, func(ha HostAlloc) bool { return ha.Host != "" }) {
					t.Fatalf("seed %d: job %v's hosts hold a former placement's past their length", seed, p.Job)
				}
				j := jobs[p.Job]
				s.Running = append(s.Running, Alloc{Job: p.Job, User: j.User, Queue: j.Queue, Project: j.Project, Start: s.Now, RunLimit: j.RunLimit, Exclusive: j.Exclusive, Hosts: p.Hosts})
				s.Ledger.Start(&s.Running[len(s.Running)-1])
			}
			kept := s.Jobs[:0]
			for _, j := range s.Jobs {
				if !placed[j.Key] {
					kept = append(kept, j)
				}
			}
			s.Jobs = kept
			var running []string
			for i := 0; i < len(s.Running); {
				if r.IntN(4) != 0 {
					running = append(running, fmt.Sprint(s.Running[i].Hosts))
					i++
					continue
				}
				s.Ledger.End(s.Running[i].Job)
				hosts := s.Running[i].Hosts
				last := len(s.Running) - 1
				s.Running[i] = s.Running[last]
				s.Running = s.Running[:last]
				if recycle {
					s.Scratch.Recycle(hosts)
				}
			}
			out = append(out, fmt.Sprint(running))
			s.Now = s.Now.Add(time.Duration(1+r.IntN(20)) * time.Minute)
		}
		return out
	}
	for seed := range uint64(8) {
		plain, rec := run(seed, false), run(seed, true)
		for i := range plain {
			if plain[i] != rec[i] {
				t.Fatalf("seed %d, step %d: differs when ended jobs' hosts are recycled:\n%s\n%s", seed, i, plain[i], rec[i])
			}
		}
	}
}

// TestRecycleServesSameSize: a list a placement of n hosts made, handed
// back, serves the next placement of n hosts, whatever n (a list of room
// for n alone would go back to the class below n's, and each job of that
// size would make its list anew).
func TestRecycleServesSameSize(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 7, 100, 700, 1000, 1025} {
		c := &cycle{scratch: &Scratch{}}
		first, _ := c.hostAllocs(n)
		first = first[:n]
		c.scratch.Recycle(first)
		again, dirty := c.hostAllocs(n)
		if again = again[:n]; &again[0] != &first[0] || dirty != n {
			t.Errorf("%d hosts: a new list (written %d), not the one handed back", n, dirty)
		}
	}
}

// TestPlainCapSameAsCapNow: over the random clusters of the open-host
// test (hosts of several slots, exclusive jobs and queues, a host slot
// limit, rusage, holds of reserving queues), placements that take a
// host's capacity from its free slots where capNow would check nothing
// more (plainCap) decide exactly what placements that ask capNow for
// every host decide.
func TestPlainCapSameAsCapNow(t *testing.T) {
	var walks int64
	for seed := range uint64(24) {
		r := rand.New(rand.NewPCG(seed, 37))
		s := openCluster(r, 50+r.IntN(300), 40+r.IntN(200))
		for i := range s.Jobs {
			if i%5 == 0 { // rusage that runs hosts out of memory before slots
				s.Jobs[i].Req = resreq.MustParse("rusage[mem=12000]", resreq.WithSchema(testSchema))
			}
		}
		_, n := sameOverCycles(t, r, s, fmt.Sprintf("seed %d", seed), "plain capacities",
			func(off bool) { noPlainCap = off }, &plainUsed)
		walks += n
	}
	if walks < 2000 {
		t.Errorf("a weak test: only %d walks took plain capacities", walks)
	}
}
