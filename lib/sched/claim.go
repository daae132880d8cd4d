package sched

import (
	"maps"
	"math"
	"reflect"
	"slices"

	"xce/lib/resreq"
)

// Standalone claims (DESIGN.md's resource model; bclaim): a claim holds
// counters (L2: mem, a numeric site resource) and named instances (L3:
// fpga0) on one host until it is deleted or expires, for the jobs that
// name it (Job.Claim) and no other.
//
// A cycle with claims works on a copy of its snapshot:
//
//   - A held claim is a running allocation of no slots that reserves the
//     claim's amounts and holds its instances, so every other job sees
//     the host without them; the running jobs of the claim are charged
//     only for what they reserve beyond it (the claimed resources are
//     left out of their rusage, and their claimed instances are the
//     claim's).
//   - A pending claim is allocated before the jobs, on the first host of
//     its candidates (Claim.Hosts, or every host) where what running jobs
//     and earlier claims leave free covers its amounts and instances (the
//     same accounting bhosts shows, Look); it does not need a free slot.
//     One that does not fit pends with the reasons (Decision.ClaimPending).
//   - A job of a held claim is tried on the claim's host only, with the
//     claimed resources left out of its requirement; once placed, its
//     rusage of each claimed resource must fit in what the claim holds
//     less what the claim's running jobs and the cycle's earlier
//     placements use, and its instances are given from the claim's. A
//     job whose user may not use the claim (Claim.Users), or an exclusive
//     claim's job while another user's jobs run in it, pends.
//
// A claim is on one host; its requirement is an rusage[] set (no select,
// no per-host alternatives). A claim's jobs count against limits with
// their whole rusage, as any job does. A claim of ngpus_physical on a
// host that lists its devices holds devices (claim_gpu.go). Cluster-wide
// shared resources are not claimed. A job whose claim is gone runs as an ordinary job.

// Claim is a standalone claim as a cycle reads it.
type Claim struct {
	Name string
	// Users may use it: user names (the controller expands groups and
	// adds the creator). Empty: anyone.
	Users []string
	// Exclusive: the jobs of one user at a time (bclaim -x).
	Exclusive bool
	// Rusage is what it holds on its host (the amount of each resource;
	// durations and decays are ignored: a claim holds until it ends).
	Rusage resreq.UsageSet
	// Hosts are the candidates (-m: hosts, groups); empty: every host.
	Hosts []string
	// Held is where the claim is allocated: its host, the rusage it
	// reserves there and its instances by resource. nil: pending.
	Held *HostAlloc
}

// ClaimPlacement allocates a pending claim.
type ClaimPlacement struct {
	Name string
	Held HostAlloc
}

// Reasons a claim's job pends.
const (
	reasonClaimPending = "The job's claim is not allocated yet"
	reasonClaimUser    = "The user may not use the job's claim"
	reasonClaimBusy    = "The job's exclusive claim is used by another user"
	reasonClaimHosts   = "The claim's host is not among the job's specified hosts"
)

// claimJob is a pending job of a held claim in the cycle.
type claimJob struct {
	cl    *claimState
	user  string
	pairs []setPair // its requirement's usage sets, as tried and as given
	gpu   *gpuNeed  // its -gpu, served from the claim's devices (claim_gpu.go)
}

// setPair is a usage set with the claimed resources left out, and the
// set it came from.
type setPair struct{ stripped, orig resreq.UsageSet }

// claimState is a held claim's use in the cycle.
type claimState struct {
	c     *Claim
	amt   map[string]float64    // resource -> held amount
	used  map[string]float64    // resource -> used by its jobs
	insts map[string]*namedPool // its instances, held by its jobs
	devs  map[string]*GPU       // its devices by name (claim_gpu.go)
	users map[string]bool       // users whose jobs run in it
}

