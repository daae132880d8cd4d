package bounds

import (
	"testing"
	"time"

	"xce/lib/api"
)

// What a job that wrote its own usage or end claimed, and what is kept.
func TestUsage(t *testing.T) {
	l := Limits{NCPUs: 2, MemKb: 1 << 20, Elapsed: time.Minute}
	for _, tc := range []struct {
		name string
		in   *api.ResourceUsage
		want *api.ResourceUsage
		bad  int
	}{
		{"honest", &api.ResourceUsage{CpuTimeMs: 1000, MemKb: 10, MaxMemKb: 20, AvgMemKb: 15, Nprocs: 2, Nthreads: 3, Pids: []int32{5, 6}},
			&api.ResourceUsage{CpuTimeMs: 1000, MemKb: 10, MaxMemKb: 20, AvgMemKb: 15, Nprocs: 2, Nthreads: 3, Pids: []int32{5, 6}}, 0},
		{"negative cpu", &api.ResourceUsage{CpuTimeMs: -1e12}, &api.ResourceUsage{}, 1},
		{"cpu over the hosts' CPUs times the run time", &api.ResourceUsage{CpuTimeMs: 1e12},
			&api.ResourceUsage{CpuTimeMs: 140_000}, 1},
		{"93 TB of memory", &api.ResourceUsage{MemKb: 93e9, MaxMemKb: 93e9, AvgMemKb: -5},
			&api.ResourceUsage{MemKb: 1 << 20, MaxMemKb: 1 << 20}, 3},
		{"counts", &api.ResourceUsage{Nprocs: -1, Nthreads: 1 << 30, Pgid: -4, Pids: []int32{-1, 0, 7, 1 << 30}, SwapKb: -1},
			&api.ResourceUsage{Nthreads: pidMax, Pids: []int32{7}}, 5},
	} {
		bad := Usage(tc.in, l)
		if len(bad) != tc.bad || tc.in.String() != tc.want.String() {
			t.Errorf("%s: got %v (%q), want %v (%d out of range)", tc.name, tc.in, bad, tc.want, tc.bad)
		}
	}
	// Unknown hosts bound the sign only.
	u := &api.ResourceUsage{CpuTimeMs: 1e12, MaxMemKb: 93e9}
	if bad := Usage(u, Limits{}); len(bad) != 0 || u.CpuTimeMs != 1e12 {
		t.Errorf("unknown limits: %v %q", u, bad)
	}
}

func TestEvent(t *testing.T) {
	ev := &api.Event{ExitStatus: -3, Signal: 99, Pid: -1, CpuTimeMs: -5, Usage: &api.ResourceUsage{CpuTimeMs: -5}}
	bad := Event(ev, Limits{NCPUs: 1, Elapsed: time.Second})
	if len(bad) != 5 || ev.ExitStatus != 255 || ev.Signal != 0 || ev.Pid != 0 || ev.CpuTimeMs != 0 || ev.Usage.CpuTimeMs != 0 {
		t.Errorf("got %v (%q)", ev, bad)
	}
	ok := &api.Event{ExitStatus: 137, Signal: 9, Pid: 400, CpuTimeMs: 10}
	if bad := Event(ok, Limits{NCPUs: 1, Elapsed: time.Second}); len(bad) != 0 {
		t.Errorf("an honest end was changed: %q", bad)
	}
}
