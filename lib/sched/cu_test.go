package sched

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// racks: three racks of two hosts with 4 slots each; the enclosures are
// single hosts (e1 = a ... e6 = f), the finest type.
func racks() *ComputeUnits {
	cu := &ComputeUnits{Types: []string{"enclosure", "rack"}, Default: "rack"}
	hs := "abcdef"
	for i := range 6 {
		cu.Units = append(cu.Units, ComputeUnit{Name: fmt.Sprintf("e%d", i+1), Type: "enclosure", Hosts: []string{hs[i : i+1]}})
	}
	for i := range 3 {
		cu.Units = append(cu.Units, ComputeUnit{Name: fmt.Sprintf("r%d", i+1), Type: "rack", Hosts: []string{hs[2*i : 2*i+1], hs[2*i+1 : 2*i+2]}})
	}
	return cu
}

func cuSnap(run []Alloc, jobs ...Job) *Snapshot {
	s := snapshot(hosts("a 4", "b 4", "c 4", "d 4", "e 4", "f 4", "z 4"), jobs...)
	s.CU = racks()
	s.Running = run
	return s
}

func TestCUPlacement(t *testing.T) {
	// r1 has 4 free, r2 6, r3 8.
	busy := []Alloc{mkRun(100, "bob normal 1m - a*4", "", 0), mkRun(101, "bob normal 1m - c*2", "", 0)}
	for _, tc := range []struct {
		name, req string
		n         string
		run       []Alloc
		want      string
	}{
		{"no cu: any host", "", "n=6", nil, "1: a*4 b*2"},
		{"first fit in config order", "cu[type=rack]", "n=6", busy, "1: b*4 c*2"},
		{"maxcus=1 skips a rack too small", "cu[maxcus=1]", "n=6", busy, "1: c*2 d*4"},
		{"maxcus=1 takes all of -n max in the rack", "cu[maxcus=1]", "n=2,8", busy, "1: b*4"},
		{"maxavail", "cu[pref=maxavail]", "n=6", busy, "1: e*4 f*2"},
		{"minavail", "cu[pref=minavail]", "n=6", busy, "1: b*4 c*2"},
		{"bestfit takes the fullest rack that holds it", "cu[pref=bestfit]", "n=5", busy, "1: c*2 d*3"},
		{"balance over the fewest racks", "cu[balance]", "n=10", busy, "1: c*2 d*3 e*4 f*1"},
		{"balance in one rack", "cu[balance]", "n=6", busy, "1: c*2 d*4"},
		{"balance over three racks", "cu[balance]", "n=14", busy, "1: b*4 c*2 d*3 e*4 f*1"},
		{"balance with minavail", "cu[balance:pref=minavail]", "n=4", busy, "1: b*4"},
		{"usablecuslots skips a rack with fewer", "cu[usablecuslots=5]", "n=12", busy, "1: c*2 d*4 e*4 f*2"},
		{"the last rack may give fewer", "cu[usablecuslots=5]", "n=7", busy, "1: c*2 d*4 e*1"},
		{"enclosures are single hosts", "cu[type=enclosure:maxcus=2]", "n=8", busy, "1: b*4 d*4"},
		{"ptile inside units", "cu[maxcus=1] span[ptile=2]", "n=4", busy, "1: c*2 d*2"},
		{"one host", "cu[pref=maxavail] span[hosts=1]", "n=3", busy, "1: e*3"},
		{"excl needs an empty rack", "cu[excl]", "n=2", busy, "1: e*2"},
		{"compound terms each in their own units", "1*{cu[maxcus=1]} + 6*{cu[maxcus=1]}", "", busy, "1: b*1 c*2 d*4"},
		{"alternative", "{cu[type=rack:maxcus=1]} || {cu[type=enclosure]}", "n=9", busy, "1: b*4 c*2 d*3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []string
			if tc.n != "" {
				opts = append(opts, tc.n)
			}
			check(t, cuSnap(tc.run, mkJob(1, tc.req, opts...)), tc.want)
		})
	}
}

