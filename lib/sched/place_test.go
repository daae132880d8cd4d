package sched

import (
	"testing"
	"time"
)

// TestPlacement has one case per placement rule.
func TestPlacement(t *testing.T) {
	type tc struct {
		name  string
		hosts []string
		jobs  []Job
		edit  func(s *Snapshot)
		want  string
	}
	cases := []tc{
		{name: "default order r15s:pg picks the least loaded host",
			hosts: []string{"a 4 r15s=2", "b 4 r15s=0.5", "c 4 r15s=1"},
			jobs:  []Job{mkJob(1, "")},
			want:  "1: b*1"},
		{name: "r15s ties broken by pg",
			hosts: []string{"a 4 pg=3", "b 4 pg=1"},
			jobs:  []Job{mkJob(1, "")},
			want:  "1: b*1"},
		{name: "order[mem] puts the most memory first",
			hosts: []string{"a 4 mem=1000", "b 4 mem=8000", "c 4 mem=4000"},
			jobs:  []Job{mkJob(1, "order[mem]")},
			want:  "1: b*1"},
		{name: "order[-mem] reverses",
			hosts: []string{"a 4 mem=1000", "b 4 mem=8000", "c 4 mem=4000"},
			jobs:  []Job{mkJob(1, "order[-mem]")},
			want:  "1: a*1"},
		{name: "order[-slots] packs",
			hosts: []string{"a 8", "b 8 r15s=1"},
			jobs:  []Job{mkJob(1, "order[-slots]")},
			edit:  func(s *Snapshot) { s.Running = []Alloc{mkRun(10, "bob normal 1m - b*6", "", 0)} },
			want:  "1: b*1"},
		{name: "order[slots] spreads; select on free slots",
			hosts: []string{"a 8", "b 8 r15s=1", "c 8 r15s=2"},
			jobs:  []Job{mkJob(1, "select[slots>=4] order[slots]")},
			edit: func(s *Snapshot) {
				s.Running = []Alloc{mkRun(10, "bob normal 1m - a*6", "", 0), mkRun(11, "bob normal 1m - b*1", "", 0)}
			},
			want: "1: c*1"},
		{name: "-n spreads over hosts in order",
			hosts: []string{"a 2", "b 2 r15s=1", "c 2 r15s=2"},
			jobs:  []Job{mkJob(1, "", "n=5")},
			want:  "1: a*2 b*2 c*1"},
		{name: "-n min,max takes what is free",
			hosts: []string{"a 2", "b 1"},
			jobs:  []Job{mkJob(1, "", "n=2,8")},
			want:  "1: a*2 b*1"},
		{name: "jobs fill hosts one after the other",
			hosts: []string{"a 2", "b 2 r15s=1"},
			jobs:  []Job{mkJob(1, "", "n=2"), mkJob(2, "", "n=2"), mkJob(3, "")},
			want: `1: a*2
2: b*2
3: PEND Not enough job slot(s): 2 hosts`},
		{name: "select",
			hosts: []string{"a 4 mem=4000", "b 4 mem=32000 r15s=3", "c 4 type=SPARC mem=64000"},
			jobs:  []Job{mkJob(1, "select[mem>8000 && type==X86_64]")},
			want:  "1: b*1"},
		{name: "select on a Boolean",
			hosts: []string{"a 4", "b 4 gpu r15s=1"},
			jobs:  []Job{mkJob(1, "gpu")},
			want:  "1: b*1"},
		{name: "span[hosts=1] takes the first host with all the slots",
			hosts: []string{"a 2", "b 3 r15s=1", "c 8 r15s=2"},
			jobs:  []Job{mkJob(1, "span[hosts=1]", "n=3")},
			want:  "1: b*3"},
		{name: "span[hosts=1] with a range takes as many as the host has",
			hosts: []string{"a 2", "b 6 r15s=1"},
			jobs:  []Job{mkJob(1, "span[hosts=1]", "n=3,8")},
			want:  "1: b*6"},
		{name: "span[ptile=2]",
			hosts: []string{"a 4", "b 1 r15s=1", "c 4 r15s=2"},
			jobs:  []Job{mkJob(1, "span[ptile=2]", "n=4")},
			want:  "1: a*2 c*2"},
		{name: "span[ptile=4] last host may get fewer",
			hosts: []string{"a 4", "b 4 r15s=1"},
			jobs:  []Job{mkJob(1, "span[ptile=4]", "n=6")},
			want:  "1: a*4 b*2"},
		{name: "span[ptile] larger than the hosts pends",
			hosts: []string{"a 4", "b 4"},
			jobs:  []Job{mkJob(1, "span[ptile=8]", "n=8")},
			want:  "1: PEND Not enough job slot(s): 2 hosts"},
		{name: "span[ptile='!'] uses each host's slots",
			hosts: []string{"a 3", "b 5 r15s=1"},
			jobs:  []Job{mkJob(1, "span[ptile='!']", "n=8")},
			want:  "1: a*3 b*5"},
		{name: "span[block=2] allocates whole blocks",
			hosts: []string{"a 3", "b 3 r15s=1", "c 3 r15s=2"},
			jobs:  []Job{mkJob(1, "span[block=2]", "n=6")},
			want:  "1: a*2 b*2 c*2"},
		{name: "span[stripe] spreads evenly",
			hosts: []string{"a 8", "b 8 r15s=1", "c 8 r15s=2"},
			jobs:  []Job{mkJob(1, "span[stripe]", "n=6")},
			want:  "1: a*2 b*2 c*2"},
		{name: "same[type] keeps the job on one type",
			hosts: []string{"a 2", "b 2 type=SPARC r15s=1", "c 2 type=SPARC r15s=2", "d 1 r15s=3"},
			jobs:  []Job{mkJob(1, "type==any same[type]", "n=4")},
			want:  "1: b*2 c*2"},
		{name: "-m host list",
			hosts: []string{"a 4", "b 4", "c 4"},
			jobs:  []Job{mkJob(1, "", "m=c")},
			want:  "1: c*1"},
		{name: "-m host group with a preference suffix",
			hosts: []string{"a 4", "b 4", "c 4 r15s=1"},
			jobs:  []Job{mkJob(1, "", "m=grp+2")},
			edit:  func(s *Snapshot) { s.HostGroups = map[string][]string{"grp": {"sub"}, "sub": {"c"}} },
			want:  "1: c*1"},
		{name: "queue hosts: all but a group",
			hosts: []string{"a 4", "b 4 r15s=1", "c 4 r15s=2"},
			jobs:  []Job{mkJob(1, "", "n=5")},
			edit: func(s *Snapshot) {
				s.HostGroups = map[string][]string{"g": {"a"}}
				s.Queues[0].Hosts = []string{"all", "~g"}
			},
			want: "1: b*4 c*1"},
		{name: "queue hosts",
			hosts: []string{"a 4", "b 4 r15s=1"},
			jobs:  []Job{mkJob(1, "")},
			edit:  func(s *Snapshot) { s.Queues[0].Hosts = []string{"b"} },
			want:  "1: b*1"},
		{name: "exclusive job needs an empty host and keeps it",
			hosts: []string{"a 4", "b 4 r15s=1"},
			jobs:  []Job{mkJob(1, ""), mkJob(2, "", "x", "n=2"), mkJob(3, "")},
			want: `1: a*1
2: b*2
3: a*1`},
		{name: "exclusive queue",
			hosts: []string{"a 4"},
			jobs:  []Job{mkJob(1, ""), mkJob(2, "")},
			edit:  func(s *Snapshot) { s.Queues[0].Exclusive = true },
			want: `1: a*1
2: PEND Running an exclusive job: 1 host`},
		{name: "exclusive job waits for an empty host",
			hosts: []string{"a 4"},
			jobs:  []Job{mkJob(1, ""), mkJob(2, "", "x")},
			want: `1: a*1
2: PEND Job's requirement for exclusive execution not satisfied: 1 host`},
		{name: "compound requirement places each term",
			hosts: []string{"a 4 type=BIG mem=64000", "b 4", "c 4 r15s=1"},
			jobs:  []Job{mkJob(1, "1*{type==BIG rusage[mem=32000]} + 6*{type==X86_64 span[ptile=3]}")},
			want:  "1: a*1 b*3 c*3"},
		{name: "compound term that does not fit",
			hosts: []string{"a 4 type=BIG", "b 4"},
			jobs:  []Job{mkJob(1, "1*{type==BIG} + 8*{type==X86_64}")},
			want:  "1: PEND Not enough job slot(s): 4 free on 1 usable host, the job needs 8 | Job's resource requirements not satisfied: 1 host | select[type == X86_64]: not satisfied on 1 host"},
		{name: "alternative requirements: first that fits",
			hosts: []string{"a 4 mem=4000"},
			jobs:  []Job{mkJob(1, "{select[mem>8000]} || {select[mem>2000]}")},
			want:  "1: a*1"},
		{name: "alternative with a delay not reached",
			hosts: []string{"a 4 mem=4000"},
			jobs:  []Job{mkJob(1, "{select[mem>8000]} || {select[mem>2000]}@10")},
			want:  "1: PEND Job's resource requirements not satisfied: 1 host | select[mem > 8000]: no host has that much memory (largest: 3.9 GB)"},
		{name: "alternative with a delay passed",
			hosts: []string{"a 4 mem=4000"},
			jobs:  []Job{mkJob(1, "{select[mem>8000]} || {select[mem>2000]}@10", "age=11m")},
			want:  "1: a*1"},
		{name: "closed, locked and unavailable hosts",
			hosts: []string{"a 4 closed", "b 4 unavail", "c 4 locked", "d 4 r15s=9"},
			jobs:  []Job{mkJob(1, "")},
			want:  "1: d*1"},
		{name: "queue priority before submission order",
			hosts: []string{"a 1"},
			jobs:  []Job{mkJob(1, ""), mkJob(2, "", "q=high")},
			edit: func(s *Snapshot) {
				s.Queues = append(s.Queues, Queue{Name: "high", Priority: 40})
			},
			want: `1: PEND Not enough job slot(s): 1 host
2: a*1`},
		{name: "-sp before submission order",
			hosts: []string{"a 1"},
			jobs:  []Job{mkJob(1, ""), mkJob(2, "", "sp=10")},
			want: `1: PEND Not enough job slot(s): 1 host
2: a*1`},
		{name: "snapshot order (btop) within a priority",
			hosts: []string{"a 1"},
			jobs:  []Job{mkJob(2, ""), mkJob(1, "")},
			want: `2: a*1
1: PEND Not enough job slot(s): 1 host`},
		{name: "unknown queue",
			hosts: []string{"a 1"},
			jobs:  []Job{mkJob(1, "", "q=gone")},
			want:  "1: PEND No such queue: gone"},
		{name: "inactive queue",
			hosts: []string{"a 1"},
			jobs:  []Job{mkJob(1, "")},
			edit:  func(s *Snapshot) { s.Queues[0].Inactive = true },
			want:  "1: PEND The queue is inactivated by the administrator"},
		{name: "running jobs take slots; an exclusive one the host",
			hosts: []string{"a 4", "b 4 r15s=1", "c 4 r15s=2"},
			jobs:  []Job{mkJob(1, "", "n=5")},
			edit: func(s *Snapshot) {
				s.Running = []Alloc{mkRun(10, "bob normal 1m - a*3", "", 0), mkRun(11, "bob normal 1m - b*1 x", "", 0)}
			},
			want: "1: a*1 c*4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := snapshot(hosts(c.hosts...), c.jobs...)
			if c.edit != nil {
				c.edit(s)
			}
			check(t, s, c.want)
		})
	}
}

