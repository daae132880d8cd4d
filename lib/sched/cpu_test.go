package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// cpuHost is mkHost with cores 0..n-1 listed (the host binds jobs to
// cores).
func cpuHost(spec string, n int) Host {
	h := mkHost(spec)
	h.CPUs = seq(0, n)
	return h
}

// renderCPU is render with each host's cores: "1: a*2[0 1]".
func renderCPU(s *Snapshot, d *Decision) string {
	placed := map[JobKey]Placement{}
	for _, p := range d.Placements {
		placed[p.Job] = p
	}
	var sb strings.Builder
	for _, j := range s.Jobs {
		fmt.Fprintf(&sb, "%v:", j.Key)
		if p, ok := placed[j.Key]; ok {
			for _, h := range p.Hosts {
				fmt.Fprintf(&sb, " %s*%d", h.Host, h.Slots)
				if h.CPUs != nil {
					fmt.Fprintf(&sb, "%v", h.CPUs)
				}
			}
		} else {
			sb.WriteString(" PEND " + strings.Join(d.Pending[j.Key], " | "))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// cpuRun is a running job holding cores on one host (nil: no list).
func cpuRun(id int64, host string, slots int, cores []int) Alloc {
	a := mkRun(id, fmt.Sprintf("bob normal 1m - %s*%d", host, slots), "", 0)
	a.Hosts[0].CPUs = cores
	return a
}

func TestCPUPlacement(t *testing.T) {
	odd := mkHost("o 8")
	odd.CPUs = []int{8, 2, 3, 5, 4, 2} // unordered, one twice
	for _, c := range []struct {
		name    string
		hosts   []Host
		jobs    []Job
		running []Alloc
		want    string
	}{
		{name: "one core per slot, lowest first, never shared",
			hosts: []Host{cpuHost("a 8", 4)},
			jobs:  []Job{mkJob(1, ""), mkJob(2, "", "n=2"), mkJob(3, ""), mkJob(4, "")},
			want: `1: a*1[0]
2: a*2[1 2]
3: a*1[3]
4: PEND Job requirements for reserving resource (cores) not satisfied: 1 host`},
		{name: "cores held by running jobs (restored from their record) stay held",
			hosts:   []Host{cpuHost("a 8", 4)},
			running: []Alloc{cpuRun(10, "a", 1, []int{0}), cpuRun(11, "a", 1, []int{2})},
			jobs:    []Job{mkJob(1, ""), mkJob(2, ""), mkJob(3, "")},
			want: `1: a*1[1]
2: a*1[3]
3: PEND Job requirements for reserving resource (cores) not satisfied: 1 host`},
		{name: "a job's cores are contiguous where a run is free",
			hosts:   []Host{cpuHost("a 8", 6)},
			running: []Alloc{cpuRun(10, "a", 1, []int{1}), cpuRun(11, "a", 1, []int{3})},
			jobs:    []Job{mkJob(1, "", "n=2"), mkJob(2, "", "n=2")},
			want: `1: a*2[4 5]
2: a*2[0 2]`},
		{name: "a host with fewer free cores than slots gives what it has to a spread job, not to span[hosts=1]",
			hosts:   []Host{cpuHost("a 8", 2), cpuHost("b 8", 2)},
			running: []Alloc{cpuRun(10, "a", 1, []int{0})},
			jobs:    []Job{mkJob(1, "", "n=3"), mkJob(2, "span[hosts=1]", "n=2")},
			want: `1: a*1[1] b*2[0 1]
2: PEND Job requirements for reserving resource (cores) not satisfied: 2 hosts`},
		{name: "span[hosts=1] needs all its cores on one host",
			hosts: []Host{cpuHost("a 8", 2), cpuHost("b 8", 4)},
			jobs:  []Job{mkJob(1, "span[hosts=1]", "n=3")},
			want:  `1: b*3[0 1 2]`},
		{name: "an exclusive job takes every core of its host",
			hosts: []Host{cpuHost("a 8", 4), cpuHost("b 8", 4)},
			jobs:  []Job{mkJob(1, "", "x"), mkJob(2, ""), mkJob(3, "", "x")},
			want: `1: a*1[0 1 2 3]
2: b*1[0]
3: PEND Running an exclusive job: 1 host | Job's requirement for exclusive execution not satisfied: 1 host`},
		{name: "a host that does not bind cores has no core list",
			hosts: []Host{mkHost("a 8"), cpuHost("b 8", 1)},
			jobs:  []Job{mkJob(1, "", "m=b"), mkJob(2, "", "n=4")},
			want: `1: b*1[0]
2: a*4`},
		{name: "the host's own core numbers, in order, each once",
			hosts: []Host{odd},
			jobs:  []Job{mkJob(1, "", "n=3"), mkJob(2, "", "n=2"), mkJob(3, "")},
			want: `1: o*3[2 3 4]
2: o*2[5 8]
3: PEND Job requirements for reserving resource (cores) not satisfied: 1 host`},
		{name: "a running job without a core list is charged the lowest free",
			hosts:   []Host{cpuHost("a 8", 3)},
			running: []Alloc{cpuRun(10, "a", 2, nil)},
			jobs:    []Job{mkJob(1, ""), mkJob(2, "")},
			want: `1: a*1[2]
2: PEND Job requirements for reserving resource (cores) not satisfied: 1 host`},
		{name: "compound terms on one host do not share cores",
			hosts: []Host{cpuHost("a 8", 4)},
			jobs:  []Job{mkJob(1, "1*{select[type==any]} + 2*{select[type==any]}")},
			want:  `1: a*1[0] a*2[1 2]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshot(c.hosts, c.jobs...)
			s.Running = c.running
			d := Schedule(s)
			if got := renderCPU(s, d); strings.TrimSpace(got) != strings.TrimSpace(c.want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, strings.TrimSpace(c.want))
			}
		})
	}
}

func TestCPUPick(t *testing.T) {
	cs := newCPUState([]int{0, 1, 2, 3, 4, 5, 6, 7})
	cs.take([]int{1, 4})
	for _, c := range []struct {
		n     int
		taken []int
		want  []int
	}{
		{1, nil, []int{0}},
		{2, nil, []int{2, 3}},
		{3, nil, []int{5, 6, 7}},
		{4, nil, []int{0, 2, 3, 5}},
		{2, []int{2}, []int{5, 6}},
		{7, nil, nil},
	} {
		if got := cs.pick(c.n, c.taken); !slices.Equal(got, c.want) {
			t.Errorf("pick(%d, %v) = %v, want %v", c.n, c.taken, got, c.want)
		}
	}
}

// TestCPUSimulation runs jobs through many cycles on hosts that bind
// cores (some with more slots than cores), ending some after each cycle,
// and checks after every cycle that no two jobs hold a core, that every
// job holds one core per slot on each such host (every core for an
// exclusive job), and that its cores are the host's.
func TestCPUSimulation(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 1))
	var hs []Host
	for i := range 12 {
		h := mkHost(fmt.Sprintf("h%02d %d", i, 4+r.IntN(9)))
		if i%4 != 3 { // every fourth host does not bind cores
			h.CPUs = seq(0, 2+r.IntN(10))
			if i%5 == 0 {
				h.CPUs = []int{0, 2, 4, 6, 8, 10, 12} // gaps, as an offline core leaves
			}
		}
		hs = append(hs, h)
	}
	cpus := map[string][]int{}
	for _, h := range hs {
		cpus[h.Name] = h.CPUs
	}
	reqs := []string{"", "", "span[hosts=1]", "span[ptile=2]", "1*{select[type==any]} + 2*{select[type==any]}"}
	var pend []Job
	var running []Alloc
	next := int64(1)
	placed := 0
	now := t0
	for cycle := range 400 {
		for range r.IntN(6) {
			opts := []string{fmt.Sprintf("n=%d", 1+r.IntN(5))}
			if r.IntN(12) == 0 {
				opts = append(opts, "x")
			}
			j := mkJob(next, reqs[r.IntN(len(reqs))], opts...)
			j.Submit = now
			pend = append(pend, j)
			next++
		}
		s := snapshot(hs, pend...)
		s.Now = now
		s.Running = running
		d := Schedule(s)
		byKey := map[JobKey]bool{}
		for _, p := range d.Placements {
			byKey[p.Job] = true
			var j Job
			for _, pj := range pend {
				if pj.Key == p.Job {
					j = pj
				}
			}
			running = append(running, Alloc{Job: p.Job, User: j.User, Queue: j.Queue, Project: j.Project, Start: now, Exclusive: j.Exclusive, Hosts: p.Hosts})
			placed++
		}
		pend = slices.DeleteFunc(pend, func(j Job) bool { return byKey[j.Key] })

		held := map[string]map[int]JobKey{}
		for _, a := range running {
			for _, ha := range a.Hosts {
				host := cpus[ha.Host]
				if host == nil {
					if ha.CPUs != nil {
						t.Fatalf("cycle %d: job %v holds cores %v on %s, which does not bind cores", cycle, a.Job, ha.CPUs, ha.Host)
					}
					continue
				}
				want := ha.Slots
				if a.Exclusive {
					want = len(host)
				}
				if len(ha.CPUs) != want {
					t.Fatalf("cycle %d: job %v holds %v on %s for %d slots (exclusive %t)", cycle, a.Job, ha.CPUs, ha.Host, ha.Slots, a.Exclusive)
				}
				if held[ha.Host] == nil {
					held[ha.Host] = map[int]JobKey{}
				}
				for _, c := range ha.CPUs {
					if !slices.Contains(host, c) {
						t.Fatalf("cycle %d: job %v holds core %d, not one of %s's %v", cycle, a.Job, c, ha.Host, host)
					}
					if other, ok := held[ha.Host][c]; ok {
						t.Fatalf("cycle %d: jobs %v and %v share core %d of %s", cycle, other, a.Job, c, ha.Host)
					}
					held[ha.Host][c] = a.Job
				}
			}
		}
		// Some jobs end.
		running = slices.DeleteFunc(running, func(a Alloc) bool { return r.IntN(4) == 0 })
		now = now.Add(time.Minute)
	}
	if placed < 500 {
		t.Errorf("only %d jobs placed: the simulation does not exercise the cores", placed)
	}
}
