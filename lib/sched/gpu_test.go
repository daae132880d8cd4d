package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// devs builds GPU devices: "Model/short/MB" each, indices in order.
func devs(specs ...string) []GPU {
	var out []GPU
	for i, s := range specs {
		f := strings.Split(s, "/")
		g := GPU{Index: i, Model: f[0], Names: []string{strings.ToLower(f[0]), strings.ToLower(f[1])}}
		fmt.Sscan(f[2], &g.MemTotal)
		out = append(out, g)
	}
	return out
}

func times(n int, spec string) []string {
	var out []string
	for range n {
		out = append(out, spec)
	}
	return out
}

const (
	v100 = "TeslaV100_SXM2_16GB/V100/16160"
	a100 = "NVIDIAA100_SXM4_80GB/A100/81920"
	t4   = "TeslaT4/T4/15360"
)

func gpuHost(spec string, d ...string) Host {
	h := mkHost(spec)
	h.GPUs = devs(d...)
	return h
}

// gpuJob is mkJob with a GPU requirement "num=2:x:gmodel=A100:gmem=8000:task:pack".
func gpuJob(id int64, g string, opts ...string) Job {
	j := mkJob(id, "", opts...)
	r := &GPUReq{}
	for _, kw := range strings.Split(g, ":") {
		k, v, _ := strings.Cut(kw, "=")
		switch k {
		case "num":
			fmt.Sscan(v, &r.Num)
		case "x":
			r.Exclusive = true
		case "gmodel":
			r.Model = v
		case "gmem":
			fmt.Sscan(v, &r.Mem)
		case "mmem":
			fmt.Sscan(v, &r.ModelMem)
		case "task":
			r.PerTask = true
		case "pack":
			r.Pack = true
		}
	}
	j.GPU = r
	return j
}

