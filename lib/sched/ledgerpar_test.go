package sched

import (
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// TestLedgerParallelSameState: over random clusters and cycles (the
// placed jobs start, random running ones end), a ledger whose per-host
// work is split over two goroutines (every sync and restore, whatever
// its size) holds exactly the hosts' charges and cycle states one
// goroutine gives, and the cycles decide the same.
func TestLedgerParallelSameState(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func(n int) { parMin = n }(parMin)
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 37))
		s := openCluster(r, 200+r.IntN(400), 100+r.IntN(200))
		jobs := map[JobKey]Job{}
		for _, j := range s.Jobs {
			jobs[j.Key] = j
		}
		lSeq, scSeq, lPar, scPar := NewLedger(), &Scratch{}, NewLedger(), &Scratch{}
		for cyc := range 25 {
			x, y := *s, *s
			x.Ledger, x.Scratch = lSeq, scSeq
			y.Ledger, y.Scratch = lPar, scPar
			parMin = 1 << 30
			want := Schedule(&x)
			parMin = 0
			got := Schedule(&y)
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("seed %d, cycle %d: decisions differ in parallel:\n%s", seed, cyc, diffDecisions(want, got))
			}
			if lSeq.free != lPar.free || !reflect.DeepEqual(lSeq.hs, lPar.hs) {
				t.Fatalf("seed %d, cycle %d: the ledger's hosts differ in parallel", seed, cyc)
			}
			if lSeq.cyc.valid != lPar.cyc.valid || !reflect.DeepEqual(lSeq.cyc.open, lPar.cyc.open) {
				t.Fatalf("seed %d, cycle %d: the open hosts differ in parallel", seed, cyc)
			}
			if h := diffHostStates(lSeq.cyc.hosts, lPar.cyc.hosts); h >= 0 {
				t.Fatalf("seed %d, cycle %d: host %d's cycle state differs in parallel:\n%+v\n%+v", seed, cyc, h, lSeq.cyc.hosts[h], lPar.cyc.hosts[h])
			}
			placed := map[JobKey]bool{}
			for _, p := range want.Placements {
				placed[p.Job] = true
				j := jobs[p.Job]
				// Each ledger its own copy of the allocation, as each
				// caller would.
				a := Alloc{Job: p.Job, User: j.User, Queue: j.Queue, Project: j.Project, Start: s.Now, RunLimit: j.RunLimit, Exclusive: j.Exclusive, Hosts: p.Hosts}
				s.Running = append(s.Running, a)
				lSeq.Start(&s.Running[len(s.Running)-1])
				lPar.Start(&s.Running[len(s.Running)-1])
			}
			dropPlaced(s, placed)
			endSome(s, r, 4, func(k JobKey) { lSeq.End(k); lPar.End(k) })
			s.Now = s.Now.Add(time.Duration(1+r.IntN(20)) * time.Minute)
		}
	}
}

// diffHostStates returns the first host whose states differ, -1 when
// none: the values select reads compared bit for bit (NaN is "not
// set").
func diffHostStates(a, b []hostState) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		x, y := a[i], b[i]
		if (x.vals == nil) != (y.vals == nil) {
			return i
		}
		if x.vals != nil {
			if len(x.vals.Num) != len(y.vals.Num) || !reflect.DeepEqual(x.vals.Str, y.vals.Str) || !reflect.DeepEqual(x.vals.Bool, y.vals.Bool) {
				return i
			}
			for k := range x.vals.Num {
				if math.Float64bits(x.vals.Num[k]) != math.Float64bits(y.vals.Num[k]) {
					return i
				}
			}
		}
		x.vals, y.vals = nil, nil
		if !reflect.DeepEqual(x, y) {
			return i
		}
	}
	return -1
}