// scheduleClaims is Schedule for a snapshot with claims (see above).
func scheduleClaims(s *Snapshot) *Decision {
	// The copy's cycle charges every running job afresh, so the ledger
	// no longer follows the decisions: it fills again at its next cycle.
	// (Look, which takes the same copy, leaves the caller's ledger be.)
	if s.Ledger != nil {
		s.Ledger.Reset()
	}
	s2, held := claimSnapshot(s)
	schema := s.Schema
	if schema == nil {
		schema, _ = resreq.NewSchema()
	}

	d := &Decision{}
	placeClaims(s, &s2, schema, d)

	// Pending jobs: those of held claims restricted to them.
	why := map[JobKey]string{}
	cjobs := map[JobKey]*claimJob{}
	s2.Jobs = make([]Job, 0, len(s.Jobs))
	for _, j := range s.Jobs {
		if j.Claim == "" {
			s2.Jobs = append(s2.Jobs, j)
			continue
		}
		cs := held[j.Claim]
		if cs == nil && !s.hasClaim(j.Claim) {
			// Its claim is gone: an ordinary job.
			j.Claim = ""
			s2.Jobs = append(s2.Jobs, j)
			continue
		}
		if w := claimWhy(s, cs, &j); w != "" {
			why[j.Key] = w
			continue
		}
		if len(j.Hosts) > 0 && !HostListIncludes(j.Hosts, cs.c.Held.Host, s.HostGroups) {
			why[j.Key] = reasonClaimHosts
			continue
		}
		cj := &claimJob{cl: cs, user: j.User}
		j.Req = cj.strip(j.Req, cs)
		cj.takeGPU(&j)
		j.Hosts = []string{cs.c.Held.Host}
		cjobs[j.Key] = cj
		s2.Jobs = append(s2.Jobs, j)
	}
	jd := Schedule(&s2)
	d.Reservations, d.Buckets, d.Resumes = jd.Reservations, jd.Buckets, jd.Resumes
	d.Pending = jd.Pending
	if d.Pending == nil {
		d.Pending = map[JobKey][]string{}
	}
	for _, p := range jd.Placements {
		cj := cjobs[p.Job]
		if cj == nil {
			d.Placements = append(d.Placements, p)
			continue
		}
		if w := cj.give(&p); w != "" {
			if !s.NoReasons {
				d.Pending[p.Job] = []string{w}
			}
			continue
		}
		d.Placements = append(d.Placements, p)
	}
	if !s.NoReasons {
		for k, w := range why {
			d.Pending[k] = []string{w}
		}
	}
	return d
}

// claimAlloc is a held claim as a running allocation: no slots, its
// rusage reserved from start, its instances held. Its key is negative
// (the claim's index) and its queue no queue's name, so no queue counts
// it and no preemption takes it.
func claimAlloc(i int, name string, h HostAlloc) Alloc {
	h.Slots, h.Lead, h.Used = 0, true, nil
	claimDevices(&h)
	return Alloc{Job: JobKey{ID: -1 - int64(i)}, Queue: "\x00claim " + name, Hosts: []HostAlloc{h}}
}

// hasClaim reports whether the snapshot has the claim, held or pending.
func (s *Snapshot) hasClaim(name string) bool {
	for i := range s.Claims {
		if s.Claims[i].Name == name {
			return true
		}
	}
	return false
}

// claimWhy is why a job of claim cs (nil: not held) cannot be tried.
func claimWhy(s *Snapshot, cs *claimState, j *Job) string {
	if cs == nil {
		return reasonClaimPending
	}
	if !cs.c.mayUse(j.User) {
		return reasonClaimUser
	}
	if cs.c.Exclusive && len(cs.users) > 0 && !cs.users[j.User] {
		return reasonClaimBusy
	}
	return ""
}

// mayUse reports whether user's jobs may use the claim.
func (cl *Claim) mayUse(user string) bool {
	return len(cl.Users) == 0 || slices.Contains(cl.Users, user)
}

