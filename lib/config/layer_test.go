package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// summary renders what Layer decided, one value per line with its origin,
// then the pend checks.
func summary(r *Result) string {
	e := r.Effective
	var b strings.Builder
	line := func(field, text string) {
		if o, ok := r.Origin[field]; ok {
			fmt.Fprintf(&b, "%s %s [%s]\n", field, text, o)
		}
	}
	line("queue", e.Queue)
	line("app", e.App)
	line("project", e.Project)
	line("min_tasks", fmt.Sprintf("%d-%d", e.MinTasks, e.MaxTasks))
	line("res_req", strings.Join(e.ResReq, " | "))
	line("run_limit_sec", Duration(e.RunLimitSec).String())
	line("mem_limit_kb", Memory(e.MemLimitKb).String())
	line("pre_exec", strings.Join(r.Exec.PreExec, ", "))
	line("post_exec", strings.Join(r.Exec.PostExec, ", "))
	line("job_starter", r.Exec.JobStarter)
	line("env", strings.Join(r.Exec.Env, " "))
	for _, p := range r.Pend {
		host := ""
		if p.PerHost {
			host = " per host"
		}
		fmt.Fprintf(&b, "pend %d %s need %d of %d%s: %s\n", p.Kind, p.Name, p.Need, p.Max, host, p.Reason)
	}
	return b.String()
}

