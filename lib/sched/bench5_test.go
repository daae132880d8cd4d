package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The benchmarks of issue #5. bigSnapshot with as many users as kinds
// gives exactly nKinds buckets (one user per requirement); the metric
// "buckets" counts them.

func distinctBuckets(s *Snapshot) int {
	type key struct {
		q, u string
		r    any
		n    int
	}
	seen := map[key]bool{}
	for _, j := range s.Jobs {
		seen[key{j.Queue, j.User, j.Req, j.MinSlots}] = true
	}
	return len(seen)
}

func benchCycle(b *testing.B, nHosts, nJobs, nBuckets int) {
	s := bigSnapshot(1, nHosts, nJobs, nBuckets, nBuckets)
	b.ReportAllocs()
	b.ResetTimer()
	var d *Decision
	for b.Loop() {
		d = Schedule(s)
	}
	b.ReportMetric(float64(len(d.Placements)), "placed")
	b.ReportMetric(float64(distinctBuckets(s)), "buckets")
	b.ReportMetric(float64(len(d.Placements))/(b.Elapsed().Seconds()/float64(b.N)), "placements/s")
}

// BenchmarkCycle100Buckets: one cycle, 100,000 pending jobs in 100
// buckets on 10,000 hosts (target: <= 200 ms on 2 cores).
func BenchmarkCycle100Buckets(b *testing.B) { benchCycle(b, 10000, 100000, 100) }

// BenchmarkCycle1000Buckets: the same with 1,000 buckets.
func BenchmarkCycle1000Buckets(b *testing.B) { benchCycle(b, 10000, 100000, 1000) }

// BenchmarkGrowth: one cycle of 100,000 jobs over hosts x buckets, to
// judge how the cost grows; ns/host-bucket is ns/op divided by both.
func BenchmarkGrowth(b *testing.B) {
	for _, nb := range []int{10, 100, 1000} {
		for _, nh := range []int{1000, 2500, 5000, 10000} {
			b.Run(fmt.Sprintf("hosts=%d/buckets=%d", nh, nb), func(b *testing.B) {
				s := bigSnapshot(1, nh, 100000, nb, nb)
				b.ResetTimer()
				for b.Loop() {
					Schedule(s)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nh*nb), "ns/host-bucket")
			})
		}
	}
}

// BenchmarkPlacementsPerSecond: sustained placement on 10,000 hosts.
// Each op is one cycle of a running cluster: the jobs placed run for 1 to
// 4 cycles, then end; new jobs arrive so that 100,000 (in 100 buckets)
// are always pending. Only Schedule is timed; placements/s is the jobs
// placed over the time spent in it.
func BenchmarkPlacementsPerSecond(b *testing.B) {
	s := bigSnapshot(1, 10000, 100000, 100, 100)
	s.Running = nil
	templates := slices.Clone(s.Jobs)
	r := rand.New(rand.NewPCG(3, 3))
	type run struct {
		a    Alloc
		left int
	}
	var running []run
	nextID := int64(len(s.Jobs) + 1)
	now := s.Now
	byKey := map[JobKey]Job{}
	for _, j := range s.Jobs {
		byKey[j.Key] = j
	}
	step := func() int {
		s.Running = s.Running[:0]
		for _, x := range running {
			s.Running = append(s.Running, x.a)
		}
		b.StartTimer()
		d := Schedule(s)
		b.StopTimer()
		placed := map[JobKey]bool{}
		for _, p := range d.Placements {
			placed[p.Job] = true
			j := byKey[p.Job]
			delete(byKey, p.Job)
			running = append(running, run{a: Alloc{Job: p.Job, User: j.User, Queue: j.Queue, Project: j.Project, Start: now, Hosts: p.Hosts}, left: 1 + r.IntN(4)})
		}
		s.Jobs = slices.DeleteFunc(s.Jobs, func(j Job) bool { return placed[j.Key] })
		for len(s.Jobs) < 100000 {
			j := templates[r.IntN(len(templates))]
			j.Key = JobKey{ID: nextID}
			j.Submit = now
			nextID++
			s.Jobs = append(s.Jobs, j)
			byKey[j.Key] = j
		}
		// A cycle later: some jobs end.
		now = now.Add(time.Minute)
		s.Now = now
		kept := running[:0]
		for _, x := range running {
			if x.left--; x.left > 0 {
				kept = append(kept, x)
			}
		}
		running = kept
		return len(d.Placements)
	}
	b.StopTimer()
	for i := 0; i < 4; i++ { // reach the steady state
		step()
	}
	b.ResetTimer()
	placed := 0
	for i := 0; i < b.N; i++ {
		placed += step()
	}
	b.ReportMetric(float64(placed)/float64(b.N), "placed/cycle")
	b.ReportMetric(float64(placed)/b.Elapsed().Seconds(), "placements/s")
	b.ReportMetric(float64(len(running)), "running")
}

// BenchmarkSimulatedRun runs the discrete-event simulation of
// TestDiscreteEventSimulation on 1,000 virtual hosts with 3,000 jobs
// (make bench): placements/s over the time spent in Schedule, and the
// cycle time percentiles.
func BenchmarkSimulatedRun(b *testing.B) {
	var all []time.Duration
	placed, cycles := 0, 0
	var inSched time.Duration
	for i := 0; i < b.N; i++ {
		c := newDES(desOpts{hosts: 1000, jobs: 3000, seed: uint64(1 + i)})
		for c.advance() {
			c.step(nil)
		}
		placed += c.placed
		cycles += c.cycles
		for _, w := range c.wall {
			inSched += w
		}
		all = append(all, c.wall...)
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(placed)/inSched.Seconds(), "placements/s")
	b.ReportMetric(float64(cycles)/float64(b.N), "cycles")
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.9), "p90-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkCycleGPU: 1,000 hosts with 8 GPUs each (two models), 10,000
// pending GPU jobs in 20 buckets (num 1-4, shared or exclusive, some
// with gmodel): the cost of per-device placement.
func BenchmarkCycleGPU(b *testing.B) {
	var hs []Host
	for i := range 1000 {
		h := mkHost(fmt.Sprintf("g%04d 64", i))
		h.GPUs = devs(append(times(4, a100), times(4, v100)...)...)
		hs = append(hs, h)
	}
	var jobs []Job
	for i := range 10000 {
		spec := fmt.Sprintf("num=%d", 1+i%4)
		if i%5 < 2 {
			spec += ":x"
		}
		if i%5 == 4 {
			spec += ":gmodel=A100"
		}
		jobs = append(jobs, gpuJob(int64(i+1), spec))
	}
	s := snapshot(hs, jobs...)
	b.ReportAllocs()
	placed := 0
	for b.Loop() {
		placed = len(Schedule(s).Placements)
	}
	b.ReportMetric(float64(placed), "placed")
}