// renderGPU is render with each host's devices: "1: a*1[0,1]".
func renderGPU(s *Snapshot, d *Decision) string {
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
				if h.GPU != nil {
					fmt.Fprintf(&sb, "%v", h.GPU.Devices)
				}
			}
		} else {
			sb.WriteString(" PEND " + strings.Join(d.Pending[j.Key], " | "))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// gpuRun is a running job holding devices on one host.
func gpuRun(id int64, host string, excl bool, mem float64, devices ...int) Alloc {
	a := mkRun(id, "bob normal 1m - "+host+"*1", "", 0)
	a.Hosts[0].GPU = &GPUAlloc{Devices: devices, Exclusive: excl, Mem: mem}
	return a
}

func TestGPUPlacement(t *testing.T) {
	for _, c := range []struct {
		name    string
		hosts   []Host
		jobs    []Job
		running []Alloc
		want    string
	}{
		{name: "exclusive GPUs are never shared",
			hosts: []Host{gpuHost("a 8", v100, v100)},
			jobs:  []Job{gpuJob(1, "num=1:x"), gpuJob(2, "num=1:x"), gpuJob(3, "num=1:x")},
			want: `1: a*1[0]
2: a*1[1]
3: PEND Job requirements for reserving resource (ngpus_physical) not satisfied: 1 host | -gpu num=1:j_exclusive=yes: 0/1 hosts: 1 has fewer than 1 free GPUs`},
		{name: "shared GPUs take more jobs, the least used first",
			hosts: []Host{gpuHost("a 8", v100, v100)},
			jobs:  []Job{gpuJob(1, "num=1"), gpuJob(2, "num=1"), gpuJob(3, "num=2"), gpuJob(4, "num=1")},
			want: `1: a*1[0]
2: a*1[1]
3: a*1[0 1]
4: a*1[0]`},
		{name: "gpack packs shared jobs onto used GPUs",
			hosts:   []Host{gpuHost("a 8", v100, v100, v100)},
			running: []Alloc{gpuRun(10, "a", false, 0, 1)},
			jobs:    []Job{gpuJob(1, "num=1:pack"), gpuJob(2, "num=1")},
			want: `1: a*1[1]
2: a*1[0]`},
		{name: "an exclusive job needs unused GPUs; a shared one not an exclusive's",
			hosts:   []Host{gpuHost("a 8", v100, v100)},
			running: []Alloc{gpuRun(10, "a", false, 0, 0), gpuRun(11, "a", true, 0, 1)},
			jobs:    []Job{gpuJob(1, "num=1:x"), gpuJob(2, "num=1"), gpuJob(3, "num=2")},
			want: `1: PEND Job requirements for reserving resource (ngpus_physical) not satisfied: 1 host | -gpu num=1:j_exclusive=yes: 0/1 hosts: 1 has fewer than 1 free GPUs
2: a*1[0]
3: PEND Job requirements for reserving resource (ngpus_physical) not satisfied: 1 host | -gpu num=2: 0/1 hosts: 1 has fewer than 2 free GPUs`},
		{name: "gmodel picks the host with the model; none has H100",
			hosts: []Host{gpuHost("a 8", v100, v100), gpuHost("b 8", a100, a100), mkHost("c 8")},
			jobs:  []Job{gpuJob(1, "num=2:gmodel=A100"), gpuJob(2, "num=1:gmodel=nvidiaa100_sxm4_80gb"), gpuJob(3, "gmodel=H100")},
			want: `1: b*1[0 1]
2: b*1[0]
3: PEND Job's resource requirements not satisfied: 3 hosts | -gpu num=1:gmodel=H100: 0/3 hosts: 2 have no GPU of model H100, 1 has no GPUs`},
		{name: "gmodel with memory",
			hosts: []Host{gpuHost("a 8", v100), gpuHost("b 8", "TeslaV100_SXM2_32GB/V100/32510")},
			jobs:  []Job{gpuJob(1, "gmodel=V100:mmem=32768"), gpuJob(2, "gmodel=V100:mmem=65536")},
			want: `1: b*1[0]
2: PEND Job's resource requirements not satisfied: 2 hosts | -gpu num=1:gmodel=V100-65536M: 0/2 hosts: 2 have no GPU of model V100 with 64 GB`},
		{name: "gmem fits the device's total less what is reserved or used",
			hosts:   []Host{gpuHost("a 8", v100, a100)},
			running: []Alloc{gpuRun(10, "a", false, 50000, 1)},
			jobs:    []Job{gpuJob(1, "gmem=20000"), gpuJob(2, "gmem=20000"), gpuJob(3, "gmem=100000")},
			want: `1: a*1[1]
2: PEND Job requirements for reserving resource (ngpus_physical) not satisfied: 1 host | -gpu num=1:gmem=20000M: 0/1 hosts: 1 has fewer than 1 free GPUs with 19.5 GB of free memory
3: PEND Job's resource requirements not satisfied: 1 host | -gpu num=1:gmem=100000M: 0/1 hosts: 1 has no GPU with 97.7 GB of memory`},
		{name: "per-task GPUs bound the slots of a host",
			hosts: []Host{gpuHost("a 8", v100, v100, v100), gpuHost("b 8", v100)},
			jobs:  []Job{gpuJob(1, "num=1:task:x", "n=4")},
			want:  `1: a*3[0 1 2] b*1[0]`},
		{name: "a host with fewer matching GPUs than the job takes there",
			hosts: []Host{gpuHost("a 8", v100, v100), gpuHost("b 8", v100, v100, v100, v100)},
			jobs:  []Job{gpuJob(1, "num=4:x"), gpuJob(2, "num=4:x")},
			want: `1: b*1[0 1 2 3]
2: PEND Job's resource requirements not satisfied: 1 host | Job requirements for reserving resource (ngpus_physical) not satisfied: 1 host | -gpu num=4:j_exclusive=yes: 0/2 hosts: 1 has fewer than 4 GPUs, 1 has fewer than 4 free GPUs`},
		{name: "the same model is preferred on a mixed host",
			hosts: []Host{gpuHost("a 8", v100, t4, v100, t4)},
			jobs:  []Job{gpuJob(1, "num=2:x"), gpuJob(2, "num=2:x")},
			want: `1: a*1[0 2]
2: a*1[1 3]`},
		{name: "rusage[ngpus_physical=N] is a -gpu num=N on hosts that list devices",
			hosts: []Host{gpuHost("a 8 ngpus_physical=2", v100, v100)},
			jobs:  []Job{mkJob(1, "rusage[ngpus_physical=2]"), mkJob(2, "rusage[ngpus_physical=3]")},
			want: `1: a*1[0 1]
2: PEND Job's resource requirements not satisfied: 1 host | rusage[ngpus_physical=3]: 0/1 hosts: 1 has fewer than 3 GPUs`},
		{name: "select reads the unused GPUs as ngpus_physical",
			hosts:   []Host{gpuHost("a 8 ngpus_physical=2", v100, v100), gpuHost("b 8 ngpus_physical=2", v100, v100)},
			running: []Alloc{gpuRun(10, "a", false, 0, 0)},
			jobs:    []Job{mkJob(1, "select[ngpus_physical>=2]")},
			want:    `1: b*1`},
		{name: "a running job from before devices were listed holds shared GPUs",
			hosts:   []Host{gpuHost("a 8", v100, v100)},
			running: []Alloc{mkRun(10, "bob normal 1m - a*1", "rusage[ngpus_physical=1]", 0)},
			jobs:    []Job{gpuJob(1, "num=2:x"), gpuJob(2, "num=1:x")},
			want: `1: PEND Job requirements for reserving resource (ngpus_physical) not satisfied: 1 host | -gpu num=2:j_exclusive=yes: 0/1 hosts: 1 has fewer than 2 free GPUs
2: a*1[1]`},
		{name: "jobs without GPUs are placed as before on GPU hosts",
			hosts: []Host{gpuHost("a 2", v100), mkHost("b 2")},
			jobs:  []Job{mkJob(1, "", "n=3"), gpuJob(2, "num=1")},
			want: `1: a*2 b*1
2: PEND Not enough job slot(s): 1 host | Job's resource requirements not satisfied: 1 host | -gpu num=1: 0/2 hosts: 1 has no GPUs`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshot(c.hosts, c.jobs...)
			s.Running = c.running
			got := renderGPU(s, Schedule(s))
			if strings.TrimSpace(got) != strings.TrimSpace(c.want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, strings.TrimSpace(c.want))
			}
		})
	}
}

