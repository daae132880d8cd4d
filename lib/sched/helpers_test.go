package sched

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"xce/lib/resreq"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

var testSchema = func() *resreq.Schema {
	s, err := resreq.NewSchema(
		resreq.Resource{Name: "lic_x", Kind: resreq.Numeric, Consumable: true},
		resreq.Resource{Name: "lic_y", Kind: resreq.Numeric, Consumable: true},
		resreq.Resource{Name: "gpu", Kind: resreq.Boolean},
	)
	if err != nil {
		panic(err)
	}
	return s
}()

// mkHost builds a host: "name slots key=value..." with numeric values,
// type=X / model=Y strings, and bare words as Booleans. Defaults: type
// X86_64, r15s 0, mem 16000.
func mkHost(spec string) Host {
	f := strings.Fields(spec)
	h := Host{Name: f[0]}
	fmt.Sscan(f[1], &h.MaxSlots)
	v := testSchema.NewHost()
	set := func(k string, val any) {
		if err := testSchema.Set(v, k, val); err != nil {
			panic(err)
		}
	}
	set("type", "X86_64")
	set("r15s", 0.0)
	set("pg", 0.0)
	set("mem", 16000.0)
	for _, kv := range f[2:] {
		switch kv {
		case "closed":
			h.Status = HostClosed
			continue
		case "unavail":
			h.Status = HostUnavail
			continue
		case "locked":
			h.Status = HostLocked
			continue
		}
		k, val, ok := strings.Cut(kv, "=")
		if !ok {
			set(k, true)
			continue
		}
		if r, _, _ := testSchema.Lookup(k); r.Kind == resreq.String {
			set(k, val)
			continue
		}
		var x float64
		fmt.Sscan(val, &x)
		set(k, x)
	}
	h.Values = v
	return h
}

func hosts(specs ...string) []Host {
	var out []Host
	for _, s := range specs {
		out = append(out, mkHost(s))
	}
	return out
}

func req(s string) *resreq.ResReq {
	if s == "" {
		return nil
	}
	return resreq.MustParse(s, resreq.WithSchema(testSchema))
}

// mkJob: id, requirement, then options "n=2", "n=2,4", "u=alice",
// "q=queue", "P=proj", "x", "m=a,b", "sp=5", "W=30m".
func mkJob(id int64, r string, opts ...string) Job {
	j := Job{Key: JobKey{ID: id}, User: "alice", Queue: "normal", Project: "default", Req: req(r), Submit: t0.Add(-time.Minute)}
	for _, o := range opts {
		k, v, _ := strings.Cut(o, "=")
		switch k {
		case "n":
			lo, hi, ok := strings.Cut(v, ",")
			fmt.Sscan(lo, &j.MinSlots)
			if ok {
				fmt.Sscan(hi, &j.MaxSlots)
			}
		case "u":
			j.User = v
		case "q":
			j.Queue = v
		case "P":
			j.Project = v
		case "x":
			j.Exclusive = true
		case "m":
			j.Hosts = strings.Split(v, ",")
		case "sp":
			fmt.Sscan(v, &j.Priority)
		case "W":
			j.RunLimit, _ = time.ParseDuration(v)
		case "age":
			d, _ := time.ParseDuration(v)
			j.Submit = t0.Add(-d)
		default:
			panic("bad option " + o)
		}
	}
	return j
}

// mkRun: a running job "id user queue start-ago runlimit host*slots,... [rusage] [used mem]".
func mkRun(id int64, spec string, rusage string, used float64) Alloc {
	f := strings.Fields(spec)
	a := Alloc{Job: JobKey{ID: id}, User: f[0], Queue: f[1], Project: "default"}
	ago, _ := time.ParseDuration(f[2])
	a.Start = t0.Add(-ago)
	if f[3] != "-" {
		a.RunLimit, _ = time.ParseDuration(f[3])
	}
	if len(f) > 5 && f[5] == "x" {
		a.Exclusive = true
	}
	var set resreq.UsageSet
	if rusage != "" {
		set = req(rusage).Simple.Rusage.Or[0]
	}
	for i, hs := range strings.Split(f[4], ",") {
		n, s, _ := strings.Cut(hs, "*")
		ha := HostAlloc{Host: n, Rusage: set, Lead: i == 0}
		fmt.Sscan(s, &ha.Slots)
		if used > 0 {
			ha.Used = map[string]float64{"mem": used}
		}
		a.Hosts = append(a.Hosts, ha)
	}
	return a
}

// render prints the decision job by job, in the snapshot's order:
// "1: a*2 b*2" or "2: PEND reason | reason".
func render(s *Snapshot, d *Decision) string {
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
			}
		} else if why, ok := d.Pending[j.Key]; ok {
			sb.WriteString(" PEND " + strings.Join(why, " | "))
		} else {
			sb.WriteString(" MISSING")
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func snapshot(hs []Host, jobs ...Job) *Snapshot {
	return &Snapshot{Now: t0, Schema: testSchema, Hosts: hs, Queues: []Queue{{Name: "normal", Priority: 30}}, Jobs: jobs}
}

func check(t *testing.T, s *Snapshot, want string) *Decision {
	t.Helper()
	d := Schedule(s)
	got := render(s, d)
	if strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("got:\n%s\nwant:\n%s", got, strings.TrimSpace(want))
	}
	return d
}
