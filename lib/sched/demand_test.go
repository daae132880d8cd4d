package sched

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// tmpl builds a template from a host spec ("cpu4 4 gpu ..."; the first
// word is its name), with Free instances left and Booting ones, allowed
// to queue normal.
func tmpl(spec string, free, booting int, g ...string) Template {
	h := gpuHost(spec, g...)
	return Template{Name: h.Name, Host: h, Free: free, Booting: booting, Queues: []string{"normal"}}
}

// demandOf runs a cycle and the demand over its decision: "cpu4=2 | 1:cpu4 2:cpu4".
func demandOf(s *Snapshot, ts ...Template) string {
	d := Schedule(s)
	dm := ComputeDemand(s, d, ts)
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(dm.Hosts)) {
		parts = append(parts, fmt.Sprintf("%s=%d", n, dm.Hosts[n]))
	}
	var jobs []string
	for _, j := range s.Jobs {
		if t, ok := dm.Jobs[j.Key]; ok {
			jobs = append(jobs, fmt.Sprintf("%v:%s", j.Key, t))
		}
	}
	return strings.Join(parts, " ") + " | " + strings.Join(jobs, " ")
}

func TestDemand(t *testing.T) {
	five := func(opts ...string) []Job {
		var js []Job
		for i := range 5 {
			js = append(js, mkJob(int64(i+1), "", opts...))
		}
		return js
	}
	cases := []struct {
		name  string
		hosts []Host
		jobs  []Job
		ts    []Template
		edit  func(s *Snapshot)
		want  string
	}{
		{name: "five one-slot jobs, no real host, max 2: two instances",
			jobs: five(), ts: []Template{tmpl("cpu1 1", 2, 0)},
			want: "cpu1=2 | 1:cpu1 2:cpu1"},
		{name: "a template no queue allows gives nothing",
			jobs: five(), ts: []Template{{Name: "cpu1", Host: mkHost("cpu1 1"), Free: 2}},
			want: " | "},
		{name: "instances booting count against demand",
			jobs: five(), ts: []Template{tmpl("cpu1 1", 2, 2)},
			want: "cpu1=2 | 1:cpu1 2:cpu1 3:cpu1 4:cpu1"},
		{name: "never more than max: nothing free, all booting",
			jobs: five(), ts: []Template{tmpl("cpu1 1", 0, 2)},
			want: " | 1:cpu1 2:cpu1"},
		{name: "jobs placed on real hosts make no demand",
			hosts: hosts("a 3"), jobs: five(), ts: []Template{tmpl("cpu1 1", 5, 0)},
			want: "cpu1=2 | 4:cpu1 5:cpu1"},
		{name: "slots pack: five jobs on four-slot instances need two",
			jobs: five(), ts: []Template{tmpl("cpu4 4", 5, 0)},
			want: "cpu4=2 | 1:cpu4 2:cpu4 3:cpu4 4:cpu4 5:cpu4"},
		{name: "exclusive jobs take an instance each",
			jobs: five("x"), ts: []Template{tmpl("cpu4 4", 3, 0)},
			want: "cpu4=3 | 1:cpu4 2:cpu4 3:cpu4"},
		{name: "select[] a template lacks",
			jobs: []Job{mkJob(1, "select[gpu]"), mkJob(2, "")}, ts: []Template{tmpl("cpu4 4", 2, 0), tmpl("gpux 1 gpu", 2, 0)},
			want: "cpu4=1 gpux=1 | 1:gpux 2:cpu4"},
		{name: "-m of real hosts only: no demand; -m naming the template",
			hosts: hosts("a 1 closed"),
			jobs:  []Job{mkJob(1, "", "m=a"), mkJob(2, "", "m=cpu4+2"), mkJob(3, "", "m=all")},
			ts:    []Template{tmpl("cpu4 4", 2, 0)},
			want:  "cpu4=1 | 2:cpu4 3:cpu4"},
		{name: "span[ptile=2] -n 4 needs two instances",
			jobs: []Job{mkJob(1, "span[ptile=2]", "n=4")}, ts: []Template{tmpl("cpu4 4", 3, 0)},
			want: "cpu4=2 | 1:cpu4"},
		{name: "a job too big for any instance",
			jobs: []Job{mkJob(1, "span[hosts=1]", "n=8")}, ts: []Template{tmpl("cpu4 4", 3, 0)},
			want: " | "},
		{name: "GPU jobs only on templates with GPUs",
			jobs: []Job{gpuJob(1, "num=1"), mkJob(2, "")},
			ts:   []Template{tmpl("cpu4 4", 2, 0), tmpl("gpu1 4", 2, 0, a100)},
			want: "cpu4=1 gpu1=1 | 1:gpu1 2:cpu4"},
		{name: "queues rc_hosts does not allow",
			jobs: []Job{mkJob(1, "", "q=short")}, ts: []Template{tmpl("cpu4 4", 2, 0)},
			edit: func(s *Snapshot) { s.Queues = append(s.Queues, Queue{Name: "short"}) },
			want: " | "},
		{name: "a queue slot limit the real hosts fill makes no demand",
			hosts: hosts("a 2"), jobs: five(), ts: []Template{tmpl("cpu4 4", 2, 0)},
			edit: func(s *Snapshot) { s.Queues[0].SlotLimit = 3 },
			want: "cpu4=1 | 3:cpu4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := snapshot(c.hosts, c.jobs...)
			if c.edit != nil {
				c.edit(s)
			}
			if got := demandOf(s, c.ts...); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