func TestGPUCanEverRun(t *testing.T) {
	hs := []Host{mkHost("c 8"), gpuHost("a 8", v100, v100, t4), gpuHost("b 8", a100, a100)}
	for _, c := range []struct {
		g     GPUReq
		slots int
		want  bool
	}{
		{GPUReq{Num: 2}, 1, true},
		{GPUReq{Num: 3}, 1, true},
		{GPUReq{Num: 4}, 1, false},
		{GPUReq{Num: 2, Model: "A100", Mem: 40000}, 1, true},
		{GPUReq{Num: 1, Model: "V100", Mem: 40000}, 1, false},
		{GPUReq{Num: 1, Model: "T4", PerTask: true}, 2, false},
		{GPUReq{Num: 1, PerTask: true}, 3, true},
		{GPUReq{Num: 1, Vendor: "amd"}, 1, false},
		{GPUReq{Num: 1, Model: "H100"}, 1, false},
	} {
		if got := c.g.CanEverRun(hs, c.slots); got != c.want {
			t.Errorf("%s with %d slots: %v, want %v", c.g.String(), c.slots, got, c.want)
		}
	}
	s := snapshot(hs, gpuJob(1, "num=1"))
	s.Jobs[0].GPU.Vendor = "amd"
	if got := renderGPU(s, Schedule(s)); !strings.Contains(got, "-gpu num=1:gvendor=amd: 0/3 hosts: 2 have no GPU of vendor amd, 1 has no GPUs") {
		t.Errorf("amd: %s", got)
	}
}