func TestCUPending(t *testing.T) {
	busy := []Alloc{mkRun(100, "bob normal 1m - a*4", "", 0), mkRun(101, "bob normal 1m - c*2", "", 0)}
	check(t, cuSnap(busy, mkJob(1, "cu[maxcus=1]", "n=9")), `
1: PEND Not enough hosts to meet the job's spanning requirement | Not enough job slot(s): 1 host | cu[type=rack:maxcus=1]: the job needs 9 slots in at most 1 rack; free slots: r1 4, r2 6, r3 8 | cu[type=rack]: 1 host in no rack is not considered`)
	check(t, cuSnap(busy, mkJob(1, "cu[type=cab]", "n=1")), `
1: PEND Job's resource requirements not valid on this cluster: cu[type=cab]: cab is not a compute unit type (compute_unit_types: enclosure rack)`)
}

// A running cu[excl] job holds its whole rack; a job placed with
// cu[excl] in the cycle holds it for the jobs after it.
func TestCUExclusive(t *testing.T) {
	held := mkRun(100, "bob normal 1m - a*1", "", 0)
	held.CUExcl = "rack"
	check(t, cuSnap([]Alloc{held}, mkJob(1, "", "n=8"), mkJob(2, "cu[excl]", "n=2"), mkJob(3, "", "n=8")), `
1: c*4 d*4
2: e*2
3: PEND Not enough job slot(s): 4 free on 1 usable host, the job needs 8 | Host belongs to a compute unit used exclusively by a job: 4 hosts | Not enough job slot(s): 2 hosts`)
	check(t, cuSnap(nil, mkJob(1, "", "n=1"), mkJob(2, "cu[excl]", "n=8"), mkJob(3, "cu[excl]", "n=8")), `
1: a*1
2: c*4 d*4
3: e*4 f*4`)
	check(t, cuSnap(nil, mkJob(1, "", "n=1"), mkJob(2, "cu[excl:maxcus=1]", "n=8"), mkJob(3, "cu[excl]", "n=12")), `
1: a*1
2: c*4 d*4
3: PEND Not enough hosts to meet the job's spanning requirement | Host belongs to a compute unit used exclusively by a job: 2 hosts | cu[type=rack:excl]: the job needs 12 slots in racks; free slots: r3 8 | cu[excl]: jobs run in r1, r2 | cu[type=rack]: 1 host in no rack is not considered`)
}

