package sched

import (
	"reflect"
	"testing"
)

// TestResourceLimits covers lsb.resources Limit sections: each consumer
// kind, the per lists, JOBS, SLOTS_PER_PROCESSOR, percentages, host
// lists, and the reasons LSF gives.
func TestResourceLimits(t *testing.T) {
	withApp := func(j Job, app, lic string) Job { j.App, j.LicProject = app, lic; return j }
	type tc struct {
		name   string
		hosts  []string
		jobs   []Job
		limits []Limit
		run    []Alloc
		want   string
	}
	cases := []tc{
		{name: "users: a user group counts together",
			hosts:  []string{"a 8"},
			jobs:   []Job{mkJob(1, ""), mkJob(2, "", "u=carol"), mkJob(3, "", "u=zed")},
			limits: []Limit{{Name: "grp", Users: []string{"devs"}, Slots: 2}},
			run:    []Alloc{mkRun(9, "bob normal 1m - a*1", "", 0)},
			want: `1: a*1
2: PEND Resource (slot) limit defined on user or user group has been reached | limit grp: 2 slots of 2 in use by its consumers
3: a*1`},
		{name: "per_user: one limit for each user, counted within the cycle",
			hosts:  []string{"a 8"},
			jobs:   []Job{mkJob(1, ""), mkJob(2, ""), mkJob(3, "", "u=bob")},
			limits: []Limit{{Name: "pu", PerUsers: []string{"all"}, Slots: 1}},
			want: `1: a*1
2: PEND Resource (slot) limit defined on user or user group has been reached | limit pu: 1 slots of 1 in use by user alice
3: a*1`},
		{name: "per_user: a group's members each (nested too), ~ leaves one out",
			hosts:  []string{"a 8"},
			jobs:   []Job{mkJob(1, ""), mkJob(2, ""), mkJob(3, "", "u=bob"), mkJob(4, "", "u=bob"), mkJob(5, "", "u=carol"), mkJob(6, "", "u=carol")},
			limits: []Limit{{Name: "pu", PerUsers: []string{"devs", "~bob"}, Slots: 1}},
			want: `1: a*1
2: PEND Resource (slot) limit defined on user or user group has been reached | limit pu: 1 slots of 1 in use by user alice
3: a*1
4: a*1
5: a*1
6: PEND Resource (slot) limit defined on user or user group has been reached | limit pu: 1 slots of 1 in use by user carol`},
		{name: "queues: JOBS counts jobs, not slots",
			hosts:  []string{"a 8"},
			jobs:   []Job{mkJob(1, "", "n=4"), mkJob(2, ""), mkJob(3, "", "q=other")},
			limits: []Limit{{Name: "qj", Queues: []string{"normal"}, Jobs: 1}},
			want: `1: a*4
2: PEND JOBS limit defined for the queue has been reached | limit qj: 1 jobs of 1 in use by its consumers
3: a*1`},
		{name: "JOBS counts suspended (running) jobs",
			hosts:  []string{"a 8"},
			jobs:   []Job{mkJob(1, "")},
			limits: []Limit{{Name: "cj", Jobs: 1}},
			run:    []Alloc{mkRun(9, "bob other 1m - a*1", "", 0)},
			want:   `1: PEND JOBS limit defined cluster-wide has been reached | limit cj: 1 jobs of 1 in use by its consumers`},
		{name: "per_queue",
			hosts:  []string{"a 8"},
			jobs:   []Job{mkJob(1, ""), mkJob(2, ""), mkJob(3, "", "q=other")},
			limits: []Limit{{Name: "pq", PerQueues: []string{"all"}, Slots: 1}},
			want: `1: a*1
2: PEND Resource (slot) limit defined on queue has been reached | limit pq: 1 slots of 1 in use by queue normal
3: a*1`},
		{name: "projects and per_project",
			hosts: []string{"a 8"},
			jobs:  []Job{mkJob(1, "", "P=p1"), mkJob(2, "", "P=p1"), mkJob(3, "", "P=p2"), mkJob(4, "", "P=p3")},
			limits: []Limit{{Name: "pp", PerProjects: []string{"p1", "p2"}, Jobs: 1},
				{Name: "all3", Projects: []string{"p3"}, Slots: 0, Jobs: 0}},
			want: `1: a*1
2: PEND JOBS limit defined for the project has been reached | limit pp: 1 jobs of 1 in use by project p1
3: a*1
4: a*1`},
		{name: "apps and licence projects",
			hosts: []string{"a 8"},
			jobs: []Job{withApp(mkJob(1, ""), "fluent", ""), withApp(mkJob(2, ""), "fluent", ""),
				withApp(mkJob(3, ""), "", "lp1"), withApp(mkJob(4, ""), "", "lp1"), mkJob(5, "")},
			limits: []Limit{{Name: "app", Apps: []string{"fluent"}, Slots: 1}, {Name: "lic", PerLicProjects: []string{"all"}, Jobs: 1}},
			want: `1: a*1
2: PEND Resource (slot) limit defined cluster-wide has been reached | limit app: 1 slots of 1 in use by its consumers
3: a*1
4: PEND JOBS limit defined cluster-wide has been reached | limit lic: 1 jobs of 1 in use by licence project lp1
5: PEND JOBS limit defined cluster-wide has been reached | limit lic: 1 jobs of 1 in use by licence project `},
		{name: "every consumer list must match",
			hosts:  []string{"a 8"},
			jobs:   []Job{mkJob(1, ""), mkJob(2, ""), mkJob(3, "", "q=other"), mkJob(4, "", "q=other")},
			limits: []Limit{{Name: "uq", Users: []string{"alice"}, Queues: []string{"normal"}, Slots: 1}},
			want: `1: a*1
2: PEND Resource (slot) limit defined on user or user group has been reached | limit uq: 1 slots of 1 in use by its consumers
3: a*1
4: a*1`},
		{name: "per_user and per_queue together",
			hosts:  []string{"a 8"},
			jobs:   []Job{mkJob(1, ""), mkJob(2, "", "q=other"), mkJob(3, "", "q=other")},
			limits: []Limit{{Name: "uq", PerUsers: []string{"all"}, PerQueues: []string{"all"}, Slots: 1}},
			want: `1: a*1
2: a*1
3: PEND Resource (slot) limit defined on user or user group has been reached | limit uq: 1 slots of 1 in use by user alice, queue other`},
		{name: "hosts: the listed hosts together",
			hosts:  []string{"a 8", "b 8 r15s=1"},
			jobs:   []Job{mkJob(1, "", "n=2"), mkJob(2, "", "n=2")},
			limits: []Limit{{Name: "ha", Hosts: []string{"a"}, Slots: 3}},
			want: `1: a*2
2: a*1 b*1`},
		{name: "hosts: a job that only fits the listed hosts pends with the host reason",
			hosts:  []string{"a 8", "b 8"},
			jobs:   []Job{mkJob(1, "", "n=2"), mkJob(2, "", "m=a")},
			limits: []Limit{{Name: "ha", Hosts: []string{"a"}, Slots: 2}},
			want: `1: a*2
2: PEND Not specified in job submission: 1 host | Resource (slot) limit defined on host and/or host group has been reached: 1 host`},
		{name: "per_host slots_per_processor",
			hosts:  []string{"a 8 ncpus=2", "b 8 ncpus=1 r15s=1"},
			jobs:   []Job{mkJob(1, "", "n=4"), mkJob(2, "")},
			limits: []Limit{{Name: "spp", PerHosts: []string{"all"}, SlotsPerProcessor: 1.5}},
			want: `1: a*3 b*1
2: PEND Resource (slot) limit defined on host and/or host group has been reached: 2 hosts`},
		{name: "per_host JOBS",
			hosts:  []string{"a 8", "b 8 r15s=1"},
			jobs:   []Job{mkJob(1, ""), mkJob(2, ""), mkJob(3, "")},
			limits: []Limit{{Name: "hj", PerHosts: []string{"all"}, Jobs: 1}},
			want: `1: a*1
2: b*1
3: PEND JOBS limit defined on host or host group has been reached: 2 hosts`},
		{name: "per_host memory percentage of maxmem",
			hosts:  []string{"a 8 maxmem=10000"},
			jobs:   []Job{mkJob(1, "rusage[mem=1500]"), mkJob(2, "rusage[mem=1500]")},
			limits: []Limit{{Name: "mp", PerHosts: []string{"all"}, HostPercent: map[string]float64{"mem": 20}}},
			want: `1: a*1
2: PEND Resource (mem) limit defined on host and/or host group has been reached: 1 host`},
		{name: "mem limit counts max(reserved, used) of running jobs",
			hosts:  []string{"a 8 mem=64000"},
			jobs:   []Job{mkJob(1, "rusage[mem=2000]", "u=bob")},
			limits: []Limit{{Name: "m", Users: []string{"devs"}, Resources: map[string]float64{"mem": 4000}}},
			run:    []Alloc{mkRun(9, "alice normal 1m - a*1", "rusage[mem=1000]", 3000)},
			want:   `1: PEND Resource (mem) limit defined on user or user group has been reached | limit m: 3000 mem of 4000 in use by its consumers`},
		{name: "SLOTS=0 lets no job of the consumers run",
			hosts:  []string{"a 8", "b 8"},
			jobs:   []Job{mkJob(1, ""), mkJob(2, "", "u=zed")},
			limits: []Limit{{Name: "none", Users: []string{"alice"}, Slots: NoneAllowed}, {Name: "nob", Hosts: []string{"b"}, Slots: NoneAllowed}},
			want: `1: PEND Resource (slot) limit defined on user or user group has been reached | limit none: 0 slots of 0 in use by its consumers
2: a*1`},
		{name: "RESOURCE: licence tokens",
			hosts:  []string{"a 8"},
			jobs:   []Job{mkJob(1, "rusage[lic_x=2]"), mkJob(2, "rusage[lic_x=2]"), mkJob(3, "rusage[lic_x=2]", "u=zed")},
			limits: []Limit{{Name: "lic", Users: []string{"devs"}, Resources: map[string]float64{"lic_x": 3}}},
			want: `1: a*1
2: PEND Resource (lic_x) limit defined on user or user group has been reached | limit lic: 2 lic_x of 3 in use by its consumers
3: a*1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := snapshot(hosts(c.hosts...), c.jobs...)
			s.Queues = append(s.Queues, Queue{Name: "other", Priority: 10})
			s.UserGroups = map[string][]string{"devs": {"alice", "bob", "sub"}, "sub": {"carol"}}
			s.Limits, s.Running = c.limits, c.run
			s.Shared = map[string]float64{"lic_x": 100}
			check(t, s, c.want)
		})
	}
}

// TestLimitUsage checks what blimits is given: a row per limit and per
// member, with the per-host ceilings made absolute.
func TestLimitUsage(t *testing.T) {
	s := snapshot(hosts("a 8 ncpus=4", "b 8 ncpus=2"))
	s.Limits = []Limit{
		{Name: "pu", PerUsers: []string{"all"}, Slots: 10},
		{Name: "ph", PerHosts: []string{"all"}, SlotsPerProcessor: 1, Jobs: 5},
		{Name: "idle", Queues: []string{"other"}, Slots: 1},
	}
	s.Running = []Alloc{mkRun(1, "alice normal 1m - a*2,b*1", "", 0), mkRun(2, "bob normal 1m - a*1", "", 0)}
	got := LimitUsage(s)
	want := []LimitUse{
		{Limit: 0, User: "alice", Slots: 3, Jobs: 1, SlotLimit: 10},
		{Limit: 0, User: "bob", Slots: 1, Jobs: 1, SlotLimit: 10},
		{Limit: 1, Host: "a", Slots: 3, Jobs: 2, SlotLimit: 4},
		{Limit: 1, Host: "b", Slots: 1, Jobs: 1, SlotLimit: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
