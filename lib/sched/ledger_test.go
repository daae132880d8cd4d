package sched

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"xce/lib/resreq"
)

// TestLedgerSameDecision: over many random cycles (jobs start from each
// cycle's placements, random ones end, the clock moves, hosts change
// now and then), a cycle that takes the running jobs' charges from a
// Ledger decides exactly what one that charges every running job
// decides: placements, reservations and every pending reason. The
// snapshots have fairshare, slot reservation, exclusive jobs, per-host
// and per-user limits, a shared resource, rusage that changes with time,
// amounts that are not whole numbers and used memory, so that both the
// ledger's figures and its falling back to charging every job are
// compared (and hosts that bind jobs to cores, which it leaves to the
// cycle); and once the caller forgets to tell it of a job.
func TestLedgerSameDecision(t *testing.T) {
	used := 0 // cycles that took the ledger's figures
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 11))
		s := bigSnapshot(seed+100, 30+r.IntN(50), 300, 30, 6)
		s.Queues[0].SlotReserve = seed%2 == 0
		if seed%3 == 0 {
			s.Queues[0].HostSlotLimit = 10
		}
		s.Queues = append(s.Queues, Queue{Name: "excl", Priority: 25, Exclusive: true})
		s.Shared = map[string]float64{"lic_x": 40}
		if seed == 5 {
			// Hosts that bind jobs to cores: the cycles charge every job.
			for i := range s.Hosts {
				s.Hosts[i].CPUs = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
			}
		}
		if seed%2 == 1 {
			s.Limits = []Limit{{Name: "per user", Per: PerUser, Slots: 70}, {Name: "mem", Per: PerHost, Resources: map[string]float64{"mem": 90000}}}
		}
		extra := []string{"rusage[lic_x=1]", "select[mem>100] rusage[mem=1000/task]", "rusage[mem=2000] span[hosts=1]"}
		if seed%4 == 3 {
			// Amounts that change with time, or are not whole numbers.
			extra = append(extra, "rusage[mem=300:duration=5]", "rusage[mem=250.5]")
		}
		for i := range s.Jobs {
			j := &s.Jobs[i]
			switch r.IntN(12) {
			case 0:
				j.Req = resreq.MustParse(extra[r.IntN(len(extra))], resreq.WithSchema(testSchema))
			case 1:
				j.Queue, j.Exclusive = "excl", true
			case 2, 3:
				j.RunLimit = time.Duration(1+r.IntN(90)) * time.Minute
			}
		}
		jobs := map[JobKey]Job{}
		for _, j := range s.Jobs {
			jobs[j.Key] = j
		}
		l, sc := NewLedger(), &Scratch{}
		for cyc := range 30 {
			want := sameWithLedger(t, s, l, sc, fmt.Sprintf("seed %d, cycle %d", seed, cyc))
			if l.bound && l.inexact == 0 && !l.devices {
				used++
			}
			// The placed jobs run; some running jobs end.
			placed := map[JobKey]bool{}
			for _, p := range want.Placements {
				placed[p.Job] = true
				j := jobs[p.Job]
				a := Alloc{Job: p.Job, User: j.User, Queue: j.Queue, Project: j.Project, Start: s.Now, RunLimit: j.RunLimit, Exclusive: j.Exclusive, Hosts: p.Hosts}
				if r.IntN(5) == 0 {
					for k := range a.Hosts {
						u := 100.0
						if seed%4 == 3 {
							u = 33.3
						}
						a.Hosts[k].Used = map[string]float64{"mem": u}
					}
				}
				s.Running = append(s.Running, a)
				if cyc == 13 && len(placed) == 1 {
					continue // forgotten: the ledger must notice
				}
				l.Start(&s.Running[len(s.Running)-1])
			}
			dropPlaced(s, placed)
			endSome(s, r, 6, l.End)
			if cyc%9 == 8 {
				// A host's memory changes: a new Values, and the ledger
				// told.
				h := &s.Hosts[r.IntN(len(s.Hosts))]
				v := *h.Values
				v.Num = append([]float64(nil), v.Num...)
				testSchema.Set(&v, "mem", float64(16000*(1+r.IntN(8))))
				h.Values = &v
				l.Reset()
			}
			if cyc%7 == 5 {
				// A host's slots change (its record in place), the
				// ledger told: the kept host states take the new count.
				s.Hosts[r.IntN(len(s.Hosts))].MaxSlots = 1 + r.IntN(8)
				l.Reset()
			}
			s.Now = s.Now.Add(time.Duration(1+r.IntN(20)) * time.Minute)
		}
	}
	t.Logf("%d cycles took the ledger's figures", used)
	if used < 100 {
		t.Errorf("a weak test: only %d cycles took the ledger's figures", used)
	}
}

