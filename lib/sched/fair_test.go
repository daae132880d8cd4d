package sched

import (
	"fmt"
	"testing"
	"time"
)

func fairSnapshot(nA, nB int, fs *Fairshare) *Snapshot {
	var hs []string
	for i := 0; i < 10; i++ {
		hs = append(hs, "h"+string(rune('a'+i))+" 4")
	}
	var jobs []Job
	for i := 0; i < nA; i++ {
		jobs = append(jobs, mkJob(int64(i+1), "", "u=A"))
	}
	for i := 0; i < nB; i++ {
		jobs = append(jobs, mkJob(int64(nA+i+1), "", "u=B"))
	}
	s := snapshot(hosts(hs...), jobs...)
	s.Queues[0].Fairshare = fs
	return s
}

func placedBy(s *Snapshot, d *Decision) map[string]int {
	user := map[JobKey]string{}
	for _, j := range s.Jobs {
		user[j.Key] = j.User
	}
	n := map[string]int{}
	for _, p := range d.Placements {
		n[user[p.Job]] += p.Slots
	}
	return n
}

// TestFairshare: user A has 10,000 pending jobs submitted before user B's
// 10; with fairshare B's jobs start in the first cycle.
func TestFairshare(t *testing.T) {
	s := fairSnapshot(10000, 10, &Fairshare{})
	d := Schedule(s)
	got := placedBy(s, d)
	if got["B"] != 10 || got["A"] != 30 {
		t.Errorf("fairshare: placed %v, want A 30 B 10", got)
	}
	if len(d.Pending) != 10000-30 {
		t.Errorf("pending: %d, want %d", len(d.Pending), 10000-30)
	}
	// First come first served, B waits behind A.
	s = fairSnapshot(10000, 10, nil)
	if got := placedBy(s, Schedule(s)); got["B"] != 0 || got["A"] != 40 {
		t.Errorf("FCFS: placed %v, want A 40 B 0", got)
	}
}

func TestFairshareSharesAndHistory(t *testing.T) {
	// 3:1 shares: A gets about three times B's slots.
	s := fairSnapshot(100, 100, &Fairshare{Shares: map[string]int{"A": 3, "B": 1}})
	got := placedBy(s, Schedule(s))
	if got["A"] != 30 || got["B"] != 10 {
		t.Errorf("3:1 shares: placed %v, want A 30 B 10", got)
	}
	// A used a lot recently: B goes first.
	recent := map[string]FairUsage{"A": {CPU: 200 * time.Hour, Run: 200 * time.Hour, At: t0}}
	s = fairSnapshot(100, 100, &Fairshare{Usage: recent})
	got = placedBy(s, Schedule(s))
	if got["B"] <= got["A"] {
		t.Errorf("recent usage: placed %v, want B ahead of A", got)
	}
	// The same usage 20 hours ago has decayed (0.1 per 5 hours).
	old := map[string]FairUsage{"A": {CPU: 200 * time.Hour, Run: 200 * time.Hour, At: t0.Add(-20 * time.Hour)}}
	s = fairSnapshot(100, 100, &Fairshare{Usage: old})
	got = placedBy(s, Schedule(s))
	if got["A"] != 20 || got["B"] != 20 {
		t.Errorf("decayed usage: placed %v, want A 20 B 20", got)
	}
	// Running jobs count: A holds 20 slots now, B gets the 20 free.
	s = fairSnapshot(100, 100, &Fairshare{})
	for i := 0; i < 5; i++ {
		s.Running = append(s.Running, mkRun(int64(900+i), "A normal 1h - h"+string(rune('a'+i))+"*4", "", 0))
	}
	got = placedBy(s, Schedule(s))
	if got["B"] != 20 || got["A"] != 0 {
		t.Errorf("running: placed %v, want B 20", got)
	}
}

// TestFairshareManyUsers: 2,000 users with 3 jobs each and one with
// 20,000: with 2,001 slots, every user gets one.
func TestFairshareManyUsers(t *testing.T) {
	var hs []string
	for i := 0; i < 3; i++ {
		hs = append(hs, fmt.Sprintf("h%02d 667", i))
	}
	var jobs []Job
	for i := 0; i < 20000; i++ {
		jobs = append(jobs, mkJob(int64(i+1), "", "u=big"))
	}
	for i := 0; i < 2000*3; i++ {
		jobs = append(jobs, mkJob(int64(100000+i), "", fmt.Sprintf("u=s%04d", i%2000)))
	}
	s := snapshot(hosts(hs...), jobs...)
	s.Queues[0].Fairshare = &Fairshare{}
	d := Schedule(s)
	got := placedBy(s, d)
	if len(d.Placements) != 2001 {
		t.Fatalf("placed %d, want 2001", len(d.Placements))
	}
	small := 0
	for u, n := range got {
		if u != "big" {
			small++
			if n != 1 {
				t.Errorf("user %s got %d slots", u, n)
				break
			}
		}
	}
	if small != 2000 || got["big"] != 1 {
		t.Errorf("%d small users placed, big got %d", small, got["big"])
	}
}
