package sched

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"xce/lib/resreq"
)

// modelSchema has the ten resources the hosts of the resource model's
// benchmark report (as an elim would) and their fpga instances.
var modelSchema = func() *resreq.Schema {
	var rs []resreq.Resource
	for k := range 10 {
		rs = append(rs, resreq.Resource{Name: fmt.Sprintf("site%d", k), Kind: resreq.Numeric, Consumable: true})
	}
	rs = append(rs, resreq.Resource{Name: "fpga", Kind: resreq.Numeric, Consumable: true})
	s, err := resreq.NewSchema(rs...)
	if err != nil {
		panic(err)
	}
	return s
}()

// modelBenchSnapshot: 10,000 hosts of 8 slots, half of them running a
// one-slot job, and 100,000 pending one-slot jobs of five kinds. With
// the model, each host reports ten resources and lists 8 fpga instances,
// the running jobs hold an instance and some of the resources, the
// kinds select, order and reserve by them (one in four asks for an
// instance), and 1,000 of the pending jobs are in 125 gangs of 8.
// Without it, the same hosts, jobs and kinds with mem only. The cluster
// has slots for three in four of the pending jobs: the cycle fills it,
// and gangs at its edge fit in part.
func modelBenchSnapshot(model bool) *Snapshot {
	sch := modelSchema
	s := &Snapshot{Now: t0, Schema: sch, Queues: []Queue{{Name: "normal", Priority: 30}}}
	fpgas := []string{"fpga0", "fpga1", "fpga2", "fpga3", "fpga4", "fpga5", "fpga6", "fpga7"}
	kinds := []string{"rusage[mem=100]", "select[mem>1000] rusage[mem=200]", "order[mem] rusage[mem=100]",
		"rusage[mem=300]", "select[mem>2000] rusage[mem=100]"}
	held := "rusage[mem=100]"
	if model {
		kinds = []string{"select[site1>2] rusage[site0=1]", "rusage[site2=2:fpga=1]", "order[site5] rusage[site3=1]",
			"select[site4>=1 && site6<90] rusage[site7=5]", "select[site8>0] rusage[site9=1]"}
		held = "rusage[site0=1:fpga=1]"
	}
	var reqs []*resreq.ResReq
	for _, k := range kinds {
		reqs = append(reqs, resreq.MustParse(k, resreq.WithSchema(sch)))
	}
	hold := resreq.MustParse(held, resreq.WithSchema(sch))
	for i := range 10000 {
		h := Host{Name: fmt.Sprintf("n%05d", i), MaxSlots: 8, Values: sch.NewHost()}
		vals := map[string]any{"type": "X86_64", "r15s": 0.0, "pg": 0.0, "mem": 16000.0}
		if model {
			for k := range 10 {
				vals[fmt.Sprintf("site%d", k)] = float64((i*(k+7))%100 + 1)
			}
			vals["fpga"] = float64(len(fpgas))
			h.Instances = map[string][]string{"fpga": fpgas}
		}
		for k, v := range vals {
			if err := sch.Set(h.Values, k, v); err != nil {
				panic(err)
			}
		}
		s.Hosts = append(s.Hosts, h)
		if i%2 == 0 {
			ha := HostAlloc{Host: h.Name, Slots: 1, Lead: true, Rusage: hold.Simple.Rusage.Or[0]}
			if model {
				ha.Instances = map[string][]string{"fpga": {fpgas[i%8]}}
			}
			s.Running = append(s.Running, Alloc{Job: JobKey{ID: int64(1_000_000 + i)}, User: "run", Queue: "normal",
				Start: t0.Add(-time.Minute), Hosts: []HostAlloc{ha}})
		}
	}
	gangs := 0
	for i := range 100000 {
		j := Job{Key: JobKey{ID: int64(i + 1)}, User: fmt.Sprintf("u%d", i%50), Queue: "normal", Project: "default",
			Req: reqs[i%len(reqs)], Submit: t0}
		if model && i%100 == 0 {
			j.JobGroup = fmt.Sprintf("/gang%03d", gangs/8)
			gangs++
		}
		s.Jobs = append(s.Jobs, j)
	}
	for g := range gangs / 8 {
		s.GangGroups = append(s.GangGroups, GangGroup{Path: fmt.Sprintf("/gang%03d", g), Size: 8})
	}
	return s
}

// BenchmarkResourceModelCycle: one cycle with the resource model (hosts
// reporting ten resources and 8 fpga instances each, jobs selecting and
// reserving by them, 125 gangs of 8) beside the same cycle without it
// (ratio: the target is at most 1.5).
func BenchmarkResourceModelCycle(b *testing.B) {
	with, without := modelBenchSnapshot(true), modelBenchSnapshot(false)
	var tw, to, cw, co time.Duration
	placed, placedWithout, gangPlaced := 0, 0, 0
	for b.Loop() {
		// Each cycle starts from a collected heap: a collection the
		// other cycle's garbage made due is not billed to this one.
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		t, c := time.Now(), cpuTime()
		placedWithout = len(Schedule(without).Placements)
		to, co = to+time.Since(t), co+cpuTime()-c
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		t, c = time.Now(), cpuTime()
		d := Schedule(with)
		tw, cw = tw+time.Since(t), cw+cpuTime()-c
		placed, gangPlaced = len(d.Placements), 0
		for _, p := range d.Placements {
			if p.Gang > 0 {
				gangPlaced++
			}
		}
	}
	b.ReportMetric(float64(tw.Microseconds())/1000/float64(b.N), "ms/cycle")
	b.ReportMetric(float64(to.Microseconds())/1000/float64(b.N), "ms/cycle-without")
	b.ReportMetric(float64(tw)/float64(max(to, 1)), "ratio")
	// The process's CPU time (garbage collection included) is steadier
	// than the wall clock on a busy machine.
	b.ReportMetric(float64(cw)/float64(max(co, 1)), "cpu-ratio")
	b.ReportMetric(float64(placed), "placed")
	b.ReportMetric(float64(placedWithout), "placed-without")
	b.ReportMetric(float64(gangPlaced), "gang-members-placed")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