func diffDecisions(a, b *Decision) string {
	if !reflect.DeepEqual(a.Placements, b.Placements) {
		return fmt.Sprintf("placements\n%+v\n%+v", a.Placements, b.Placements)
	}
	if !reflect.DeepEqual(a.Reservations, b.Reservations) {
		return fmt.Sprintf("reservations\n%+v\n%+v", a.Reservations, b.Reservations)
	}
	for k, w := range a.Pending {
		if !reflect.DeepEqual(w, b.Pending[k]) {
			return fmt.Sprintf("job %v\n%q\n%q", k, w, b.Pending[k])
		}
	}
	return "elsewhere"
}

// dropPlaced takes the jobs a cycle placed out of the pending ones.
func dropPlaced(s *Snapshot, placed map[JobKey]bool) {
	kept := s.Jobs[:0]
	for _, j := range s.Jobs {
		if !placed[j.Key] {
			kept = append(kept, j)
		}
	}
	s.Jobs = kept
}

// endSome ends about one running job in oneIn, telling end of each.
func endSome(s *Snapshot, r *rand.Rand, oneIn int, end func(JobKey)) {
	for i := 0; i < len(s.Running); {
		if r.IntN(oneIn) != 0 {
			i++
			continue
		}
		end(s.Running[i].Job)
		last := len(s.Running) - 1
		s.Running[i] = s.Running[last]
		s.Running = s.Running[:last]
	}
}

// TestLedgerNoQueueEntryWithoutSlots: a host a running job holds no slots
// of (a part of 0 slots) gets no entry for the job's queue in the
// ledger, as a host the job does not use at all: a cycle that takes the
// hosts' queue slots from the ledger decides what one that charges
// every running job decides.
func TestLedgerNoQueueEntryWithoutSlots(t *testing.T) {
	s := bigSnapshot(7, 20, 60, 10, 4)
	s.Queues[0].HostSlotLimit = 10 // the cycle reads each host's queue slots
	s.Running = append(s.Running, Alloc{Job: JobKey{ID: 5_000_000}, User: "run", Queue: "normal", Start: t0,
		Hosts: []HostAlloc{{Host: s.Hosts[0].Name, Slots: 2, Lead: true}, {Host: s.Hosts[1].Name, Slots: 0}}})
	l, sc := NewLedger(), &Scratch{}
	for cyc := range 2 {
		sameWithLedger(t, s, l, sc, fmt.Sprintf("cycle %d", cyc))
	}
	for h := range l.hs {
		for _, q := range l.hs[h].queues {
			if q.n == 0 {
				t.Errorf("host %s: an entry of 0 slots for queue %s", s.Hosts[h].Name, l.qnames[q.q])
			}
		}
	}
}

// sameWithLedger decides s once charging every running job and once
// taking the charges from l (with scratch sc), fails the test when the
// decisions differ, and returns the first.
func sameWithLedger(t *testing.T, s *Snapshot, l *Ledger, sc *Scratch, label string) *Decision {
	t.Helper()
	full := *s
	full.Ledger, full.Scratch = nil, nil
	want := Schedule(&full)
	inc := *s
	inc.Ledger, inc.Scratch = l, sc
	if got := Schedule(&inc); !reflect.DeepEqual(want, got) {
		t.Fatalf("%s: decisions differ with the ledger:\n%s", label, diffDecisions(want, got))
	}
	return want
}
