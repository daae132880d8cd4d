package sched

import (
	"fmt"
	"testing"
	"time"
)

// cuBenchSnapshot: 2,000 hosts of 16 slots in 100 racks of 20, half of
// them running one 8-slot job, and 20,000 pending jobs of 16 to 64
// slots; with cu, each job asks for cu[] (maxcus, maxavail, balance,
// usablecuslots in turn), else for the same slots without it.
func cuBenchSnapshot(cu bool) *Snapshot {
	s := &Snapshot{Now: t0, Schema: testSchema, NoReasons: true, Queues: []Queue{{Name: "normal", Priority: 30}}}
	units := &ComputeUnits{Types: []string{"rack"}, Default: "rack"}
	for r := range 100 {
		u := ComputeUnit{Name: fmt.Sprintf("r%03d", r), Type: "rack"}
		for k := range 20 {
			i := r*20 + k
			h := mkHost(fmt.Sprintf("n%05d 16", i))
			s.Hosts = append(s.Hosts, h)
			u.Hosts = append(u.Hosts, h.Name)
			if i%2 == 0 {
				s.Running = append(s.Running, Alloc{Job: JobKey{ID: int64(1_000_000 + i)}, User: "run", Queue: "normal",
					Start: t0.Add(-time.Minute), Hosts: []HostAlloc{{Host: h.Name, Slots: 8, Lead: true}}})
			}
		}
		units.Units = append(units.Units, u)
	}
	s.CU = units
	reqs := []string{"cu[maxcus=1]", "cu[pref=maxavail:maxcus=2]", "cu[balance]", "cu[usablecuslots=16]"}
	for i := range 20000 {
		req := ""
		if cu {
			req = reqs[i%len(reqs)]
		}
		s.Jobs = append(s.Jobs, mkJob(int64(i+1), req, fmt.Sprintf("n=%d", 16*(1+i%4)), fmt.Sprintf("u=u%d", i%50)))
	}
	return s
}

// BenchmarkCUCycle: one cycle whose pending jobs ask for cu[] beside
// the same cycle without cu[] (ratio: the cost of compute units).
func BenchmarkCUCycle(b *testing.B) {
	with, without := cuBenchSnapshot(true), cuBenchSnapshot(false)
	var tw, to time.Duration
	placed := 0
	for b.Loop() {
		t := time.Now()
		Schedule(without)
		to += time.Since(t)
		t = time.Now()
		d := Schedule(with)
		tw += time.Since(t)
		placed = len(d.Placements)
	}
	b.ReportMetric(float64(tw.Microseconds())/1000/float64(b.N), "ms/cycle")
	b.ReportMetric(float64(to.Microseconds())/1000/float64(b.N), "ms/cycle-nocu")
	b.ReportMetric(float64(tw)/float64(max(to, 1)), "ratio")
	b.ReportMetric(float64(placed), "placed")
}