func TestPlacementRusage(t *testing.T) {
	type tc struct {
		name  string
		hosts []string
		jobs  []Job
		edit  func(s *Snapshot)
		want  string
	}
	cases := []tc{
		{name: "rusage[mem] reserves on the host",
			hosts: []string{"a 8 mem=10000", "b 8 mem=10000 r15s=1"},
			jobs:  []Job{mkJob(1, "rusage[mem=6000]"), mkJob(2, "rusage[mem=6000]"), mkJob(3, "rusage[mem=6000]")},
			want: `1: a*1
2: b*1
3: PEND Job's requirements for resource reservation not satisfied: 2 hosts | rusage[mem=6000]: 2 hosts have less than 6000 MB unreserved`},
		{name: "rusage per task",
			hosts: []string{"a 8 mem=10000"},
			jobs:  []Job{mkJob(1, "rusage[mem=3000/task]", "n=2,8")},
			want:  "1: a*3"},
		{name: "running job's reservation counts unused part only",
			hosts: []string{"a 8 mem=10000"},
			jobs:  []Job{mkJob(1, "rusage[mem=5000]"), mkJob(2, "rusage[mem=5000]")},
			edit: func(s *Snapshot) {
				// reported available 10000 already excludes the 3000 it uses;
				// it may still grow by 2000: 8000 unreserved.
				s.Running = []Alloc{mkRun(10, "bob normal 1m - a*1", "rusage[mem=5000]", 3000)}
			},
			want: `1: a*1
2: PEND Job's requirements for resource reservation not satisfied: 1 host | rusage[mem=5000]: 1 host has less than 5000 MB unreserved`},
		{name: "a job using more than it reserved is charged what it uses",
			hosts: []string{"a 8 mem=6000"},
			jobs:  []Job{mkJob(1, "rusage[mem=5000]")},
			edit: func(s *Snapshot) {
				s.Running = []Alloc{mkRun(10, "bob normal 1m - a*1", "rusage[mem=1000]", 9000)}
			},
			want: `1: a*1`},
		{name: "select sees memory net of reservations",
			hosts: []string{"a 8 mem=10000", "b 8 mem=9000 r15s=1"},
			jobs:  []Job{mkJob(1, "select[mem>8000]")},
			edit: func(s *Snapshot) {
				s.Running = []Alloc{mkRun(10, "bob normal 1m - a*1", "rusage[mem=5000]", 0)}
			},
			want: `1: b*1`},
		{name: "a reservation with a duration is released after it",
			hosts: []string{"a 8 mem=10000"},
			jobs:  []Job{mkJob(1, "rusage[mem=8000]")},
			edit: func(s *Snapshot) {
				s.Running = []Alloc{mkRun(10, "bob normal 20m - a*1", "rusage[mem=8000:duration=10]", 0)}
			},
			want: `1: a*1`},
		{name: "a decaying reservation shrinks over its duration",
			hosts: []string{"a 8 mem=10000"},
			jobs:  []Job{mkJob(1, "rusage[mem=6000]"), mkJob(2, "rusage[mem=1000]")},
			edit: func(s *Snapshot) {
				// 8000 decaying over 10 minutes, 5 minutes in: 4000 reserved.
				s.Running = []Alloc{mkRun(10, "bob normal 5m - a*1", "rusage[mem=8000:duration=10:decay=1]", 0)}
			},
			want: `1: a*1
2: PEND Job's requirements for resource reservation not satisfied: 1 host | rusage[mem=1000]: 1 host has less than 1000 MB unreserved`},
		{name: "shared license tokens",
			hosts: []string{"a 8", "b 8"},
			jobs:  []Job{mkJob(1, "rusage[lic_x=2]"), mkJob(2, "rusage[lic_x=2]", "n=2"), mkJob(3, "rusage[lic_x=2]")},
			edit: func(s *Snapshot) {
				s.Shared = map[string]float64{"lic_x": 5}
				s.Running = []Alloc{mkRun(10, "bob normal 1m - b*1", "rusage[lic_x=1]", 0)}
			},
			want: `1: a*1
2: a*2
3: PEND Job's requirements for reserving resource (lic_x) not satisfied | rusage[lic_x=2]: 0 of 5 available cluster-wide`},
		{name: "only the shared resource that is short is named",
			hosts: []string{"a 8"},
			jobs:  []Job{mkJob(1, "rusage[lic_x=1:lic_y=4]")},
			edit:  func(s *Snapshot) { s.Shared = map[string]float64{"lic_x": 5, "lic_y": 3} },
			want:  `1: PEND Job's requirements for reserving resource (lic_y) not satisfied | rusage[lic_y=4]: 3 of 3 available cluster-wide`},
		{name: "shared per task",
			hosts: []string{"a 8"},
			jobs:  []Job{mkJob(1, "rusage[lic_x=2/task]", "n=1,4")},
			edit:  func(s *Snapshot) { s.Shared = map[string]float64{"lic_x": 5} },
			want:  `1: a*2`},
		{name: "rusage alternatives",
			hosts: []string{"a 8 mem=4000"},
			jobs:  []Job{mkJob(1, "rusage[mem=8000 || mem=2000]")},
			want:  `1: a*1`},
		{name: "counter resources: host total minus reservations",
			hosts: []string{"a 8 ngpus_physical=4", "b 8 r15s=1"},
			jobs:  []Job{mkJob(1, "rusage[ngpus_physical=2]"), mkJob(2, "rusage[ngpus_physical=3]")},
			edit: func(s *Snapshot) {
				s.Running = []Alloc{mkRun(10, "bob normal 1m - a*1", "rusage[ngpus_physical=1]", 0)}
			},
			want: `1: a*1
2: PEND Job's requirements for resource reservation not satisfied: 2 hosts | rusage[ngpus_physical=3]: 2 hosts have less than 3 unreserved`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := snapshot(hosts(c.hosts...), c.jobs...)
			if c.edit != nil {
				c.edit(s)
			}
			check(t, s, c.want)
		})
	}
}

var _ = time.Second
