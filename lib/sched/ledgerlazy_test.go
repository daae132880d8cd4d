package sched

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"xce/lib/resreq"
)

// TestLazyValsSameDecisions: restored hosts whose values are set when
// a cycle reads them (restorelite.go) give the decisions and states of
// values set at each restore.
func TestLazyValsSameDecisions(t *testing.T) {
	defer func() { noLazyVals = false }()
	sameLedgerRuns(t, "with values set when read", 12, func() { noLazyVals = true }, func() { noLazyVals = false })
}

// TestLiteRestoreSameState: the same, for hosts restored lightly (only
// their values and open bit, restorelite.go) beside a full restore of
// every host.
func TestLiteRestoreSameState(t *testing.T) {
	defer func() { noLiteRestore = false }()
	before := liteUsed.Load()
	sameLedgerRuns(t, "restored lightly", 12, func() { noLiteRestore = true }, func() { noLiteRestore = false })
	if n := liteUsed.Load() - before; n < 1000 {
		t.Errorf("a weak test: only %d hosts restored lightly", n)
	}
}

// TestValsBeforeSameDecisions: the same, for the values of stale hosts
// a cycle changes, set when read from their state before the change
// (restorelite.go's valsBefore) beside set at the change, with
// requirements that read the free slots after placements changed them
// and no charge of a resource the values hold.
func TestValsBeforeSameDecisions(t *testing.T) {
	defer func() { noValsBefore = false }()
	dyn := []string{"select[slots>=2]", "order[slots]", "select[maxslots>=4] order[-slots]", "select[slots>=3] order[-slots]"}
	n := sameLedgerRunsReqs(t, "with values kept from before a change", 12, dyn, true, func() { noValsBefore = true }, func() { noValsBefore = false })
	if n < 50 {
		t.Errorf("a weak test: only %d hosts' values waited", n)
	}
}

// sameLedgerRuns runs the random cycles with two ledgers, setA before
// each cycle of the first and setB before each of the second, and fails
// where their decisions, ledger hosts or cycle host states differ.
func sameLedgerRuns(t *testing.T, what string, seeds uint64, setA, setB func()) {
	t.Helper()
	// Requirements that read what the cycles set: free slots, and
	// memory that rusage takes.
	dyn := []string{"select[slots>=2]", "select[mem>40000] rusage[mem=9000]", "order[slots]", "select[maxslots>=4] order[-slots]", "rusage[mem=9000]"}
	sameLedgerRunsReqs(t, what, seeds, dyn, false, setA, setB)
}

// sameLedgerRunsReqs is sameLedgerRuns with a third of the jobs given
// one of the requirements dyn (and, with noRusage, no job an rusage
// else); it returns how many hosts' values waited for a read in the
// second ledger's cycles (valsBefore).
func sameLedgerRunsReqs(t *testing.T, what string, seeds uint64, dyn []string, noRusage bool, setA, setB func()) int {
	t.Helper()
	waited := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 37))
		s := openCluster(r, 200+r.IntN(400), 100+r.IntN(200))
		for i := range s.Jobs {
			if noRusage && s.Jobs[i].Req != nil && s.Jobs[i].Req.Simple != nil && s.Jobs[i].Req.Simple.Rusage != nil {
				s.Jobs[i].Req = nil
			}
			if r.IntN(3) == 0 {
				s.Jobs[i].Req = resreq.MustParse(dyn[r.IntN(len(dyn))], resreq.WithSchema(testSchema))
			}
		}
		jobs := map[JobKey]Job{}
		for _, j := range s.Jobs {
			jobs[j.Key] = j
		}
		lA, scA, lB, scB := NewLedger(), &Scratch{}, NewLedger(), &Scratch{}
		b := *s // its own Running: each ledger knows its own cycle's placements
		b.Running = slices.Clone(s.Running)
		for cyc := range 25 {
			x, y := *s, b
			x.Ledger, x.Scratch = lA, scA
			y.Ledger, y.Scratch = lB, scB
			setA()
			want := Schedule(&x)
			setB()
			got := Schedule(&y)
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("seed %d, cycle %d: decisions differ %s:\n%s", seed, cyc, what, diffDecisions(want, got))
			}
			if lA.free != lB.free || !reflect.DeepEqual(lA.hs, lB.hs) {
				t.Fatalf("seed %d, cycle %d: the ledger's hosts differ %s", seed, cyc, what)
			}
			if lA.cyc.valid != lB.cyc.valid || !reflect.DeepEqual(lA.cyc.open, lB.cyc.open) {
				t.Fatalf("seed %d, cycle %d: the open hosts differ %s", seed, cyc, what)
			}
			if h := diffHostStates(lA.cyc.hosts, lB.cyc.hosts, lA.cyc.stale, lB.cyc.stale); h >= 0 {
				t.Fatalf("seed %d, cycle %d: host %d's cycle state differs %s:\n%+v\n%+v", seed, cyc, h, what, lA.cyc.hosts[h], lB.cyc.hosts[h])
			}
			placed := map[JobKey]bool{}
			start := func(s *Snapshot, l *Ledger, d *Decision) {
				for _, p := range d.Placements {
					placed[p.Job] = true
					j := jobs[p.Job]
					s.Running = append(s.Running, Alloc{Job: p.Job, User: j.User, Queue: j.Queue, Project: j.Project, Start: s.Now, RunLimit: j.RunLimit, Exclusive: j.Exclusive, Hosts: p.Hosts})
					l.Start(&s.Running[len(s.Running)-1])
				}
			}
			start(s, lA, want)
			start(&b, lB, got)
			dropPlaced(s, placed)
			// Random running jobs end, taken out of both lists alike.
			for i := 0; i < len(s.Running); {
				if r.IntN(4) != 0 {
					i++
					continue
				}
				lA.End(s.Running[i].Job)
				lB.End(b.Running[i].Job)
				last := len(s.Running) - 1
				s.Running[i], b.Running[i] = s.Running[last], b.Running[last]
				s.Running, b.Running = s.Running[:last], b.Running[:last]
			}
			s.Now = s.Now.Add(time.Duration(1+r.IntN(20)) * time.Minute)
			b.Jobs, b.Now = s.Jobs, s.Now
		}
		waited += lB.cyc.nBefore
	}
	return waited
}

// diffHostStates returns the first host whose states differ, -1 when
// none: the values select reads compared bit for bit (NaN is "not
// set") where neither side left them to be set when read.
func diffHostStates(a, b []hostState, staleA, staleB openBits) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		x, y := a[i], b[i]
		lazy := len(staleA) > 0 && staleA.has(i) || len(staleB) > 0 && staleB.has(i)
		if !lazy && (x.vals == nil) != (y.vals == nil) {
			return i
		}
		if !lazy && x.vals != nil {
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
		// What a stale host's values wait on (valsBefore) is not its
		// state.
		x.pre, x.preUsed, x.preExcl, y.pre, y.preUsed, y.preExcl = false, 0, false, false, 0, false
		if !reflect.DeepEqual(x, y) {
			return i
		}
	}
	return -1
}
