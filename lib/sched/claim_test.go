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

func claimSet(r string) resreq.UsageSet {
	return resreq.MustParse(r, resreq.WithSchema(instSchema)).Simple.Rusage.Or[0]
}

// TestClaim: a pending claim is allocated an instance; once held, only
// its jobs get it, a job without the claim gets the other one and the
// next waits naming the resource; a user outside the claim pends, as do
// the jobs of a claim that is not allocated; a job whose claim does not
// exist is an ordinary one.
func TestClaim(t *testing.T) {
	s := &Snapshot{Now: t0, Schema: instSchema, Queues: []Queue{{Name: "normal", Priority: 1}},
		Hosts:  []Host{instHost("a", 4, "fpga0", "fpga1")},
		Claims: []Claim{{Name: "c1", Users: []string{"alice"}, Rusage: claimSet("rusage[fpga=1:duration=5]")}}}
	d := Schedule(s)
	if len(d.Claims) != 1 || d.Claims[0].Name != "c1" || !slices.Equal(d.Claims[0].Held.Instances["fpga"], []string{"fpga0"}) {
		t.Fatalf("claim not allocated fpga0: %+v", d)
	}
	held := d.Claims[0].Held
	s.Claims[0].Held = &held

	s.Jobs = []Job{instJob(1, "rusage[fpga=1]", 1), instJob(2, "rusage[fpga=1]", 1), instJob(3, "rusage[fpga=1]", 1),
		instJob(4, "rusage[fpga=1]", 1), instJob(5, "rusage[fpga=1]", 1), instJob(6, "rusage[fpga=1]", 1)}
	s.Jobs[0].Claim = "c1" // alice: fpga0, from the claim
	s.Jobs[1].Claim = "c1" // alice again: the claim's one instance is used
	s.Jobs[3].Claim, s.Jobs[3].User = "c1", "bob"
	s.Jobs[4].Claim = "nope"
	s.Claims = append(s.Claims, Claim{Name: "c2", Rusage: claimSet("rusage[fpga=5]")})
	s.Jobs[5].Claim = "c2"
	d = Schedule(s)
	got := map[JobKey][]string{}
	for _, p := range d.Placements {
		got[p.Job] = p.Hosts[0].Instances["fpga"]
	}
	if !slices.Equal(got[JobKey{ID: 1}], []string{"fpga0"}) || !slices.Equal(got[JobKey{ID: 3}], []string{"fpga1"}) || len(got) != 2 {
		t.Fatalf("placements %v, want job 1 fpga0 (claim), job 3 fpga1", got)
	}
	for id, want := range map[int64]string{2: "within claim c1", 4: reasonClaimUser, 5: "rusage[fpga=1]", 6: reasonClaimPending} {
		if why := strings.Join(d.Pending[JobKey{ID: id}], "|"); !strings.Contains(why, want) {
			t.Errorf("job %d pends %q, want %q", id, why, want)
		}
	}
	if why := strings.Join(d.ClaimPending["c2"], "|"); !strings.Contains(why, "(fpga)") {
		t.Errorf("claim c2 pends %q, want the resource named", why)
	}
	// The job's record keeps its whole rusage.
	for _, p := range d.Placements {
		if p.Job.ID == 1 && amount(p.Hosts[0].Rusage, "fpga", 0, 1, true, false) != 1 {
			t.Errorf("claim job's rusage lost: %+v", p.Hosts[0].Rusage)
		}
	}

	// Running: the claim's job holds fpga0 inside the claim, another job
	// fpga1: nothing is left for anyone.
	s.Running = []Alloc{
		{Job: JobKey{ID: 1}, User: "alice", Queue: "normal", Start: t0, Claim: "c1",
			Hosts: []HostAlloc{{Host: "a", Slots: 1, Rusage: claimSet("rusage[fpga=1]"), Instances: map[string][]string{"fpga": {"fpga0"}}}}},
		{Job: JobKey{ID: 3}, User: "alice", Queue: "normal", Start: t0,
			Hosts: []HostAlloc{{Host: "a", Slots: 1, Rusage: claimSet("rusage[fpga=1]"), Instances: map[string][]string{"fpga": {"fpga1"}}}}},
	}
	s.Jobs = []Job{instJob(7, "rusage[fpga=1]", 1), instJob(8, "rusage[fpga=1]", 1)}
	s.Jobs[0].Claim = "c1"
	s.Claims = s.Claims[:1]
	if d := Schedule(s); len(d.Placements) != 0 {
		t.Fatalf("placed into a full claim or host: %+v", d.Placements)
	}
	// The claim's job ends: the claim's next job gets fpga0, the other
	// job still nothing.
	s.Running = s.Running[1:]
	d = Schedule(s)
	if len(d.Placements) != 1 || d.Placements[0].Job.ID != 7 || !slices.Equal(d.Placements[0].Hosts[0].Instances["fpga"], []string{"fpga0"}) {
		t.Fatalf("after the claim's job ended: %+v", d.Placements)
	}
}