// TestCUSimulation runs random cu[] jobs over a cluster of racks for many
// cycles and checks, at every cycle, that no job spans more units than
// its maxcus, that a balanced job's shares differ by at most one over
// the fewest units, that hosts in no unit are never used by cu[] jobs,
// and that no other job shares a unit with a cu[excl] job.
func TestCUSimulation(t *testing.T) {
	cycles := 400
	if testing.Short() {
		cycles = 100
	}
	r := rand.New(rand.NewPCG(7, 3))
	var hs []Host
	cu := &ComputeUnits{Types: []string{"enclosure", "rack"}, Default: "enclosure"}
	rackOf, enclOf := map[string]string{}, map[string]string{}
	for rk := range 6 {
		rack := ComputeUnit{Name: fmt.Sprintf("rack%d", rk), Type: "rack"}
		for e := range 3 {
			encl := ComputeUnit{Name: fmt.Sprintf("encl%d_%d", rk, e), Type: "enclosure"}
			for h := range 2 + r.IntN(3) {
				name := fmt.Sprintf("h%d_%d_%d", rk, e, h)
				hs = append(hs, mkHost(fmt.Sprintf("%s %d", name, 1+r.IntN(8))))
				encl.Hosts = append(encl.Hosts, name)
				rackOf[name], enclOf[name] = rack.Name, encl.Name
			}
			rack.Hosts = append(rack.Hosts, encl.Hosts...)
			cu.Units = append(cu.Units, encl)
		}
		cu.Units = append(cu.Units, rack)
	}
	hs = append(hs, mkHost("loose1 8"), mkHost("loose2 8"))
	reqs := []string{"", "cu[maxcus=1]", "cu[type=rack:maxcus=1]", "cu[type=rack:maxcus=2]", "cu[maxcus=3:pref=minavail]",
		"cu[balance]", "cu[type=rack:balance:maxcus=2]", "cu[type=rack:excl]", "cu[excl:maxcus=1]", "cu[pref=bestfit:maxcus=2]",
		"cu[usablecuslots=4:type=rack]", "cu[type=rack:maxcus=1] span[ptile=2]", "2*{cu[maxcus=1]} + 3*{cu[type=rack:maxcus=1]}"}
	type run struct {
		a   Alloc
		end time.Time
		req string
	}
	var running []run
	var pending []Job
	now := t0
	next := int64(1)
	placedCU := 0
	for cyc := 0; cyc < cycles; cyc++ {
		now = now.Add(time.Minute)
		kept := running[:0]
		for _, x := range running {
			if x.end.After(now) {
				kept = append(kept, x)
			}
		}
		running = kept
		for range r.IntN(6) {
			rs := reqs[r.IntN(len(reqs))]
			n := 1 + r.IntN(24)
			j := mkJob(next, rs, fmt.Sprintf("n=%d", n))
			j.Submit = now
			j.RunLimit = time.Duration(1+r.IntN(20)) * time.Minute
			pending = append(pending, j)
			next++
		}
		s := &Snapshot{Now: now, Schema: testSchema, Hosts: hs, Queues: []Queue{{Name: "normal", Priority: 30}}, CU: cu, Jobs: pending}
		for _, x := range running {
			s.Running = append(s.Running, x.a)
		}
		d := Schedule(s)
		byKey := map[JobKey]Job{}
		for _, j := range pending {
			byKey[j.Key] = j
		}
		for _, p := range d.Placements {
			j := byKey[p.Job]
			rs := j.Req.String()
			if j.Req == nil {
				rs = ""
			}
			a := Alloc{Job: p.Job, User: j.User, Queue: j.Queue, Project: j.Project, Start: now, RunLimit: j.RunLimit, Hosts: p.Hosts}
			if j.Req != nil && j.Req.Simple != nil && j.Req.Simple.CU != nil {
				placedCU++
				c := j.Req.Simple.CU
				typ, of := c.Type, rackOf
				if typ == "" {
					typ, of = "enclosure", enclOf
				}
				units := map[string]int{}
				for _, ha := range p.Hosts {
					u, ok := of[ha.Host]
					if !ok {
						t.Fatalf("cycle %d: job %v (%s) placed on %s, in no %s", cyc, p.Job, rs, ha.Host, typ)
					}
					units[u] += ha.Slots
				}
				if c.MaxCUs > 0 && len(units) > c.MaxCUs {
					t.Fatalf("cycle %d: job %v (%s) spans %d units: %v", cyc, p.Job, rs, len(units), units)
				}
				if c.Balance {
					lo, hi := 1<<30, 0
					for _, n := range units {
						lo, hi = min(lo, n), max(hi, n)
					}
					if hi-lo > 1 {
						t.Fatalf("cycle %d: job %v (%s) is not balanced: %v", cyc, p.Job, rs, units)
					}
				}
				if c.Excl {
					a.CUExcl = typ
				}
			}
			running = append(running, run{a: a, end: now.Add(time.Duration(1+r.IntN(int(j.RunLimit/time.Minute))) * time.Minute), req: rs})
		}
		// Exclusive units: no other running job on any of their hosts.
		for _, x := range running {
			if x.a.CUExcl == "" {
				continue
			}
			of := map[string]map[string]string{"rack": rackOf, "enclosure": enclOf}[x.a.CUExcl]
			mine := map[string]bool{}
			for _, ha := range x.a.Hosts {
				mine[of[ha.Host]] = true
			}
			for _, y := range running {
				if y.a.Job == x.a.Job {
					continue
				}
				for _, ha := range y.a.Hosts {
					if mine[of[ha.Host]] {
						t.Fatalf("cycle %d: job %v (%s) runs on %s in a unit job %v (%s) holds exclusively", cyc, y.a.Job, y.req, ha.Host, x.a.Job, x.req)
					}
				}
			}
		}
		// Slots: no host over its MaxSlots.
		use := map[string]int{}
		for _, x := range running {
			for _, ha := range x.a.Hosts {
				use[ha.Host] += ha.Slots
			}
		}
		for _, h := range hs {
			if use[h.Name] > h.MaxSlots {
				t.Fatalf("cycle %d: host %s holds %d slots of %d", cyc, h.Name, use[h.Name], h.MaxSlots)
			}
		}
		placed := map[JobKey]bool{}
		for _, p := range d.Placements {
			placed[p.Job] = true
		}
		keep := pending[:0]
		for _, j := range pending {
			if !placed[j.Key] {
				if len(d.Pending[j.Key]) == 0 {
					t.Fatalf("cycle %d: job %v pends without a reason", cyc, j.Key)
				}
				keep = append(keep, j)
			}
		}
		pending = keep
	}
	if placedCU < cycles/2 {
		t.Errorf("a weak test: %d cu[] jobs placed in %d cycles", placedCU, cycles)
	}
}

