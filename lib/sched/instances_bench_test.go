package sched

import (
	"fmt"
	"testing"
	"time"

	"xce/lib/resreq"
)

// instanceBenchSnapshot: 10,000 hosts of 16 slots, each with 8 fpga (as
// named instances, or as a plain counter of 8), half of them running a
// job that holds one, and 100,000 pending one-slot jobs, a quarter of
// them asking rusage[fpga=1].
func instanceBenchSnapshot(named bool) *Snapshot {
	s := &Snapshot{Now: t0, Schema: instSchema, NoReasons: true, Queues: []Queue{{Name: "normal", Priority: 30}}}
	names := []string{"fpga0", "fpga1", "fpga2", "fpga3", "fpga4", "fpga5", "fpga6", "fpga7"}
	fpga := resreq.MustParse("rusage[fpga=1]", resreq.WithSchema(instSchema))
	plain := resreq.MustParse("rusage[mem=100]", resreq.WithSchema(instSchema))
	for i := range 10000 {
		h := instHost(fmt.Sprintf("n%05d", i), 16, names...)
		if !named {
			h.Instances = nil
		}
		s.Hosts = append(s.Hosts, h)
		if i%2 == 0 {
			ha := HostAlloc{Host: h.Name, Slots: 1, Lead: true, Rusage: fpga.Simple.Rusage.Or[0]}
			if named {
				ha.Instances = map[string][]string{"fpga": {names[i%8]}}
			}
			s.Running = append(s.Running, Alloc{Job: JobKey{ID: int64(1_000_000 + i)}, User: "run", Queue: "normal",
				Start: t0.Add(-time.Minute), Hosts: []HostAlloc{ha}})
		}
	}
	for i := range 100000 {
		j := Job{Key: JobKey{ID: int64(i + 1)}, User: fmt.Sprintf("u%d", i%50), Queue: "normal", Project: "default", Req: plain, Submit: t0}
		if i%4 == 0 {
			j.Req = fpga
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// BenchmarkInstancesCycle: one cycle handing out named instances beside
// the same cycle counting them only (ratio: the target is at
// most 1.5).
func BenchmarkInstancesCycle(b *testing.B) {
	named, counted := instanceBenchSnapshot(true), instanceBenchSnapshot(false)
	var tn, tc time.Duration
	placed := 0
	for b.Loop() {
		t := time.Now()
		Schedule(counted)
		tc += time.Since(t)
		t = time.Now()
		d := Schedule(named)
		tn += time.Since(t)
		placed = len(d.Placements)
	}
	b.ReportMetric(float64(tn.Milliseconds())/float64(b.N), "ms/cycle")
	b.ReportMetric(float64(tc.Milliseconds())/float64(b.N), "ms/cycle-counted")
	b.ReportMetric(float64(tn)/float64(max(tc, 1)), "ratio")
	b.ReportMetric(float64(placed), "placed")
}