// use charges a running job of the claim to it and returns its hosts
// without the claimed resources on the claim's host.
func (cs *claimState) use(user string, has []HostAlloc) []HostAlloc {
	out := slices.Clone(has)
	cs.users[user] = true
	for i := range out {
		ha := &out[i]
		if ha.Host != cs.c.Held.Host {
			continue
		}
		for r := range cs.amt {
			cs.used[r] += amount(ha.Rusage, r, 0, ha.Slots, ha.Lead, false)
		}
		ha.Rusage = stripSet(ha.Rusage, cs.amt)
		if cs.useGPU(ha) {
			ha.GPU = nil
		}
		if ha.Instances != nil {
			ins := map[string][]string{}
			for r, names := range ha.Instances {
				if _, ok := cs.amt[r]; ok {
					if np := cs.insts[r]; np != nil {
						for _, n := range names {
							np.holdName(n)
						}
					}
					continue
				}
				ins[r] = names
			}
			ha.Instances = ins
		}
	}
	return out
}

// stripSet is set without the resources of claimed.
func stripSet(set resreq.UsageSet, claimed map[string]float64) resreq.UsageSet {
	var out resreq.UsageSet
	for _, u := range set {
		var rs []resreq.ResUsage
		for _, r := range u.Resources {
			if _, ok := claimed[r.Name]; !ok {
				rs = append(rs, r)
			}
		}
		if len(rs) > 0 {
			u.Resources = rs
			out = append(out, u)
		}
	}
	return out
}

// strip is a copy of a requirement without the claimed resources,
// remembering each usage set it changed.
func (cj *claimJob) strip(r *resreq.ResReq, cs *claimState) *resreq.ResReq {
	if r == nil {
		return nil
	}
	simple := func(s resreq.Simple) resreq.Simple {
		if s.Rusage == nil {
			return s
		}
		ru := &resreq.Rusage{}
		for _, set := range s.Rusage.Or {
			st := stripSet(set, cs.amt)
			cj.pairs = append(cj.pairs, setPair{st, set})
			ru.Or = append(ru.Or, st)
		}
		s.Rusage = ru
		return s
	}
	out := &resreq.ResReq{}
	switch {
	case r.Simple != nil:
		s := simple(*r.Simple)
		out.Simple = &s
	case r.Compound != nil:
		out.Compound = slices.Clone(r.Compound)
		for i := range out.Compound {
			out.Compound[i].Req = simple(out.Compound[i].Req)
		}
	default:
		for _, a := range r.Alternatives {
			out.Alternatives = append(out.Alternatives, resreq.Alternative{Req: cj.strip(a.Req, cs), Delay: a.Delay})
		}
	}
	return out
}

// orig is the usage set a placed set was stripped from.
func (cj *claimJob) orig(placed resreq.UsageSet) resreq.UsageSet {
	for _, p := range cj.pairs {
		if len(p.stripped) > 0 && len(placed) > 0 && &p.stripped[0] == &placed[0] {
			return p.orig
		}
	}
	for _, p := range cj.pairs {
		if len(p.stripped) == len(placed) && (len(placed) == 0 || reflect.DeepEqual(p.stripped, placed)) {
			return p.orig
		}
	}
	return placed
}