// TestClaimLook: the view the query commands show counts what a held
// claim holds as reserved.
func TestClaimLook(t *testing.T) {
	s := &Snapshot{Now: t0, Schema: instSchema, Hosts: []Host{instHost("a", 4, "fpga0", "fpga1")},
		Claims: []Claim{{Name: "c", Held: &HostAlloc{Host: "a", Rusage: claimSet("rusage[fpga=1:mem=1000]"),
			Instances: map[string][]string{"fpga": {"fpga1"}}}}}}
	hv := Look(s).Hosts["a"]
	if hv.Reserved["fpga"] != 1 || hv.Reserved["mem"] != 1000 {
		t.Fatalf("reserved %v, want fpga 1 and mem 1000", hv.Reserved)
	}
}

// TestClaimExclusive: -x: one user's jobs at a time.
func TestClaimExclusive(t *testing.T) {
	h := instHost("a", 8, "fpga0", "fpga1", "fpga2")
	s := &Snapshot{Now: t0, Schema: instSchema, Queues: []Queue{{Name: "normal", Priority: 1}}, Hosts: []Host{h},
		Claims: []Claim{{Name: "x", Exclusive: true, Held: &HostAlloc{Host: "a", Rusage: claimSet("rusage[fpga=3]"),
			Instances: map[string][]string{"fpga": {"fpga0", "fpga1", "fpga2"}}}}}}
	for i := int64(1); i <= 3; i++ {
		j := instJob(i, "rusage[fpga=1]", 1)
		j.Claim = "x"
		s.Jobs = append(s.Jobs, j)
	}
	s.Jobs[1].User = "bob"
	d := Schedule(s)
	if len(d.Placements) != 2 || d.Placements[0].Job.ID != 1 || d.Placements[1].Job.ID != 3 {
		t.Fatalf("placements %+v, want alice's jobs 1 and 3", d.Placements)
	}
	if why := strings.Join(d.Pending[JobKey{ID: 2}], "|"); why != reasonClaimBusy {
		t.Errorf("bob's job pends %q", why)
	}
}

// TestClaimCounter: a claim of a counter (mem) keeps it from other
// jobs, and its jobs share its amount.
func TestClaimCounter(t *testing.T) {
	s := &Snapshot{Now: t0, Schema: instSchema, Queues: []Queue{{Name: "normal", Priority: 1}},
		Hosts:  []Host{instHost("a", 8)},
		Claims: []Claim{{Name: "m", Rusage: claimSet("rusage[mem=10000]")}}}
	d := Schedule(s)
	if len(d.Claims) != 1 {
		t.Fatalf("claim of mem not allocated: %+v", d.ClaimPending)
	}
	s.Claims[0].Held = &d.Claims[0].Held
	for i := int64(1); i <= 4; i++ {
		j := instJob(i, "rusage[mem=4000]", 1)
		if i <= 3 {
			j.Claim = "m"
		}
		s.Jobs = append(s.Jobs, j)
	}
	d = Schedule(s)
	var ids []int64
	for _, p := range d.Placements {
		ids = append(ids, p.Job.ID)
	}
	// 16000 MB: the claim 10000 (jobs 1 and 2 in it, not 3), job 4
	// the 6000 left.
	if !slices.Equal(ids, []int64{1, 2, 4}) {
		t.Fatalf("placed %v, want [1 2 4]", ids)
	}
}

