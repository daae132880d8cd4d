package sched

import (
	"fmt"
	"testing"
	"time"
	"xce/lib/resreq"
)

func TestLimits(t *testing.T) {
	type tc struct {
		name  string
		hosts []string
		jobs  []Job
		edit  func(s *Snapshot)
		want  string
	}
	cases := []tc{
		{name: "queue slot limit",
			hosts: []string{"a 8"},
			jobs:  []Job{mkJob(1, "", "n=2"), mkJob(2, "", "n=2")},
			edit:  func(s *Snapshot) { s.Queues[0].SlotLimit = 3 },
			want: `1: a*2
2: PEND The queue has reached its job slot limit | queue normal: 2 of 3 slots in use`},
		{name: "queue slot limit caps a range",
			hosts: []string{"a 8"},
			jobs:  []Job{mkJob(1, "", "n=1,8")},
			edit:  func(s *Snapshot) { s.Queues[0].SlotLimit = 3 },
			want:  `1: a*3`},
		{name: "per-user limit of the queue",
			hosts: []string{"a 8"},
			jobs:  []Job{mkJob(1, ""), mkJob(2, ""), mkJob(3, "", "u=bob")},
			edit:  func(s *Snapshot) { s.Queues[0].UserSlotLimit = 1 },
			want: `1: a*1
2: PEND User has reached the per-user job slot limit of the queue | queue normal: user alice has 1 of 1 slots
3: a*1`},
		{name: "per-host limit of the queue",
			hosts: []string{"a 8", "b 8 r15s=1"},
			jobs:  []Job{mkJob(1, "", "n=3"), mkJob(2, "", "n=3"), mkJob(3, "", "n=3")},
			edit:  func(s *Snapshot) { s.Queues[0].HostSlotLimit = 4 },
			want: `1: a*3
2: a*1 b*2
3: PEND Not enough job slot(s): 2 free on 1 usable host, the job needs 3 | Queue's per-host job slot limit reached: 1 host`},
		{name: "user limit across queues",
			hosts: []string{"a 8"},
			jobs:  []Job{mkJob(1, ""), mkJob(2, "")},
			edit: func(s *Snapshot) {
				s.Limits = []Limit{{Name: "users", Per: PerUser, Slots: 2}}
				s.Running = []Alloc{mkRun(9, "alice normal 1m - a*1", "", 0)}
			},
			want: `1: a*1
2: PEND The user has reached his/her job slot limit | limit users: 2 slots of 2 in use by user alice`},
		{name: "project quota on memory",
			hosts: []string{"a 8 mem=64000"},
			jobs:  []Job{mkJob(1, "rusage[mem=6000]", "P=p1"), mkJob(2, "rusage[mem=6000]", "P=p1"), mkJob(3, "rusage[mem=6000]", "P=p2")},
			edit: func(s *Snapshot) {
				s.Limits = []Limit{{Name: "quota", Per: PerProject, Projects: []string{"p1"}, Resources: map[string]float64{"mem": 10000}}}
			},
			want: `1: a*1
2: PEND Resource (mem) limit defined on project has been reached | limit quota: 6000 mem of 10000 in use by project p1
3: a*1`},
		{name: "memory quota counts a multi-host job's reservation on every host",
			hosts: []string{"a 8 mem=64000", "b 8 mem=64000"},
			jobs:  []Job{mkJob(1, "rusage[mem=6000] span[ptile=1]", "P=p1", "n=2")},
			edit: func(s *Snapshot) {
				s.Limits = []Limit{{Name: "quota", Per: PerProject, Projects: []string{"p1"}, Resources: map[string]float64{"mem": 10000}}}
			},
			want: `1: PEND Resource (mem) limit defined on project has been reached | limit quota: 0 mem of 10000 in use by project p1`},
		{name: "memory quota counts max(reserved, used)",
			hosts: []string{"a 8 mem=64000"},
			jobs:  []Job{mkJob(1, "rusage[mem=2000]", "P=p1")},
			edit: func(s *Snapshot) {
				s.Limits = []Limit{{Name: "quota", Per: PerProject, Resources: map[string]float64{"mem": 10000}}}
				s.Running = []Alloc{mkRun(9, "bob normal 1m - a*1", "rusage[mem=1000]", 9000)}
				s.Running[0].Project = "p1"
			},
			want: `1: PEND Resource (mem) limit defined on project has been reached | limit quota: 9000 mem of 10000 in use by project p1`},
		{name: "per-host limit",
			hosts: []string{"a 8", "b 8 r15s=1"},
			jobs:  []Job{mkJob(1, "", "n=4")},
			edit: func(s *Snapshot) {
				s.Limits = []Limit{{Name: "hl", Per: PerHost, Slots: 2}}
			},
			want: `1: a*2 b*2`},
		{name: "per-host limit reason",
			hosts: []string{"a 8"},
			jobs:  []Job{mkJob(1, "", "n=2"), mkJob(2, "")},
			edit: func(s *Snapshot) {
				s.Limits = []Limit{{Name: "hl", Per: PerHost, Slots: 2, Hosts: []string{"a"}}}
			},
			want: `1: a*2
2: PEND Job slot limit reached: 1 host`},
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

// TestReasons checks the wording of pending reasons.
func TestReasons(t *testing.T) {
	type tc struct {
		name  string
		hosts []string
		jobs  []Job
		edit  func(s *Snapshot)
		want  string
	}
	cases := []tc{
		{name: "no host has that much memory",
			hosts: []string{"a 8 mem=23552", "b 8 mem=8000"},
			jobs:  []Job{mkJob(1, "select[mem>64000]")},
			want:  "1: PEND Job's resource requirements not satisfied: 2 hosts | select[mem > 64000]: no host has that much memory (largest: 23 GB)"},
		{name: "the failing term of a conjunction",
			hosts: []string{"a 8 mem=32000", "b 8 mem=8000", "c 8 type=SPARC"},
			jobs:  []Job{mkJob(1, "select[type==X86_64 && mem>16000 && ncpus>64]")},
			want:  "1: PEND Job's resource requirements not satisfied: 3 hosts | select[type == X86_64]: not satisfied on 1 host | select[mem > 16000]: not satisfied on 1 host | select[ncpus > 64]: no host has enough CPUs (no host defines ncpus)"},
		{name: "host states counted",
			hosts: []string{"a 8 closed", "b 8 closed", "c 8 unavail", "d 8 locked", "e 8 mem=100"},
			jobs:  []Job{mkJob(1, "rusage[mem=8000]")},
			want:  "1: PEND Closed by LSF administrator: 2 hosts | Host is locked by LSF administrator: 1 host | Unable to reach slave batch server: 1 host | Job's requirements for resource reservation not satisfied: 1 host | rusage[mem=8000]: 1 host has less than 8000 MB unreserved"},
		{name: "not usable to the queue, not specified",
			hosts: []string{"a 8", "b 8", "c 8"},
			jobs:  []Job{mkJob(1, "", "m=a")},
			edit:  func(s *Snapshot) { s.Queues[0].Hosts = []string{"b", "c"} },
			want:  "1: PEND Not specified in job submission: 2 hosts | Not usable to the queue: 1 host"},
		{name: "span[hosts=1]",
			hosts: []string{"a 4", "b 4"},
			jobs:  []Job{mkJob(1, "span[hosts=1]", "n=6")},
			want:  "1: PEND Not enough job slot(s): 2 hosts"},
		{name: "spanning requirement",
			hosts: []string{"a 4", "b 2"},
			jobs:  []Job{mkJob(1, "same[model]", "n=6")},
			edit: func(s *Snapshot) {
				testSchema.Set(s.Hosts[0].Values, "model", "M1")
				testSchema.Set(s.Hosts[1].Values, "model", "M2")
			},
			want: "1: PEND Not enough hosts to meet the job's spanning requirement"},
		{name: "no hosts at all",
			jobs: []Job{mkJob(1, "")},
			want: "1: PEND No host is available"},
		{name: "a bad requirement for this cluster",
			hosts: []string{"a 4"},
			jobs:  []Job{{Key: JobKey{ID: 1}, User: "alice", Queue: "normal", Req: resreqMust("select[nosuch > 1]")}},
			want:  `1: PEND Job's resource requirements not valid on this cluster: unknown resource name 'nosuch'`},
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

var _ = fmt.Sprint
var _ = time.Second

func resreqMust(s string) *resreq.ResReq { return resreq.MustParse(s) }
