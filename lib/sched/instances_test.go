package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"xce/lib/resreq"
)

var instSchema = func() *resreq.Schema {
	s, err := resreq.NewSchema(resreq.Resource{Name: "fpga", Kind: resreq.Numeric, Consumable: true})
	if err != nil {
		panic(err)
	}
	return s
}()

// instHost is a host of slots slots listing the fpga instances given.
func instHost(name string, slots int, fpgas ...string) Host {
	h := Host{Name: name, MaxSlots: slots, Values: instSchema.NewHost()}
	for k, v := range map[string]any{"type": "X86_64", "r15s": 0.0, "pg": 0.0, "mem": 16000.0, "fpga": float64(len(fpgas))} {
		if err := instSchema.Set(h.Values, k, v); err != nil {
			panic(err)
		}
	}
	if fpgas != nil {
		h.Instances = map[string][]string{"fpga": fpgas}
	}
	return h
}

func instJob(id int64, r string, slots int) Job {
	return Job{Key: JobKey{ID: id}, User: "alice", Queue: "normal", Project: "default", MinSlots: slots, MaxSlots: slots,
		Req: resreq.MustParse(r, resreq.WithSchema(instSchema)), Submit: t0.Add(time.Duration(id) * time.Second)}
}

// TestInstances: two jobs each get one of two instances, by name; a
// third waits with the resource named; a running job's instance is not
// given again, and a job with /task gets one per slot.
func TestInstances(t *testing.T) {
	s := &Snapshot{Now: t0, Schema: instSchema, Queues: []Queue{{Name: "normal", Priority: 1}},
		Hosts: []Host{instHost("a", 4, "fpga0", "fpga1")}}
	for i := int64(1); i <= 3; i++ {
		s.Jobs = append(s.Jobs, instJob(i, "rusage[fpga=1]", 1))
	}
	d := Schedule(s)
	if len(d.Placements) != 2 {
		t.Fatalf("placed %d jobs, want 2: %+v", len(d.Placements), d)
	}
	for i, want := range []string{"fpga0", "fpga1"} {
		if got := d.Placements[i].Hosts[0].Instances["fpga"]; !slices.Equal(got, []string{want}) {
			t.Errorf("job %v got %v, want %s", d.Placements[i].Job, got, want)
		}
	}
	why := strings.Join(d.Pending[JobKey{ID: 3}], " | ")
	if !strings.Contains(why, "fpga") {
		t.Errorf("the third job's reason does not name fpga: %q", why)
	}

	// fpga0 held by a running job (with a duration that would have
	// decayed a plain counter): the next job gets fpga1, the one after
	// waits.
	s.Running = []Alloc{{Job: JobKey{ID: 9}, User: "bob", Queue: "normal", Start: t0.Add(-time.Hour), Hosts: []HostAlloc{{Host: "a", Slots: 1,
		Rusage: resreq.MustParse("rusage[fpga=1:duration=1]", resreq.WithSchema(instSchema)).Simple.Rusage.Or[0], Instances: map[string][]string{"fpga": {"fpga0"}}}}}}
	d = Schedule(s)
	if len(d.Placements) != 1 || !slices.Equal(d.Placements[0].Hosts[0].Instances["fpga"], []string{"fpga1"}) {
		t.Fatalf("with fpga0 held: %+v", d.Placements)
	}

	// /task: two slots, two instances.
	s.Running = nil
	s.Jobs = []Job{instJob(1, "rusage[fpga=1/task]", 2)}
	d = Schedule(s)
	if len(d.Placements) != 1 || !slices.Equal(d.Placements[0].Hosts[0].Instances["fpga"], []string{"fpga0", "fpga1"}) {
		t.Fatalf("rusage[fpga=1/task] -n 2: %+v", d.Placements)
	}
}

// TestInstancesSimulation: random hosts with random instance lists and
// random jobs reserving them, cycle after cycle with jobs ending: no
// instance is ever held by two jobs, and every placement gets exactly
// what its rusage asks on each host.
func TestInstancesSimulation(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 33))
	var hs []Host
	for i := range 40 {
		var names []string
		for k := range r.IntN(5) {
			names = append(names, fmt.Sprintf("fpga%d", k))
		}
		if len(names) == 0 {
			names = nil
		}
		hs = append(hs, instHost(fmt.Sprintf("h%02d", i), 1+r.IntN(6), names...))
	}
	reqs := []string{"rusage[fpga=1]", "rusage[fpga=2]", "rusage[fpga=1/task]", "select[fpga>0] rusage[fpga=1]", ""}
	var pending []Job
	type run struct {
		a    Alloc
		ends time.Time
	}
	var running []run
	now := t0
	id := int64(0)
	placed := 0
	for cycle := range 300 {
		now = now.Add(time.Minute)
		for range r.IntN(8) {
			id++
			q := reqs[r.IntN(len(reqs))]
			if q == "" {
				q = "select[type==any]"
			}
			pending = append(pending, instJob(id, q, 1+r.IntN(3)))
		}
		keep := running[:0]
		for _, ru := range running {
			if ru.ends.After(now) {
				keep = append(keep, ru)
			}
		}
		running = keep
		s := &Snapshot{Now: now, Schema: instSchema, Queues: []Queue{{Name: "normal", Priority: 1}}, Hosts: hs, Jobs: pending}
		for _, ru := range running {
			s.Running = append(s.Running, ru.a)
		}
		d := Schedule(s)
		started := map[JobKey]bool{}
		for _, p := range d.Placements {
			started[p.Job] = true
			placed++
			for _, ha := range p.Hosts {
				want := instanceNeed(&ha, "fpga")
				if h := hostNamed(hs, ha.Host); h.Instances == nil {
					want = 0
				}
				if got := len(ha.Instances["fpga"]); got != want {
					t.Fatalf("cycle %d: job %v got %d instances on %s, its rusage asks %d", cycle, p.Job, got, ha.Host, want)
				}
			}
			running = append(running, run{Alloc{Job: p.Job, User: "alice", Queue: "normal", Start: now, Hosts: p.Hosts},
				now.Add(time.Duration(1+r.IntN(10)) * time.Minute)})
		}
		held := map[string]JobKey{}
		for _, ru := range running {
			for _, ha := range ru.a.Hosts {
				for _, n := range ha.Instances["fpga"] {
					k := ha.Host + "/" + n
					if other, dup := held[k]; dup {
						t.Fatalf("cycle %d: %s given to jobs %v and %v", cycle, k, other, ru.a.Job)
					}
					if !slices.Contains(hostNamed(hs, ha.Host).Instances["fpga"], n) {
						t.Fatalf("cycle %d: %s is not an instance of the host", cycle, k)
					}
					held[k] = ru.a.Job
				}
			}
		}
		rest := pending[:0]
		for _, j := range pending {
			if !started[j.Key] {
				rest = append(rest, j)
			}
		}
		pending = rest
	}
	if placed < 200 {
		t.Errorf("a weak test: %d placements", placed)
	}
}

func hostNamed(hs []Host, name string) *Host {
	for i := range hs {
		if hs[i].Name == name {
			return &hs[i]
		}
	}
	return nil
}