// give checks a placement of the claim's job against what the claim has
// left, and gives it its rusage back and its instances from the claim's;
// it returns why not, taking nothing.
func (cj *claimJob) give(p *Placement) string {
	cs, user := cj.cl, cj.user
	if cs.c.Exclusive && len(cs.users) > 0 && !cs.users[user] {
		return reasonClaimBusy
	}
	need := map[string]float64{}
	for i := range p.Hosts {
		ha := &p.Hosts[i]
		ha.Rusage = cj.orig(ha.Rusage)
		for r := range cs.amt {
			need[r] += amount(ha.Rusage, r, 0, ha.Slots, ha.Lead, false)
		}
	}
	picks := map[string][]string{}
	for _, r := range slices.Sorted(maps.Keys(need)) {
		n := need[r]
		if math.IsNaN(n) || n <= 0 {
			continue
		}
		if cs.used[r]+n > cs.amt[r]+1e-9 {
			return "Job requirements for reserving resource (" + r + ") not satisfied within claim " + cs.c.Name
		}
		if r == ngpusPhysical && cj.gpu != nil {
			continue // its -gpu's devices, below
		}
		if np := cs.insts[r]; np != nil {
			got := np.pickNames(int(math.Ceil(n-1e-9)), nil)
			if got == nil {
				return "Job requirements for reserving resource (" + r + ") not satisfied within claim " + cs.c.Name
			}
			picks[r] = got
		}
	}
	if cj.gpu != nil {
		k := 0
		if n := need[ngpusPhysical]; n > 0 {
			k = int(math.Ceil(n - 1e-9))
		}
		got := cj.pickDevices(p, k)
		if got == nil {
			return "Job requirements for reserving resource (" + ngpusPhysical + ") not satisfied within claim " + cs.c.Name
		}
		picks[ngpusPhysical] = got
	}
	for r, n := range need {
		if n > 0 {
			cs.used[r] += n
		}
	}
	cs.users[user] = true
	if len(picks) > 0 {
		ha := &p.Hosts[0]
		for i := range p.Hosts {
			if p.Hosts[i].Host == cs.c.Held.Host {
				ha = &p.Hosts[i]
				break
			}
		}
		if ha.Instances == nil {
			ha.Instances = map[string][]string{}
		} else {
			ha.Instances = maps.Clone(ha.Instances)
		}
		for r, names := range picks {
			for _, n := range names {
				cs.insts[r].holdName(n)
			}
			if r == ngpusPhysical {
				ha.GPU = cj.gpuAlloc(names)
				continue
			}
			ha.Instances[r] = append(slices.Clip(ha.Instances[r]), names...)
		}
		if len(ha.Instances) == 0 {
			ha.Instances = nil
		}
	}
	return ""
}

// claimSnapshot is the copy of a snapshot with claims that a cycle
// works on (see above): without claims, its held claims charged as
// running allocations and its running claim jobs charged beyond them;
// held is its held claims' states by name.
func claimSnapshot(s *Snapshot) (s2 Snapshot, held map[string]*claimState) {
	s2 = *s
	s2.Claims = nil
	s2.Ledger, s2.Scratch = nil, nil

	held = map[string]*claimState{}
	for i := range s.Claims {
		cl := &s.Claims[i]
		if cl.Held == nil {
			continue
		}
		cs := &claimState{c: cl, amt: map[string]float64{}, used: map[string]float64{}, users: map[string]bool{}}
		for r, names := range cl.Held.Instances {
			if cs.insts == nil {
				cs.insts = map[string]*namedPool{}
			}
			cs.insts[r] = newNamedPool(names)
		}
		cs.claimGPUs(s.Hosts)
		for _, u := range cl.Held.Rusage {
			for _, r := range u.Resources {
				cs.amt[r.Name] = amount(cl.Held.Rusage, r.Name, 0, 1, true, false)
			}
		}
		held[cl.Name] = cs
	}

	// Running: the claims' jobs without what the claims hold, then the
	// claims themselves.
	s2.Running = make([]Alloc, 0, len(s.Running)+len(s.Claims))
	for _, a := range s.Running {
		if cs := held[a.Claim]; cs != nil {
			a.Hosts = cs.use(a.User, a.Hosts)
		}
		s2.Running = append(s2.Running, a)
	}
	for i := range s.Claims {
		if cl := &s.Claims[i]; cl.Held != nil {
			s2.Running = append(s2.Running, claimAlloc(i, cl.Name, *cl.Held))
		}
	}
	return s2, held
}

