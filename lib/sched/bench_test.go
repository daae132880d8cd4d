package sched

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"xce/lib/resreq"
)

// bigSnapshot builds a cluster of nHosts hosts (16 slots, 32-256 GB) with
// some running jobs, and nJobs pending jobs drawn from nKinds distinct
// requirements of nUsers users.
func bigSnapshot(seed uint64, nHosts, nJobs, nKinds, nUsers int) *Snapshot {
	r := rand.New(rand.NewPCG(seed, 7))
	s := &Snapshot{Now: t0, Schema: testSchema, Queues: []Queue{
		{Name: "normal", Priority: 30},
		{Name: "fair", Priority: 20, Fairshare: &Fairshare{}},
	}}
	mems := []float64{32000, 64000, 128000, 256000}
	for i := 0; i < nHosts; i++ {
		h := Host{Name: fmt.Sprintf("n%05d", i), MaxSlots: 16, Values: testSchema.NewHost()}
		testSchema.Set(h.Values, "type", "X86_64")
		testSchema.Set(h.Values, "model", []string{"m1", "m2", "m3"}[r.IntN(3)])
		testSchema.Set(h.Values, "mem", mems[r.IntN(len(mems))])
		testSchema.Set(h.Values, "r15s", float64(r.IntN(40))/10)
		testSchema.Set(h.Values, "pg", float64(r.IntN(10)))
		testSchema.Set(h.Values, "ncpus", 16.0)
		if r.IntN(50) == 0 {
			h.Status = HostClosed
		}
		s.Hosts = append(s.Hosts, h)
		if r.IntN(2) == 0 {
			a := Alloc{Job: JobKey{ID: int64(1_000_000 + i)}, User: "run", Queue: "normal", Start: t0.Add(-time.Duration(r.IntN(120)) * time.Minute),
				Hosts: []HostAlloc{{Host: h.Name, Slots: 1 + r.IntN(8), Lead: true}}}
			if r.IntN(2) == 0 {
				a.RunLimit = 3 * time.Hour
			}
			s.Running = append(s.Running, a)
		}
	}
	type kind struct {
		req        *resreq.ResReq
		n          int
		queue, usr string
	}
	var kinds []kind
	for k := 0; k < nKinds; k++ {
		var rs string
		switch k % 5 {
		case 0:
			rs = fmt.Sprintf("select[mem>%d] rusage[mem=%d]", 1000*(1+k%50), 500*(1+k%17))
		case 1:
			rs = fmt.Sprintf("select[mem>%d && model==m%d] rusage[mem=%d] span[hosts=1]", 1000*(k%40), 1+k%3, 1000*(1+k%9))
		case 2:
			rs = fmt.Sprintf("rusage[mem=%d/task] span[ptile=4] order[mem]", 100*(1+k%30))
		case 3:
			rs = fmt.Sprintf("select[r15s<%d.5] same[model] rusage[mem=%d]", k%4, 200*(1+k%11))
		default:
			rs = fmt.Sprintf("select[ncpus>=%d] order[-pg]", k%16)
		}
		q := "normal"
		if k%3 == 0 {
			q = "fair"
		}
		kinds = append(kinds, kind{req: resreq.MustParse(rs, resreq.WithSchema(testSchema)), n: []int{1, 1, 2, 4, 8}[k%5], queue: q, usr: fmt.Sprintf("u%02d", k%nUsers)})
	}
	for i := 0; i < nJobs; i++ {
		k := kinds[r.IntN(len(kinds))]
		s.Jobs = append(s.Jobs, Job{Key: JobKey{ID: int64(i + 1)}, User: k.usr, Queue: k.queue, Project: "default",
			Req: k.req, MinSlots: k.n, Submit: t0.Add(-time.Duration(nJobs-i) * time.Second)})
	}
	return s
}

// BenchmarkCycle: one cycle, 10,000 hosts, 100,000 pending jobs in 300
// buckets.
func BenchmarkCycle(b *testing.B) {
	s := bigSnapshot(1, 10000, 100000, 300, 30)
	b.ReportAllocs()
	var d *Decision
	for b.Loop() {
		d = Schedule(s)
	}
	b.ReportMetric(float64(len(d.Placements)), "placed")
}

// BenchmarkCycleCores: BenchmarkCycle with every host binding jobs to
// its 16 cores (resource_enforce cpu), running jobs holding theirs.
func BenchmarkCycleCores(b *testing.B) {
	s := bigSnapshot(1, 10000, 100000, 300, 30)
	cores := seq(0, 16)
	for i := range s.Hosts {
		s.Hosts[i].CPUs = cores
	}
	for i := range s.Running {
		for k := range s.Running[i].Hosts {
			s.Running[i].Hosts[k].CPUs = seq(0, s.Running[i].Hosts[k].Slots)
		}
	}
	b.ReportAllocs()
	var d *Decision
	for b.Loop() {
		d = Schedule(s)
	}
	b.ReportMetric(float64(len(d.Placements)), "placed")
}

// BenchmarkCycleFull: the same cluster with every slot taken, as in a
// busy steady state: no job fits and every pending job gets its reasons.
func BenchmarkCycleFull(b *testing.B) {
	s := bigSnapshot(1, 10000, 100000, 300, 30)
	s.Running = s.Running[:0]
	for i, h := range s.Hosts {
		s.Running = append(s.Running, Alloc{Job: JobKey{ID: int64(1_000_000 + i)}, User: "run", Queue: "normal", Start: t0.Add(-time.Hour),
			RunLimit: time.Duration(2+i%5) * time.Hour, Hosts: []HostAlloc{{Host: h.Name, Slots: 16, Lead: true}}})
	}
	b.ReportAllocs()
	var d *Decision
	for b.Loop() {
		d = Schedule(s)
	}
	b.ReportMetric(float64(len(d.Pending)), "pending")
}

// BenchmarkCycleReserve: the full cluster with slot reservation in the
// queues, so that blocked buckets plan their start.
func BenchmarkCycleReserve(b *testing.B) {
	s := bigSnapshot(1, 10000, 100000, 300, 30)
	for i := range s.Queues {
		s.Queues[i].SlotReserve = true
	}
	for i := range s.Jobs {
		s.Jobs[i].RunLimit = time.Duration(10+i%300) * time.Minute
	}
	b.ReportAllocs()
	var d *Decision
	for b.Loop() {
		d = Schedule(s)
	}
	b.ReportMetric(float64(len(d.Placements)), "placed")
	b.ReportMetric(float64(len(d.Reservations)), "reservations")
}
