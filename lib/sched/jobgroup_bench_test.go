package sched

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkJobGroupCycle: one cycle of 20,000 pending jobs on 2,000 hosts,
// each job in one of 1,000 job groups (100 top groups of 10 subgroups,
// every top group and every other subgroup limited), beside the same cycle
// without groups; ratio-unheld is the same groups with limits that hold
// no job (the checks' own cost: the same placements).
func BenchmarkJobGroupCycle(b *testing.B) {
	without := bigSnapshot(1, 2000, 20000, 300, 30)
	with := bigSnapshot(1, 2000, 20000, 300, 30)
	for i := range with.Jobs {
		with.Jobs[i].JobGroup = fmt.Sprintf("/g%02d/s%d", i%100, (i/100)%10)
	}
	for i := range with.Running {
		with.Running[i].JobGroup = fmt.Sprintf("/g%02d/s%d", i%100, 0)
	}
	for g := 0; g < 100; g++ {
		with.JobGroupLimits = append(with.JobGroupLimits, JobGroupLimit{Path: fmt.Sprintf("/g%02d", g), Limit: 40})
		for s := 0; s < 10; s += 2 {
			with.JobGroupLimits = append(with.JobGroupLimits, JobGroupLimit{Path: fmt.Sprintf("/g%02d/s%d", g, s), Limit: 5})
		}
	}
	unheld := *with
	unheld.JobGroupLimits = nil
	for _, l := range with.JobGroupLimits {
		unheld.JobGroupLimits = append(unheld.JobGroupLimits, JobGroupLimit{Path: l.Path, Limit: 1 << 30})
	}
	var tw, to, tu time.Duration
	placed, placedWithout := 0, 0
	for b.Loop() {
		t := time.Now()
		placedWithout = len(Schedule(without).Placements)
		to += time.Since(t)
		t = time.Now()
		placed = len(Schedule(with).Placements)
		tw += time.Since(t)
		t = time.Now()
		Schedule(&unheld)
		tu += time.Since(t)
	}
	b.ReportMetric(float64(tw.Microseconds())/1000/float64(b.N), "ms/cycle")
	b.ReportMetric(float64(to.Microseconds())/1000/float64(b.N), "ms/cycle-nogroups")
	b.ReportMetric(float64(tw)/float64(max(to, 1)), "ratio")
	b.ReportMetric(float64(tu)/float64(max(to, 1)), "ratio-unheld")
	b.ReportMetric(float64(placed), "placed")
	b.ReportMetric(float64(placedWithout), "placed-nogroups")
}

// BenchmarkGangCycle: one cycle of 20,000 pending jobs on 2,000 hosts,
// 1,000 of them in 125 gangs of 8 (bgadd -gang 8), beside the same cycle
// without gangs. The cycle runs again for each round of gangs that fit
// only in part (gang.go): reruns is how many runs the cycle took.
func BenchmarkGangCycle(b *testing.B) {
	without := bigSnapshot(1, 2000, 20000, 300, 30)
	with := bigSnapshot(1, 2000, 20000, 300, 30)
	n := 0
	for i := range with.Jobs {
		if n == 1000 {
			break
		}
		if with.Jobs[i].Queue == "normal" && i%10 == 0 {
			with.Jobs[i].JobGroup = fmt.Sprintf("/gang%03d", n/8)
			n++
		}
	}
	for g := range n / 8 {
		with.GangGroups = append(with.GangGroups, GangGroup{Path: fmt.Sprintf("/gang%03d", g), Size: 8})
	}
	var tw, to time.Duration
	placed, placedWithout, gangPlaced := 0, 0, 0
	for b.Loop() {
		t := time.Now()
		placedWithout = len(Schedule(without).Placements)
		to += time.Since(t)
		t = time.Now()
		d := Schedule(with)
		tw += time.Since(t)
		placed, gangPlaced = len(d.Placements), 0
		for _, p := range d.Placements {
			if p.Gang > 0 {
				gangPlaced++
			}
		}
	}
	b.ReportMetric(float64(tw.Microseconds())/1000/float64(b.N), "ms/cycle")
	b.ReportMetric(float64(to.Microseconds())/1000/float64(b.N), "ms/cycle-nogangs")
	b.ReportMetric(float64(tw)/float64(max(to, 1)), "ratio")
	b.ReportMetric(float64(placed), "placed")
	b.ReportMetric(float64(placedWithout), "placed-nogangs")
	b.ReportMetric(float64(gangPlaced), "gang-members-placed")
}