// placeClaims allocates the pending claims on s2's hosts, adding each
// placed one to s2.Running.
func placeClaims(s, s2 *Snapshot, schema *resreq.Schema, d *Decision) {
	var pending []*Claim
	for i := range s.Claims {
		if s.Claims[i].Held == nil {
			pending = append(pending, &s.Claims[i])
		}
	}
	if len(pending) == 0 {
		return
	}
	d.ClaimPending = map[string][]string{}
	v := Look(s2)
	// taken: instances held by running jobs and claims.
	taken := newInstTable(s.Hosts)
	taken.holdAllocs(s2.Running, nil)
	if slices.ContainsFunc(pending, holdsDevices) {
		taken = taken.withDevices(s.Hosts, v)
	}
	extra := map[string]map[string]float64{} // host -> resource -> placed this cycle
	byName := map[string]int{}
	for i := range s.Hosts {
		byName[s.Hosts[i].Name] = i
	}
	for ci, cl := range pending {
		set := holdSet(cl.Rusage)
		var cand []bool
		if len(cl.Hosts) > 0 {
			cand = hostSet(cl.Hosts, byName, len(s.Hosts), s.HostGroups)
		}
		fails := map[string]int{}
		var order []string
		failed := func(w string) {
			if fails[w] == 0 {
				order = append(order, w)
			}
			fails[w]++
		}
		placed := false
		for hi := range s.Hosts {
			h := &s.Hosts[hi]
			if cand != nil && !cand[hi] {
				continue
			}
			if h.Status != HostOK {
				failed("Closed or unavailable host")
				continue
			}
			ha, w := fitClaim(h, set, v.Hosts[h.Name].Values, schema, s.Shared, extra[h.Name], taken)
			if w != "" {
				failed(w)
				continue
			}
			if extra[h.Name] == nil {
				extra[h.Name] = map[string]float64{}
			}
			for _, u := range set {
				for _, r := range u.Resources {
					extra[h.Name][r.Name] += amount(set, r.Name, 0, 1, true, false)
				}
			}
			taken.holdHost(h.Name, ha.Instances)
			d.Claims = append(d.Claims, ClaimPlacement{Name: cl.Name, Held: ha})
			s2.Running = append(s2.Running, claimAlloc(len(s.Claims)+ci, cl.Name, ha))
			placed = true
			break
		}
		if placed {
			continue
		}
		var lines []string
		for _, w := range order {
			lines = append(lines, w+": "+plural(fails[w], "host"))
		}
		if len(lines) == 0 {
			lines = []string{"No candidate host for the claim"}
		}
		d.ClaimPending[cl.Name] = lines
	}
}

// holdSet is a claim's usage set as held: amounts without durations,
// decays or phases.
func holdSet(set resreq.UsageSet) resreq.UsageSet {
	out := make(resreq.UsageSet, 0, len(set))
	for _, u := range set {
		nu := resreq.Usage{}
		for _, r := range u.Resources {
			r.Amounts = r.Amounts[:min(1, len(r.Amounts))]
			r.Method = ""
			nu.Resources = append(nu.Resources, r)
		}
		out = append(out, nu)
	}
	return out
}

// fitClaim is the claim's allocation on host h when its amounts fit in
// what vals (net of running jobs and claims) and extra (this cycle's
// claims) leave, with its instances picked; else why not.
func fitClaim(h *Host, set resreq.UsageSet, vals *resreq.Host, schema *resreq.Schema, shared map[string]float64,
	extra map[string]float64, taken *instTable) (HostAlloc, string) {
	ha := HostAlloc{Host: h.Name, Rusage: set, Lead: true}
	for _, u := range set {
		for _, r := range u.Resources {
			need := amount(set, r.Name, 0, 1, true, false)
			w := "Job requirements for reserving resource (" + r.Name + ") not satisfied"
			if _, ok := shared[r.Name]; ok {
				return ha, "A claim holds host resources only (" + r.Name + ")"
			}
			res, i, ok := schema.Lookup(r.Name)
			if !ok || res.Kind != resreq.Numeric || vals == nil {
				return ha, w
			}
			have := vals.Num[i] - extra[r.Name]
			if math.IsNaN(have) || have+1e-9 < need {
				return ha, w
			}
			np := taken.pool(h.Name, r.Name)
			if np == nil {
				continue
			}
			got := np.pickNames(int(math.Ceil(need-1e-9)), nil)
			if got == nil {
				return ha, w
			}
			if ha.Instances == nil {
				ha.Instances = map[string][]string{}
			}
			ha.Instances[r.Name] = got
		}
	}
	return ha, ""
}