// TestClaimSim runs random cycles of random claims and jobs over hosts
// with instances, starting what each cycle places and ending some
// running jobs, and checks after every cycle: no instance is held twice,
// claims and jobs never hold more of a host than it has, a claim's jobs
// use no more than the claim holds and only its instances, and no other
// job uses them.
func TestClaimSim(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { claimSim(t, seed) })
	}
}

func claimSim(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	s := &Snapshot{Now: t0, Schema: instSchema, Queues: []Queue{{Name: "normal", Priority: 1}}}
	nh := 2 + rng.IntN(4)
	cap := map[string]int{}
	for i := range nh {
		var names []string
		for k := range rng.IntN(5) {
			names = append(names, fmt.Sprintf("fpga%d", k))
		}
		name := fmt.Sprintf("h%d", i)
		s.Hosts = append(s.Hosts, instHost(name, 4+rng.IntN(4), names...))
		cap[name] = len(names)
	}
	users := []string{"alice", "bob", "carol"}
	for i := range 2 + rng.IntN(4) {
		cl := Claim{Name: fmt.Sprintf("c%d", i), Rusage: claimSet(fmt.Sprintf("rusage[fpga=%d:mem=%d]", 1+rng.IntN(2), 1000*rng.IntN(4))),
			Exclusive: rng.IntN(3) == 0}
		if rng.IntN(2) == 0 {
			cl.Users = []string{users[rng.IntN(3)]}
		}
		if rng.IntN(3) == 0 {
			cl.Hosts = []string{s.Hosts[rng.IntN(nh)].Name}
		}
		s.Claims = append(s.Claims, cl)
	}
	next := int64(1)
	for cycle := range 30 {
		for range rng.IntN(5) {
			j := instJob(next, fmt.Sprintf("rusage[fpga=%d:mem=%d]", rng.IntN(3), 500*rng.IntN(6)), 1)
			j.User = users[rng.IntN(3)]
			if rng.IntN(2) == 0 {
				j.Claim = s.Claims[rng.IntN(len(s.Claims))].Name
			}
			s.Jobs = append(s.Jobs, j)
			next++
		}
		s.Now = t0.Add(time.Duration(cycle) * time.Minute)
		d := Schedule(s)
		for _, cp := range d.Claims {
			for i := range s.Claims {
				if s.Claims[i].Name == cp.Name {
					h := cp.Held
					s.Claims[i].Held = &h
				}
			}
		}
		placed := map[JobKey]Placement{}
		for _, p := range d.Placements {
			placed[p.Job] = p
		}
		kept := s.Jobs[:0]
		for _, j := range s.Jobs {
			p, ok := placed[j.Key]
			if !ok {
				kept = append(kept, j)
				continue
			}
			s.Running = append(s.Running, Alloc{Job: j.Key, User: j.User, Queue: j.Queue, Start: s.Now, Claim: j.Claim, Hosts: p.Hosts})
		}
		s.Jobs = kept
		checkClaims(t, s, cap)
		// Some jobs end; now and then a claim is deleted and made again.
		s.Running = slices.DeleteFunc(s.Running, func(Alloc) bool { return rng.IntN(4) == 0 })
		if rng.IntN(6) == 0 {
			i := rng.IntN(len(s.Claims))
			name := s.Claims[i].Name
			if !slices.ContainsFunc(s.Running, func(a Alloc) bool { return a.Claim == name }) {
				s.Claims[i].Held = nil
			}
		}
	}
}