// TestCUReserve: with slot reservation, a pending cu[] job reserves as
// other jobs do, its units in configuration order (pref is not used for
// the plan, as LSF does), so that a longer job does not take the slots
// first while a shorter one may; a cu[excl] job holds its whole unit.
func TestCUReserve(t *testing.T) {
	run := []Alloc{
		mkRun(100, "bob normal 10m 1h a*4", "", 0),  // ends at +50m
		mkRun(101, "bob normal 10m 20m b*1", "", 0), // ends at +10m
		mkRun(102, "bob normal 10m 2h c*4", "", 0),  // ends at +110m
		mkRun(103, "bob normal 10m - d*1", "", 0),   // no run limit
		mkRun(104, "bob normal 10m 3h e*4", "", 0),  // ends at +170m
		mkRun(105, "bob normal 10m - f*1", "", 0),
	}
	s := cuSnap(run,
		mkJob(1, "cu[maxcus=1:pref=maxavail]", "n=8"), // r1 at +50m
		mkJob(2, "", "W=2h"),                          // would delay it on b
		mkJob(3, "", "W=30m"),                         // ends before: b
	)
	s.Queues[0].SlotReserve = true
	d := check(t, s, `
1: PEND Not enough hosts to meet the job's spanning requirement | Not enough job slot(s): 3 hosts | cu[type=rack:pref=maxavail:maxcus=1]: the job needs 8 slots in at most 1 rack; free slots: r1 3, r2 3, r3 3 | cu[type=rack]: 1 host in no rack is not considered | Slots reserved on 2 hosts; estimated start 2026-01-05T09:50:00Z
2: d*1
3: b*1`)
	if len(d.Reservations) != 1 || len(d.Reservations[0].Hosts) != 2 {
		t.Fatalf("reservations: %+v", d.Reservations)
	}

	s = cuSnap(run,
		mkJob(1, "cu[excl]", "n=2"), // r1, empty at +50m: all of a and b held
		mkJob(2, "", "W=2h"),        // not on b: d
		mkJob(3, "", "W=30m"),       // ends before: b
	)
	s.Queues[0].SlotReserve = true
	check(t, s, `
1: PEND Not enough hosts to meet the job's spanning requirement | Not enough job slot(s): 3 hosts | cu[type=rack:excl]: the job needs 2 slots in racks | cu[excl]: jobs run in r1, r2, r3 | cu[type=rack]: 1 host in no rack is not considered | Slots reserved on 1 host; estimated start 2026-01-05T09:50:00Z
2: d*1
3: b*1`)
}

// TestCUNoUnits: types configured but no unit: a cu[] job pends with the
// reason, also with slot reservation on (the placement used to index
// the missing unit table and panic).
func TestCUNoUnits(t *testing.T) {
	s := snapshot(hosts("a 4"), mkJob(1, "cu[type=rack]", "n=2"))
	s.CU = &ComputeUnits{Types: []string{"rack"}, Default: "rack"}
	s.Queues[0].SlotReserve = true
	check(t, s, `
1: PEND Not enough hosts to meet the job's spanning requirement | cu[type=rack]: no compute unit of type rack is configured`)
}