func TestLayer(t *testing.T) {
	cfg, err := Load("testdata/layer.toml")
	if err != nil {
		t.Fatal(err)
	}
	const GB = 1 << 20
	type sub = api.JobSpec
	tests := []struct {
		name string
		sub  *api.JobSpec
		want string // the summary, or the rejection's text
	}{
		// Defaults from every layer.
		{"nothing given", &sub{}, `
queue normal [default]
project default [default]
min_tasks 1-1 [default]
run_limit_sec 72h [queue normal]
mem_limit_kb 4GB [queue normal]
`},
		{"queue default run limit, ceiling as memory limit", &sub{Queue: "short"}, `
queue short [job]
project default [default]
min_tasks 1-1 [default]
run_limit_sec 10m [queue short]
mem_limit_kb 64GB [queue short]
`},
		{"profile defaults", &sub{App: "dflt"}, `
queue normal [default]
app dflt [job]
project default [default]
min_tasks 2-2 [profile dflt]
res_req select[mem > 1GB] order[r15s] rusage[mem=2GB] span[hosts=1] [profile dflt]
run_limit_sec 2h [profile dflt]
mem_limit_kb 8GB [profile dflt]
pre_exec /app/pre [profile dflt]
post_exec /app/post [profile dflt]
job_starter strace %USRCMD [profile dflt]
env A=app B=app [profile dflt]
`},

		// default: the job overrides; select is ANDed.
		{"default profile: job overrides every attribute", &sub{App: "dflt", MinTasks: 3, MaxTasks: 6, RunLimitSec: 3 * 3600, MemLimitKb: 16 * GB,
			ResReq: []string{"select[bigmem] span[ptile=2] rusage[mem=4GB] order[ut]"}, Env: []string{"A=mine"}}, `
queue normal [default]
app dflt [job]
project default [default]
min_tasks 3-6 [job]
res_req select[bigmem && mem > 1GB] order[ut] rusage[mem=4GB] span[ptile=2] [job + profile dflt]
run_limit_sec 3h [job]
mem_limit_kb 16GB [job]
pre_exec /app/pre [profile dflt]
post_exec /app/post [profile dflt]
job_starter strace %USRCMD [profile dflt]
env B=app [profile dflt]
`},
		{"default profile: job only adds select", &sub{App: "dflt", ResReq: []string{"bigmem"}}, `
queue normal [default]
app dflt [job]
project default [default]
min_tasks 2-2 [profile dflt]
res_req select[bigmem && mem > 1GB] order[r15s] rusage[mem=2GB] span[hosts=1] [job + profile dflt]
run_limit_sec 2h [profile dflt]
mem_limit_kb 8GB [profile dflt]
pre_exec /app/pre [profile dflt]
post_exec /app/post [profile dflt]
job_starter strace %USRCMD [profile dflt]
env A=app B=app [profile dflt]
`},

		// fixed: the job may add, never change.
		{"fixed profile: job adds select and a new section", &sub{App: "fixed", ResReq: []string{"select[bigmem] order[ut]"}, Env: []string{"A=mine"}}, `
queue normal [default]
app fixed [job]
project default [default]
min_tasks 4-4 [profile fixed]
res_req select[bigmem && mem > 1GB] order[ut] rusage[mem=2GB] span[hosts=1] [job + profile fixed]
run_limit_sec 30m [profile fixed]
mem_limit_kb 8GB [profile fixed]
pre_exec /app/pre [profile fixed]
env A=app [profile fixed]
`},
		{"fixed profile: job repeats the fixed values", &sub{App: "fixed", MinTasks: 4, RunLimitSec: 1800, MemLimitKb: 8 * GB, ResReq: []string{"span[hosts=1]"}}, `
queue normal [default]
app fixed [job]
project default [default]
min_tasks 4-4 [job]
res_req select[mem > 1GB] rusage[mem=2GB] span[hosts=1] [job + profile fixed]
run_limit_sec 30m [job]
mem_limit_kb 8GB [job]
pre_exec /app/pre [profile fixed]
env A=app [profile fixed]
`},
		{"fixed profile refuses another span", &sub{App: "fixed", ResReq: []string{"span[ptile=2]"}},
			"Application profile fixed fixes span[hosts=1]; the job asks for span[ptile=2] (a job may only add select[] terms and sections the profile does not set)"},
		{"fixed profile refuses another rusage amount", &sub{App: "fixed", ResReq: []string{"rusage[mem=4GB]"}},
			"Application profile fixed fixes rusage[mem=2GB]; the job asks for rusage[mem=4GB] (a job may only add select[] terms and sections the profile does not set)"},
		{"fixed profile refuses -n", &sub{App: "fixed", MinTasks: 8, MaxTasks: 8},
			"Application profile fixed fixes the number of tasks at 4; the job asks for 8 (-n)"},
		{"fixed profile refuses a task range", &sub{App: "fixed", MinTasks: 2, MaxTasks: 4},
			"Application profile fixed fixes the number of tasks at 4; the job asks for 2,4 (-n)"},
		{"fixed profile refuses -W", &sub{App: "fixed", RunLimitSec: 3600},
			"Application profile fixed fixes the run limit at 30m; the job asks for 1h (-W)"},
		{"fixed profile refuses -M", &sub{App: "fixed", MemLimitKb: 16 * GB},
			"Application profile fixed fixes the memory limit at 8 GB; the job asks for 16 GB (-M)"},

		// Pre/post-exec: profile outer, job inner; queue (deprecated) outermost.
		{"job pre/post-exec inside the profile's", &sub{App: "dflt", PreExec: "/job/pre", PostExec: "/job/post"}, `
queue normal [default]
app dflt [job]
project default [default]
min_tasks 2-2 [profile dflt]
res_req select[mem > 1GB] order[r15s] rusage[mem=2GB] span[hosts=1] [profile dflt]
run_limit_sec 2h [profile dflt]
mem_limit_kb 8GB [profile dflt]
pre_exec /app/pre, /job/pre [job + profile dflt]
post_exec /job/post, /app/post [job + profile dflt]
job_starter strace %USRCMD [profile dflt]
env A=app B=app [profile dflt]
`},
		{"profile forbids -E", &sub{App: "fixed", PreExec: "/job/pre"},
			"Application profile fixed does not allow a job's own pre-execution command (-E)"},
		{"profile forbids -Ep", &sub{App: "fixed", PostExec: "/job/post"},
			"Application profile fixed does not allow a job's own post-execution command (-Ep)"},
		{"queue-level RES_REQ, PRE_EXEC, POST_EXEC (deprecated)", &sub{Queue: "legacy", ResReq: []string{"select[ut < 0.5] rusage[mem=500]"}, PreExec: "/job/pre"}, `
queue legacy [job]
project default [default]
min_tasks 1-1 [default]
res_req select[ut < 0.5 && bigmem] rusage[mem=500] [job + queue legacy (deprecated)]
pre_exec /q/pre, /job/pre [job + queue legacy (deprecated)]
post_exec /q/post [queue legacy (deprecated)]
`},
		{"queue-level RES_REQ with a profile", &sub{Queue: "legacy", App: "dflt"}, `
queue legacy [job]
app dflt [job]
project default [default]
min_tasks 2-2 [profile dflt]
res_req select[mem > 1GB && bigmem] order[r15s] rusage[mem=2GB] span[hosts=1] [profile dflt + queue legacy (deprecated)]
run_limit_sec 2h [profile dflt]
mem_limit_kb 8GB [profile dflt]
pre_exec /q/pre, /app/pre [profile dflt + queue legacy (deprecated)]
post_exec /app/post, /q/post [profile dflt + queue legacy (deprecated)]
job_starter strace %USRCMD [profile dflt]
env A=app B=app [profile dflt]
`},

		// Ceilings: never satisfiable is rejected, naming the ceiling.
		{"memory over the queue ceiling", &sub{Queue: "short", MemLimitKb: 512 * GB},
			"Job requests 512 GB memory; queue short allows at most 64 GB"},
		{"run limit over the queue ceiling", &sub{Queue: "short", RunLimitSec: 2 * 3600},
			"Job requests a run limit of 2h; queue short allows at most 1h"},
		// A profile's limits do not override the queue's hard limits: the
		// queue's apply (LSF), the job is not refused.
		{"profile run limit over the queue ceiling", &sub{Queue: "short", App: "big"}, `
queue short [job]
app big [job]
project default [default]
min_tasks 1-1 [default]
run_limit_sec 1h [queue short]
mem_limit_kb 64GB [queue short]
`},
		{"profile memory over the queue ceiling", &sub{App: "big"}, `
queue normal [default]
app big [job]
project default [default]
min_tasks 1-1 [default]
run_limit_sec 24h [profile big]
mem_limit_kb 256GB [queue normal]
`},
		{"job run limit over the queue ceiling with a profile", &sub{Queue: "short", App: "big", RunLimitSec: 2 * 3600},
			"Job requests a run limit of 2h; queue short allows at most 1h"},
		{"tasks over the queue's", &sub{Queue: "short", MinTasks: 32, MaxTasks: 32},
			"Job requests 32 tasks; queue short allows at most 16"},
		{"task range over the queue's", &sub{Queue: "short", MinTasks: 8, MaxTasks: 20},
			"Job requests 20 tasks; queue short allows at most 16"},
		{"tasks over the profile's", &sub{App: "dflt", MinTasks: 10},
			"Job requests 10 tasks; application profile dflt allows at most 8"},
		{"tasks under the profile's", &sub{App: "wide", MinTasks: 2},
			"Job requests 2 tasks; application profile wide requires at least 4"},
		{"profile minimum over the queue's", &sub{Queue: "short", App: "wide"},
			"Job requests 32 tasks (from application profile wide); queue short allows at most 16"},
		{"more slots than the queue ever allows", &sub{Queue: "limits", MinTasks: 20},
			"Job requests 20 job slots; queue limits allows at most 16 job slots"},
		{"more slots than a user may have in the queue", &sub{Queue: "limits", MinTasks: 10},
			"Job requests 10 job slots; queue limits allows at most 8 job slots per user"},
		{"more slots on one host than the queue allows", &sub{Queue: "limits", MinTasks: 6, ResReq: []string{"span[hosts=1]"}},
			"Job requests 6 job slots; queue limits allows at most 4 job slots per host"},
		{"more slots than the project quota", &sub{Project: "p1", MinTasks: 13},
			"Job requests 13 job slots; project p1 allows at most 12 job slots"},
		{"more memory than the project quota", &sub{Project: "p1", MemLimitKb: 200 * GB},
			"Job requests 200 GB memory; project p1 allows at most 100 GB"},
		{"more memory by rusage than the project quota", &sub{Project: "p1", Queue: "legacy", MinTasks: 2, ResReq: []string{"rusage[mem=60GB]"}},
			"Job requests 120 GB memory; project p1 allows at most 100 GB"},
		{"more GPUs than the project quota", &sub{Project: "p1", Gpu: "num=8:mode=exclusive_process"},
			"Job requests 8 GPUs; project p1 allows at most 4"},
		{"more licenses than the cluster has", &sub{ResReq: []string{"rusage[verilog=6]"}},
			"Job requests 6 verilog; the cluster has 5 verilog in all"},

		// Per-user limits: the user's own, else users.default.
		{"a user's own slot limit pends", &sub{User: "carol", MinTasks: 2, Queue: "short"}, `
queue short [job]
project default [default]
min_tasks 2-2 [job]
run_limit_sec 10m [queue short]
mem_limit_kb 64GB [queue short]
pend 8 carol need 2 of 3: The user has reached his/her job slot limit
`},
		{"more slots than the user may ever have", &sub{User: "carol", MinTasks: 4},
			"Job requests 4 job slots; user carol may use at most 3 job slots"},

		// Full now: pend checks for the scheduler.
		{"queue slot limits pend", &sub{Queue: "limits", MinTasks: 6}, `
queue limits [job]
project default [default]
min_tasks 6-6 [job]
pend 1 limits need 6 of 16: The queue has reached its job slot limit
pend 2 limits need 6 of 8: User has reached the per-user job slot limit of the queue
pend 3 limits need 1 of 4 per host: Queue's per-host job slot limit reached
`},
		{"queue per-host limit of a one-host job", &sub{Queue: "limits", MinTasks: 3, ResReq: []string{"span[hosts=1]"}}, `
queue limits [job]
project default [default]
min_tasks 3-3 [job]
res_req span[hosts=1] [job]
pend 1 limits need 3 of 16: The queue has reached its job slot limit
pend 2 limits need 3 of 8: User has reached the per-user job slot limit of the queue
pend 3 limits need 3 of 4 per host: Queue's per-host job slot limit reached
`},
		{"project quotas pend", &sub{Project: "p1", MinTasks: 2, MemLimitKb: 10 * GB, Gpu: "-"}, `
queue normal [default]
project p1 [job]
min_tasks 2-2 [job]
run_limit_sec 72h [queue normal]
mem_limit_kb 10GB [job]
pend 5 p1 need 10485760 of 104857600: Project p1 has reached its quota of 100 GB memory
pend 6 p1 need 1 of 4: Project p1 has reached its quota of 4 GPUs
pend 4 p1 need 2 of 12: Project p1 has reached its quota of 12 job slots
`},
		{"project memory by rusage, not by the queue's ceiling", &sub{Queue: "short", Project: "p1", ResReq: []string{"rusage[mem=1GB]"}}, `
queue short [job]
project p1 [job]
min_tasks 1-1 [default]
res_req rusage[mem=1GB] [job]
run_limit_sec 10m [queue short]
mem_limit_kb 64GB [queue short]
pend 5 p1 need 1048576 of 104857600: Project p1 has reached its quota of 100 GB memory
pend 4 p1 need 1 of 12: Project p1 has reached its quota of 12 job slots
`},
		{"shared resource pends", &sub{ResReq: []string{"rusage[verilog=2]"}}, `
queue normal [default]
project default [default]
min_tasks 1-1 [default]
res_req rusage[verilog=2] [job]
run_limit_sec 72h [queue normal]
mem_limit_kb 4GB [queue normal]
pend 7 verilog need 2 of 5: Job's requirements for reserving resource (verilog) not satisfied
`},

		// Other rejections.
		{"no such queue", &sub{Queue: "nosuch"}, "nosuch: No such queue"},
		{"no such profile", &sub{App: "nosuch"}, "nosuch: No such application profile"},
		{"user not allowed in the queue", &sub{Queue: "staff", User: "carol"}, "staff: User cannot use the queue"},
		{"exclusive job in a queue without exclusive", &sub{Exclusive: true}, "normal: Queue does not accept EXCLUSIVE jobs"},
		{"bad -R", &sub{ResReq: []string{"select[mem>]"}}, "Bad resource requirement syntax: column 12: expected a number or a resource name after '>'"},
		{"bad one of several -R", &sub{ResReq: []string{"bigmem", "select[mem>]"}}, `Bad resource requirement syntax: "select[mem>]": column 12: expected a number or a resource name after '>'`},
		{"unknown resource in -R", &sub{ResReq: []string{"select[fast]"}}, "Bad resource requirement syntax: column 8: unknown resource name 'fast'"},
		{"bad -gpu num", &sub{Project: "p1", Gpu: "num=x"}, "Bad GPU requirement: num=x: expected a positive number of GPUs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := proto.Clone(tc.sub)
			r, err := Layer(tc.sub, cfg)
			if !proto.Equal(before, tc.sub) {
				t.Errorf("Layer modified the submission")
			}
			var got string
			if err != nil {
				var rej *Rejection
				if !errors.As(err, &rej) {
					t.Errorf("error %v is not a *Rejection", err)
				}
				got = err.Error()
			} else {
				got = "\n" + summary(r)
			}
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestLayerAccess(t *testing.T) {
	cfg, err := Load("testdata/layer.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"alice", "bob"} {
		r, err := Layer(&api.JobSpec{Queue: "staff", User: u, Exclusive: true}, cfg)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if !r.Effective.Exclusive {
			t.Errorf("%s: exclusive lost", u)
		}
	}
}

func TestLayerKeepsOtherFields(t *testing.T) {
	cfg := Default("h1", 4)
	s := &api.JobSpec{Command: "sleep 1", JobName: "x", OutputFile: "o", Hosts: []string{"h1"}, Env: []string{"A=1"}, User: "u"}
	r, err := Layer(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := r.Effective
	if e.Command != s.Command || e.JobName != "x" || e.OutputFile != "o" || !slices.Equal(e.Hosts, s.Hosts) || e.User != "u" {
		t.Errorf("fields lost: %v", e)
	}
	if e.Queue != "normal" || e.Project != "default" || e.MinTasks != 1 || e.MaxTasks != 1 {
		t.Errorf("defaults: %v", e)
	}
	if len(r.Pend) != 0 {
		t.Errorf("pend checks with the default configuration: %v", r.Pend)
	}
}

func TestPendCheckBlocks(t *testing.T) {
	p := PendCheck{Max: 16, Need: 4}
	if p.Blocks(12) || !p.Blocks(13) {
		t.Errorf("Blocks: 12+4 fits 16, 13+4 does not")
	}
}

func TestOriginString(t *testing.T) {
	o := Origin{{Source: FromJob}, {Source: FromProfile, Name: "a"}, {Source: FromQueue, Name: "q", Deprecated: true}}
	if got, want := o.String(), "job + profile a + queue q (deprecated)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !o.Deprecated() || o[:2].Deprecated() {
		t.Errorf("Deprecated")
	}
}

// users.default limits every user without an entry of their own.
func TestUserDefaultLimit(t *testing.T) {
	cfg, err := Parse("u.toml", []byte("[queues.normal]\n[users.default]\nmax_slots = 20\n[users.carol]\nmax_slots = 30\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Layer(&api.JobSpec{User: "dave", MinTasks: 21}, cfg); err == nil ||
		err.Error() != "Job requests 21 job slots; user dave may use at most 20 job slots" {
		t.Errorf("dave: %v", err)
	}
	r, err := Layer(&api.JobSpec{User: "carol", MinTasks: 21}, cfg)
	if err != nil {
		t.Fatalf("carol: %v", err)
	}
	if p := r.Pend[len(r.Pend)-1]; p.Kind != UserSlots || p.Max != 30 || p.Name != "carol" {
		t.Errorf("carol's check: %+v", p)
	}
}

// A job is rerunnable with -r, or by its profile's or queue's rerunnable
// (the profile named as the origin before the queue); never interactive.
func TestLayerRerunnable(t *testing.T) {
	cfg, err := Parse("rerun.toml", []byte(`
[cluster]
default_queue = "normal"
[queues.normal]
[queues.rerun]
rerunnable = true
[apps.again]
rerunnable = true
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		sub  *api.JobSpec
		want bool
		from string
	}{
		{"plain", &api.JobSpec{Queue: "normal"}, false, ""},
		{"-r", &api.JobSpec{Queue: "normal", Rerunnable: true}, true, ""},
		{"queue", &api.JobSpec{Queue: "rerun"}, true, "queue rerun"},
		{"profile", &api.JobSpec{Queue: "normal", App: "again"}, true, "profile again"},
		{"profile over queue", &api.JobSpec{Queue: "rerun", App: "again"}, true, "profile again"},
		{"interactive", &api.JobSpec{Queue: "rerun", Interactive: api.Interactive_PLAIN}, false, ""},
	}
	for _, tt := range tests {
		r, err := Layer(tt.sub, cfg)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if r.Effective.Rerunnable != tt.want || r.Origin["rerunnable"].String() != tt.from {
			t.Errorf("%s: rerunnable %v from %q, want %v from %q", tt.name, r.Effective.Rerunnable, r.Origin["rerunnable"], tt.want, tt.from)
		}
	}
}
