package sched

import (
	"fmt"
	"testing"
	"time"
)

// preemptBenchSnapshot: 10,000 full hosts of 16 slots running 20,000
// jobs of 8 slots (a quarter in the preemptable queue low), 100,000
// pending jobs (1,000 of them urgent).
func preemptBenchSnapshot(preempt bool) *Snapshot {
	s := &Snapshot{Now: t0, Schema: testSchema, NoReasons: true, Queues: []Queue{
		{Name: "urgent", Priority: 70},
		{Name: "normal", Priority: 30},
		{Name: "low", Priority: 10},
	}}
	if preempt {
		s.Queues[0].Preempt.Preemptive = []string{"low"}
	}
	for i := range 10000 {
		h := mkHost(fmt.Sprintf("n%05d 16", i))
		s.Hosts = append(s.Hosts, h)
		for k := range 2 {
			q := "normal"
			if (2*i+k)%4 == 0 {
				q = "low"
			}
			s.Running = append(s.Running, Alloc{Job: JobKey{ID: int64(1_000_000 + 2*i + k)}, User: "run", Queue: q,
				Start: t0.Add(-time.Duration(1+(2*i+k)%120) * time.Minute), Hosts: []HostAlloc{{Host: h.Name, Slots: 8, Lead: true}}})
		}
	}
	for i := range 100000 {
		q := "normal"
		if i%100 == 0 {
			q = "urgent"
		}
		s.Jobs = append(s.Jobs, mkJob(int64(i+1), "", "q="+q, "n=8", fmt.Sprintf("u=u%d", i%50)))
	}
	return s
}

// BenchmarkPreemptCycle: one cycle with preemption beside the same cycle
// without it (ratio: the target is at most 1.5).
func BenchmarkPreemptCycle(b *testing.B) {
	with, without := preemptBenchSnapshot(true), preemptBenchSnapshot(false)
	var tw, to time.Duration
	victims := 0
	for b.Loop() {
		t := time.Now()
		Schedule(without)
		to += time.Since(t)
		t = time.Now()
		d := Schedule(with)
		tw += time.Since(t)
		victims = 0
		for _, p := range d.Placements {
			victims += len(p.Victims)
		}
	}
	b.ReportMetric(float64(tw.Milliseconds())/float64(b.N), "ms/cycle")
	b.ReportMetric(float64(to.Milliseconds())/float64(b.N), "ms/cycle-nopreempt")
	b.ReportMetric(float64(tw)/float64(max(to, 1)), "ratio")
	b.ReportMetric(float64(victims), "victims")
}