// TestGPURelease: devices held by a running job are free in the next
// snapshot once its Alloc is gone (job ended, killed, or the controller
// rebuilt Running after a restart without it).
func TestGPURelease(t *testing.T) {
	hs := []Host{gpuHost("a 8", v100, v100)}
	s := snapshot(hs, gpuJob(1, "num=2:x"))
	d := Schedule(s)
	if len(d.Placements) != 1 {
		t.Fatalf("not placed: %v", d.Pending)
	}
	held := Alloc{Job: d.Placements[0].Job, User: "alice", Queue: "normal", Start: t0, Hosts: d.Placements[0].Hosts}
	s2 := snapshot(hs, gpuJob(2, "num=1"))
	s2.Running = []Alloc{held}
	if got := renderGPU(s2, Schedule(s2)); !strings.Contains(got, "2: PEND") {
		t.Fatalf("devices not held: %s", got)
	}
	v := Look(s2).Hosts["a"].GPUs
	if len(v) != 2 || !v[0].Exclusive || v[1].Jobs != 1 {
		t.Errorf("view: %+v", v)
	}
	s2.Running = nil
	if got := renderGPU(s2, Schedule(s2)); strings.TrimSpace(got) != "2: a*1[0]" {
		t.Errorf("after release: %s", got)
	}
}

