package sched

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// TestFairshareConvergence: users with shares 3:2:1, each with a deep
// backlog of identical one-slot jobs, on 400 slots for 12 simulated hours
// (jobs run 5 to 15 minutes, finished jobs' run and CPU time go into the
// queue's usage history as the controller's accounting would). After a
// two-hour warm-up the slot time each user receives is within 2% of the
// total of its share (50%, 33.3%, 16.7%): ±1 percentage point.
//
// Why 1%: at the steady state LSF's formula equalises shares /
// (0.7*(cpu+run) + 3*(1+slots)) between users; every term of the
// denominator grows with the user's slots except the constant 3, which
// biases the split by about one slot in 400 (0.25%). The rest is
// granularity: slots are handed out only as jobs end (about 40 a minute
// here) and usage history lags by the run time of the jobs, which moves
// the split by a few slots around the target. The measured error is
// logged (0.03% with this seed); 1% leaves room for that noise while a policy that ignores
// shares (33% each) or weighs them wrong (3:2:1 vs 2:2:1 gives 40/40/20)
// fails by far more.
func TestFairshareConvergence(t *testing.T) {
	const nHosts, slotsPer = 100, 4
	hours := 12
	if testing.Short() {
		hours = 6
	}
	shares := map[string]int{"A": 3, "B": 2, "C": 1}
	users := []string{"A", "B", "C"}
	var hs []Host
	for i := 0; i < nHosts; i++ {
		hs = append(hs, mkHost(fmt.Sprintf("f%03d %d", i, slotsPer)))
	}
	fs := &Fairshare{Shares: shares, Usage: map[string]FairUsage{}}
	q := []Queue{{Name: "normal", Priority: 30, Fairshare: fs}}
	type runJob struct {
		a    Alloc
		ends time.Time
	}
	var run []runJob
	pending := map[string][]Job{}
	nextID := int64(1)
	r := rand.New(rand.NewPCG(9, 9))
	got := map[string]float64{} // slot-minutes after the warm-up
	var total float64
	warm := t0.Add(2 * time.Hour)
	for now := t0; now.Before(t0.Add(time.Duration(hours) * time.Hour)); now = now.Add(time.Minute) {
		// Jobs end; their time goes into the history.
		kept := run[:0]
		for _, x := range run {
			if x.ends.After(now) {
				kept = append(kept, x)
				continue
			}
			u := fs.Usage[x.a.User]
			d := math.Pow(0.1, now.Sub(u.At).Hours()/5)
			if u.At.IsZero() {
				d = 0
			}
			ran := x.ends.Sub(x.a.Start)
			u.Run = time.Duration(float64(u.Run)*d) + ran
			u.CPU = u.Run
			u.At = now
			fs.Usage[x.a.User] = u
		}
		run = kept
		// A deep backlog: 200 pending jobs per user at every instant.
		s := &Snapshot{Now: now, Schema: testSchema, Hosts: hs, Queues: q}
		for _, u := range users {
			for len(pending[u]) < 200 {
				pending[u] = append(pending[u], Job{Key: JobKey{ID: nextID}, User: u, Queue: "normal", Project: "default", Submit: now})
				nextID++
			}
			s.Jobs = append(s.Jobs, pending[u]...)
		}
		for _, x := range run {
			s.Running = append(s.Running, x.a)
		}
		d := Schedule(s)
		placed := map[JobKey]bool{}
		for _, p := range d.Placements {
			placed[p.Job] = true
		}
		for _, u := range users {
			left := pending[u][:0]
			for _, j := range pending[u] {
				if !placed[j.Key] {
					left = append(left, j)
					continue
				}
				var host string
				for _, p := range d.Placements {
					if p.Job == j.Key {
						host = p.Hosts[0].Host
					}
				}
				run = append(run, runJob{a: Alloc{Job: j.Key, User: u, Queue: "normal", Project: "default", Start: now,
					Hosts: []HostAlloc{{Host: host, Slots: 1, Lead: true}}}, ends: now.Add(time.Duration(5+r.IntN(11)) * time.Minute)})
			}
			pending[u] = left
		}
		if !now.Before(warm) {
			for _, x := range run {
				got[x.a.User]++
				total++
			}
		}
	}
	if total < float64(nHosts*slotsPer)*60*float64(hours-2)*0.99 {
		t.Fatalf("the cluster was not kept busy: %v slot-minutes", total)
	}
	const tol = 0.01
	for _, u := range users {
		want := float64(shares[u]) / 6
		frac := got[u] / total
		t.Logf("user %s: %.2f%% of the slot time, share %.2f%% (error %+.2f%%)", u, 100*frac, 100*want, 100*(frac-want))
		if math.Abs(frac-want) > tol {
			t.Errorf("user %s got %.2f%% of the slot time, want %.2f%% ± %.0f%%", u, 100*frac, 100*want, 100*tol)
		}
	}
}

// TestFairshareGroupAccount: jobs submitted with -G name a group account;
// its members share the group's shares, so two members together get what
// a single user with equal shares gets.
func TestFairshareGroupAccount(t *testing.T) {
	var jobs []Job
	id := int64(0)
	add := func(user, account string, n int) {
		for range n {
			id++
			j := mkJob(id, "", "u="+user)
			j.Account = account
			jobs = append(jobs, j)
		}
	}
	add("alice", "chem", 100)
	add("carol", "chem", 100)
	add("bob", "", 100)
	s := snapshot(hosts("ha 4", "hb 4", "hc 4", "hd 4"), jobs...)
	s.Queues[0].Fairshare = &Fairshare{Shares: map[string]int{"chem": 1, "bob": 1}}
	got := placedBy(s, Schedule(s))
	if got["alice"]+got["carol"] != 8 || got["bob"] != 8 {
		t.Errorf("placed %v, want the chem group (alice+carol) 8 and bob 8", got)
	}
	// Without the accounts each user is charged alone: bob gets a third.
	for i := range s.Jobs {
		s.Jobs[i].Account = ""
	}
	got = placedBy(s, Schedule(s))
	if got["bob"] > 6 {
		t.Errorf("without accounts placed %v, want bob near a third of 16", got)
	}
}