func checkClaims(t *testing.T, s *Snapshot, capacity map[string]int) {
	t.Helper()
	owner := map[string]string{} // host/res/name -> who holds it
	hostFpga := map[string]float64{}
	hostMem := map[string]float64{}
	byClaim := map[string]*Claim{}
	for i := range s.Claims {
		cl := &s.Claims[i]
		if cl.Held == nil {
			continue
		}
		byClaim[cl.Name] = cl
		for _, n := range cl.Held.Instances["fpga"] {
			k := cl.Held.Host + "/" + n
			if owner[k] != "" {
				t.Fatalf("%s held by claim %s and %s", k, cl.Name, owner[k])
			}
			owner[k] = "claim " + cl.Name
		}
		hostFpga[cl.Held.Host] += amount(cl.Held.Rusage, "fpga", 0, 1, true, false)
		hostMem[cl.Held.Host] += amount(cl.Held.Rusage, "mem", 0, 1, true, false)
	}
	inClaim := map[string]map[string]float64{}
	for _, a := range s.Running {
		cl := byClaim[a.Claim]
		for _, ha := range a.Hosts {
			f := amount(ha.Rusage, "fpga", 0, ha.Slots, ha.Lead, false)
			m := amount(ha.Rusage, "mem", 0, ha.Slots, ha.Lead, false)
			if len(ha.Instances["fpga"]) != int(f) {
				t.Fatalf("job %v reserves %v fpga, holds %v", a.Job, f, ha.Instances["fpga"])
			}
			if cl != nil {
				if ha.Host != cl.Held.Host {
					t.Fatalf("job %v of claim %s on %s, the claim is on %s", a.Job, cl.Name, ha.Host, cl.Held.Host)
				}
				if !cl.mayUse(a.User) {
					t.Fatalf("job %v of %s uses claim %s of %v", a.Job, a.User, cl.Name, cl.Users)
				}
				if inClaim[cl.Name] == nil {
					inClaim[cl.Name] = map[string]float64{}
				}
				inClaim[cl.Name]["fpga"] += f
				inClaim[cl.Name]["mem"] += m
				for _, n := range ha.Instances["fpga"] {
					if !slices.Contains(cl.Held.Instances["fpga"], n) {
						t.Fatalf("job %v of claim %s holds %s outside the claim %v", a.Job, cl.Name, n, cl.Held.Instances)
					}
					k := ha.Host + "/" + n + "/" + cl.Name
					if owner[k] != "" {
						t.Fatalf("%s held by jobs %v and %s", k, a.Job, owner[k])
					}
					owner[k] = a.Job.String()
				}
				continue
			}
			hostFpga[ha.Host] += f
			hostMem[ha.Host] += m
			for _, n := range ha.Instances["fpga"] {
				k := ha.Host + "/" + n
				if owner[k] != "" {
					t.Fatalf("%s held by job %v and %s", k, a.Job, owner[k])
				}
				owner[k] = a.Job.String()
			}
		}
	}
	for h, f := range hostFpga {
		if f > float64(capacity[h]) {
			t.Fatalf("host %s: %v fpga held of %d", h, f, capacity[h])
		}
		if hostMem[h] > 16000 {
			t.Fatalf("host %s: %v mem held of 16000", h, hostMem[h])
		}
	}
	for name, use := range inClaim {
		cl := byClaim[name]
		for r, v := range use {
			if v > amount(cl.Held.Rusage, r, 0, 1, true, false)+1e-9 {
				t.Fatalf("claim %s: its jobs use %v %s of %v", name, v, r, amount(cl.Held.Rusage, r, 0, 1, true, false))
			}
		}
	}
	// Exclusive claims: one user.
	for name, cl := range byClaim {
		if !cl.Exclusive {
			continue
		}
		us := map[string]bool{}
		for _, a := range s.Running {
			if a.Claim == name {
				us[a.User] = true
			}
		}
		if len(us) > 1 {
			t.Fatalf("exclusive claim %s used by %v", name, us)
		}
	}
}
