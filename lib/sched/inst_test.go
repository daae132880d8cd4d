package sched

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestInstancesGPUSimulation: random hosts with GPU devices, fpga
// instances, both or neither, and random jobs asking -gpu (shared,
// exclusive, with gmem), rusage[fpga], both or neither, cycle after
// cycle with jobs ending. The test keeps its own record of what holds
// each device and instance as jobs start and end, and checks every
// placement against it: no fpga instance is given twice, no device is
// shared with an exclusive job, no device's gmem is overbooked. Now and
// then it restarts: the running jobs come back in another order (as a
// restarted controller hands them over), and what the scheduler holds
// from them (bhosts' view of the devices, the table of instances) must
// equal its record, and the next decision must be the same.
func TestInstancesGPUSimulation(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 2))
	var hs []Host
	for i := range 24 {
		var fpgas []string
		if i%4 == 1 || i%4 == 2 {
			for k := range 1 + r.IntN(3) {
				fpgas = append(fpgas, fmt.Sprintf("fpga%d", k))
			}
		}
		h := instHost(fmt.Sprintf("h%02d", i), 4+r.IntN(8), fpgas...)
		if i%4 == 2 || i%4 == 3 {
			h.GPUs = devs(append(times(1+r.IntN(3), v100), times(r.IntN(3), a100)...)...)
		}
		hs = append(hs, h)
	}
	type devKey struct {
		host string
		idx  int
	}
	type devLive struct {
		jobs int
		excl bool
		mem  float64
	}
	gpuLive := map[devKey]*devLive{}
	fpgaLive := map[string]JobKey{} // "host/name" -> holder
	type run struct {
		a    Alloc
		ends time.Time
	}
	var running []run
	var pending []Job
	now := t0
	id := int64(0)
	placedGPU, placedFPGA, restarts := 0, 0, 0
	hold := func(a Alloc, sign int) {
		for _, ha := range a.Hosts {
			for _, n := range ha.Instances["fpga"] {
				k := ha.Host + "/" + n
				if sign > 0 {
					if other, dup := fpgaLive[k]; dup {
						t.Fatalf("%s given to job %v while job %v holds it", k, a.Job, other)
					}
					fpgaLive[k] = a.Job
				} else {
					delete(fpgaLive, k)
				}
			}
			if ha.GPU == nil {
				continue
			}
			h := hostNamed(hs, ha.Host)
			for _, idx := range ha.GPU.Devices {
				k := devKey{ha.Host, idx}
				d := gpuLive[k]
				if d == nil {
					d = &devLive{}
					gpuLive[k] = d
				}
				if sign > 0 && (d.excl || ha.GPU.Exclusive && d.jobs > 0) {
					t.Fatalf("device %v given to job %v (exclusive %v) while %d jobs hold it (exclusive %v)", k, a.Job, ha.GPU.Exclusive, d.jobs, d.excl)
				}
				d.jobs += sign
				d.mem += float64(sign) * ha.GPU.Mem
				if sign > 0 {
					d.excl = d.excl || ha.GPU.Exclusive
				} else if ha.GPU.Exclusive {
					d.excl = false
				}
				if d.mem > h.GPUs[idx].MemTotal+1e-9 {
					t.Fatalf("device %v: %g MB of gmem reserved, it has %g", k, d.mem, h.GPUs[idx].MemTotal)
				}
				if d.jobs == 0 {
					delete(gpuLive, k)
				}
			}
		}
	}
	reqs := []string{"rusage[fpga=1]", "rusage[fpga=2]", "rusage[fpga=1/task]", "select[type==any]"}
	for cycle := range 250 {
		now = now.Add(time.Minute)
		for range r.IntN(7) {
			id++
			j := instJob(id, reqs[r.IntN(len(reqs))], 1+r.IntN(2))
			if r.IntN(2) == 0 {
				g := &GPUReq{Num: 1 + r.IntN(2), Exclusive: r.IntN(3) == 0}
				if r.IntN(3) == 0 {
					g.Mem = float64(4000 * (1 + r.IntN(3)))
				}
				if r.IntN(4) == 0 {
					g.Model = "A100"
				}
				j.GPU = g
			}
			pending = append(pending, j)
		}
		keep := running[:0]
		for _, ru := range running {
			if ru.ends.After(now) {
				keep = append(keep, ru)
			} else {
				hold(ru.a, -1)
			}
		}
		running = keep
		s := &Snapshot{Now: now, Schema: instSchema, NoReasons: true, Queues: []Queue{{Name: "normal", Priority: 1}}, Hosts: hs, Jobs: pending}
		for _, ru := range running {
			s.Running = append(s.Running, ru.a)
		}
		d := Schedule(s)
		if cycle%10 == 9 {
			restarts++
			restored := restartedSnapshot(s, r)
			if d2 := Schedule(restored); !reflect.DeepEqual(d.Placements, d2.Placements) {
				t.Fatalf("cycle %d: after a restart the decision differs:\n%+v\n%+v", cycle, d.Placements, d2.Placements)
			}
			v := Look(restored)
			for _, h := range hs {
				for _, g := range v.Hosts[h.Name].GPUs {
					want := devLive{}
					if d := gpuLive[devKey{h.Name, g.Index}]; d != nil {
						want = *d
					}
					if got := (devLive{g.Jobs, g.Exclusive, g.MemRsv}); got != want {
						t.Fatalf("cycle %d: device %s/%d restored as %+v, live %+v", cycle, h.Name, g.Index, got, want)
					}
				}
			}
			tab := newInstTable(restored.Hosts)
			tab.holdAllocs(restored.Running, nil)
			for _, h := range hs {
				for i, n := range h.Instances["fpga"] {
					_, live := fpgaLive[h.Name+"/"+n]
					if held := tab.pool(h.Name, "fpga").holders(i) > 0; held != live {
						t.Fatalf("cycle %d: %s/%s restored held %v, live %v", cycle, h.Name, n, held, live)
					}
				}
			}
		}
		started := map[JobKey]bool{}
		for _, p := range d.Placements {
			started[p.Job] = true
			for _, ha := range p.Hosts {
				want := 0
				if hostNamed(hs, ha.Host).Instances != nil {
					want = instanceNeed(&ha, "fpga")
				}
				if got := len(ha.Instances["fpga"]); got != want {
					t.Fatalf("cycle %d: job %v got %d instances on %s, its rusage asks %d", cycle, p.Job, got, ha.Host, want)
				}
				if want > 0 {
					placedFPGA++
				}
				if ha.GPU != nil {
					placedGPU++
				}
			}
			a := Alloc{Job: p.Job, User: "alice", Queue: "normal", Start: now, Hosts: p.Hosts}
			hold(a, 1)
			running = append(running, run{a, now.Add(time.Duration(1+r.IntN(8)) * time.Minute)})
		}
		pending = slices.DeleteFunc(pending, func(j Job) bool { return started[j.Key] })
	}
	if placedGPU < 100 || placedFPGA < 100 || restarts == 0 {
		t.Errorf("a weak test: %d placements with GPUs, %d with fpga instances, %d restarts", placedGPU, placedFPGA, restarts)
	}
}

// restartedSnapshot is s as a restarted controller hands it over: the
// running jobs' allocations copied, in another order.
func restartedSnapshot(s *Snapshot, r *rand.Rand) *Snapshot {
	s2 := *s
	s2.Running = make([]Alloc, len(s.Running))
	for i, a := range s.Running {
		a.Hosts = slices.Clone(a.Hosts)
		for k := range a.Hosts {
			ha := &a.Hosts[k]
			if ha.GPU != nil {
				g := *ha.GPU
				g.Devices = slices.Clone(g.Devices)
				ha.GPU = &g
			}
			ins := map[string][]string{}
			for res, names := range ha.Instances {
				ins[res] = slices.Clone(names)
			}
			ha.Instances = ins
		}
		s2.Running[i] = a
	}
	r.Shuffle(len(s2.Running), func(i, j int) { s2.Running[i], s2.Running[j] = s2.Running[j], s2.Running[i] })
	return &s2
}