// TestGPUSimulation runs cycles over 30 hosts with 0, 4 or 8 GPUs of
// mixed models, jobs of random GPU requests arriving and ending, and
// checks every cycle that no exclusive device is shared, that gmodel
// and gmem hold, and that every job eventually runs.
func TestGPUSimulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var hs []Host
	for i := range 30 {
		name := fmt.Sprintf("h%02d", i)
		switch i % 3 {
		case 0:
			hs = append(hs, mkHost(name+" 16"))
		case 1:
			hs = append(hs, gpuHost(name+" 16", v100, v100, t4, t4))
		case 2:
			hs = append(hs, gpuHost(name+" 16", append(times(4, a100), times(4, v100)...)...))
		}
	}
	byName := map[string]*Host{}
	for i := range hs {
		byName[hs[i].Name] = &hs[i]
	}
	models := []string{"", "", "", "A100", "V100", "T4"}
	var pending []Job
	var running []Alloc
	ends := map[JobKey]int{}
	want := map[JobKey]*GPUReq{}
	next := int64(1)
	for cycle := range 200 {
		for range rng.IntN(6) {
			spec := fmt.Sprintf("num=%d", 1+rng.IntN(4))
			if rng.IntN(2) == 0 {
				spec += ":x"
			}
			if m := models[rng.IntN(len(models))]; m != "" {
				spec += ":gmodel=" + m
			}
			if rng.IntN(4) == 0 {
				spec += ":gmem=" + fmt.Sprint(2000*(1+rng.IntN(6)))
			}
			j := gpuJob(next, spec)
			if rng.IntN(5) == 0 {
				j.GPU = nil // a job without GPUs
			}
			want[j.Key] = j.GPU
			pending = append(pending, j)
			next++
		}
		s := snapshot(hs, pending...)
		s.Running = running
		d := Schedule(s)
		for _, p := range d.Placements {
			running = append(running, Alloc{Job: p.Job, User: "alice", Queue: "normal", Start: t0, Hosts: p.Hosts})
			ends[p.Job] = cycle + 1 + rng.IntN(8)
			g := want[p.Job]
			for _, ha := range p.Hosts {
				if g == nil {
					if ha.GPU != nil {
						t.Fatalf("job %v without GPUs got %v", p.Job, ha.GPU)
					}
					continue
				}
				if ha.GPU == nil || len(ha.GPU.Devices) != g.Num {
					t.Fatalf("job %v (%s) on %s got %+v", p.Job, g, ha.Host, ha.GPU)
				}
				for _, i := range ha.GPU.Devices {
					dev := byName[ha.Host].GPUs[i]
					if g.Model != "" && !slices.Contains(dev.Names, strings.ToLower(g.Model)) || dev.MemTotal < g.Mem {
						t.Fatalf("job %v (%s) got %s device %d (%s)", p.Job, g, ha.Host, i, dev.Model)
					}
				}
			}
		}
		pending = slices.DeleteFunc(pending, func(j Job) bool { _, ok := d.Pending[j.Key]; return !ok })
		// Invariants over what runs now.
		type use struct {
			jobs, excl int
			mem        float64
		}
		uses := map[string]map[int]*use{}
		for _, a := range running {
			for _, ha := range a.Hosts {
				if ha.GPU == nil {
					continue
				}
				if uses[ha.Host] == nil {
					uses[ha.Host] = map[int]*use{}
				}
				for _, i := range ha.GPU.Devices {
					u := uses[ha.Host][i]
					if u == nil {
						u = &use{}
						uses[ha.Host][i] = u
					}
					u.jobs++
					u.mem += ha.GPU.Mem
					if ha.GPU.Exclusive {
						u.excl++
					}
				}
			}
		}
		for h, m := range uses {
			for i, u := range m {
				if u.excl > 0 && u.jobs > 1 {
					t.Fatalf("cycle %d: %s GPU %d: exclusive and shared by %d jobs", cycle, h, i, u.jobs)
				}
				if u.mem > byName[h].GPUs[i].MemTotal {
					t.Fatalf("cycle %d: %s GPU %d: %v MB reserved of %v", cycle, h, i, u.mem, byName[h].GPUs[i].MemTotal)
				}
			}
		}
		// Jobs end: their Allocs go, their devices come free.
		running = slices.DeleteFunc(running, func(a Alloc) bool { return ends[a.Job] <= cycle })
	}
	// Let everything drain without new arrivals.
	for cycle := 200; cycle < 400 && len(pending) > 0; cycle++ {
		s := snapshot(hs, pending...)
		s.Running = running
		d := Schedule(s)
		for _, p := range d.Placements {
			running = append(running, Alloc{Job: p.Job, User: "alice", Queue: "normal", Start: t0, Hosts: p.Hosts})
			ends[p.Job] = cycle + 1
		}
		pending = slices.DeleteFunc(pending, func(j Job) bool { _, ok := d.Pending[j.Key]; return !ok })
		running = slices.DeleteFunc(running, func(a Alloc) bool { return ends[a.Job] <= cycle })
	}
	for _, j := range pending {
		// Only a request no host can ever meet may stay: T4 with more
		// than 2 GPUs, or gmem above a T4's on T4.
		g := j.GPU
		if !(g.Model == "T4" && (g.Num > 2 || g.Mem > 15360)) {
			t.Errorf("job %v (%s) never ran: %v", j.Key, g, Schedule(snapshot(hs, j)).Pending[j.Key])
		}
	}
	if next < 400 {
		t.Fatalf("only %d jobs", next)
	}
}

// TestGPUCompound: the terms of a compound requirement on one host get
// different devices (the earlier terms' devices are taken).
func TestGPUCompound(t *testing.T) {
	s := snapshot([]Host{gpuHost("a 8", v100, v100, v100)}, gpuJob(1, "num=1:x"), gpuJob(2, "num=1:x"))
	s.Jobs[0].Req = req("1*{select[type==X86_64]} + 2*{select[type==X86_64]}")
	got := renderGPU(s, Schedule(s))
	want := "1: a*1[0] a*2[1]\n2: a*1[2]"
	if strings.TrimSpace(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
