package controller

// Standalone claims (bclaim create, list, delete; DESIGN.md's resource
// model): instances and amounts of resources held on one host for the
// jobs that name the claim (bsub -claim). The controller keeps each
// claim in the store under m/claim/<name> (replicated under HA as every
// store write is, and read back by a new leader or after a restart),
// gives lib/sched the claims in every snapshot, and records where a
// claim was allocated, and what it holds, as soon as a cycle allocates
// it (lib/sched/claim.go decides). A claim ends when it is deleted
// (its creator or an administrator) or its end time (-e) passes; the
// jobs that still run in it then keep what they hold, charged as any
// job's, and the pending jobs that name it are scheduled as ordinary
// jobs, as LSF does with an advance reservation's jobs after brsvdel.

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/policy"
	"xce/lib/resreq"
	"xce/lib/sched"
)

// claimState is the controller's claims (c.mu held).
type claimState struct {
	byName map[string]*api.ClaimInfo
	why    map[string]string // a pending claim's reasons from the last cycle
}

// restoreClaims reads the claims from the store.
func (c *Controller) restoreClaims() error {
	m, err := c.store.Meta("claim/")
	if err != nil {
		return err
	}
	c.claims = claimState{byName: map[string]*api.ClaimInfo{}, why: map[string]string{}}
	for _, v := range m {
		ci := &api.ClaimInfo{}
		if err := proto.Unmarshal(v, ci); err != nil {
			slog.Warn("ignoring an unreadable claim", "err", err)
			continue
		}
		c.claims.byName[ci.Name] = ci
	}
	return nil
}

// saveClaim writes (or, with del, removes) a claim (c.mu held).
func (c *Controller) saveClaim(ci *api.ClaimInfo, del bool) error {
	if del {
		return c.store.SetMeta("claim/"+ci.Name, nil)
	}
	b, err := proto.Marshal(ci)
	if err != nil {
		return err
	}
	return c.store.SetMeta("claim/"+ci.Name, b)
}

// claimList is the claims by creation, then name (c.mu held): the order
// pending ones are allocated in.
func (c *Controller) claimList() []*api.ClaimInfo {
	out := make([]*api.ClaimInfo, 0, len(c.claims.byName))
	for _, ci := range c.claims.byName {
		out = append(out, ci)
	}
	slices.SortFunc(out, func(a, b *api.ClaimInfo) int {
		if a.Created != b.Created {
			return int(a.Created - b.Created)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Claims serves bclaim.
func (c *Controller) Claims(who Caller, req *api.ClaimRequest) *api.ClaimReply {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch req.Op {
	case api.ClaimRequest_CREATE:
		return c.createClaim(who, req.Claim, time.Now())
	case api.ClaimRequest_DELETE:
		return c.deleteClaims(who, req.Names)
	}
	return c.listClaims(req.Names)
}

// claimUsage parses a claim's -R: an rusage[] section and nothing else,
// one set of host resources the configuration defines as numbers.
func claimUsage(conf *config.Config, rr string) (resreq.UsageSet, error) {
	r, err := resreq.Parse(rr, resreq.WithSchema(conf.Schema()))
	if err != nil {
		return nil, err
	}
	s := r.Simple
	if s == nil || s.Rusage == nil || s.Select != nil || s.Order != nil || s.Span != nil || s.Same != nil || s.CU != nil {
		return nil, fmt.Errorf("a claim's requirement is one rusage[] section")
	}
	if len(s.Rusage.Or) != 1 || len(s.Rusage.Or[0]) == 0 {
		return nil, fmt.Errorf("a claim's rusage[] has one set of resources (no ||)")
	}
	shared := policy.Shared(conf)
	for _, u := range s.Rusage.Or[0] {
		for _, ru := range u.Resources {
			res, _, ok := conf.Schema().Lookup(ru.Name)
			switch {
			case !ok || res.Kind != resreq.Numeric:
				return nil, fmt.Errorf("%s: Unknown resource or not a number", ru.Name)
			case shared[ru.Name] != 0 || ru.Name == "slots" || ru.Name == "maxslots":
				return nil, fmt.Errorf("%s: a claim holds host resources only (not shared ones or slots)", ru.Name)
			}
		}
	}
	return s.Rusage.Or[0], nil
}

// validClaimName is the rule for a claim's name: a reservation name's.
func validClaimName(s string) bool { return validRsvName(s) }

// createClaim is bclaim create: any user.
func (c *Controller) createClaim(who Caller, in *api.ClaimInfo, now time.Time) *api.ClaimReply {
	fail := func(format string, a ...any) *api.ClaimReply {
		return &api.ClaimReply{Errors: []string{fmt.Sprintf(format, a...)}}
	}
	if in == nil {
		return fail("No claim given")
	}
	conf := c.config()
	switch {
	case !validClaimName(in.Name):
		return fail("%s: Bad claim name: a letter, then up to 38 letters, digits, _ or -", in.Name)
	case c.claims.byName[in.Name] != nil:
		return fail("%s: Claim already exists", in.Name)
	case in.ResReq == "":
		return fail("A resource requirement (-R \"rusage[...]\") must be specified")
	case in.End != 0 && in.End <= now.Unix():
		return fail("The end time (-e) has passed")
	case in.Group != "" && len(in.Users) > 0:
		return fail("-u cannot be used with -g")
	case in.Group != "" && policy.UserGroups(conf)[in.Group] == nil:
		return fail("%s: User group does not exist", in.Group)
	}
	if _, err := claimUsage(conf, in.ResReq); err != nil {
		return fail("%s: Bad resource requirement: %v", in.ResReq, err)
	}
	if err := c.checkHostList(conf, in.Hosts); err != nil {
		return fail("%v", err)
	}
	ci := &api.ClaimInfo{Name: in.Name, ResReq: in.ResReq, Hosts: in.Hosts, Users: in.Users, Group: in.Group,
		End: in.End, Exclusive: in.Exclusive, Created: now.Unix()}
	ci.Creator, _ = lookupUser(who.UID)
	if err := c.saveClaim(ci, false); err != nil {
		return fail("Failed to record the claim: %v", err)
	}
	c.claims.byName[ci.Name] = ci
	c.Kick()
	return &api.ClaimReply{Claims: []*api.ClaimInfo{ci}, Messages: []string{fmt.Sprintf("Claim <%s> is created", ci.Name)}}
}

// deleteClaims is bclaim delete: the creator or an administrator.
func (c *Controller) deleteClaims(who Caller, names []string) *api.ClaimReply {
	reply := &api.ClaimReply{}
	if len(names) == 0 {
		reply.Errors = append(reply.Errors, "A claim name must be specified")
	}
	user, _ := lookupUser(who.UID)
	for _, name := range names {
		ci := c.claims.byName[name]
		switch {
		case ci == nil:
			reply.Errors = append(reply.Errors, fmt.Sprintf("%s: Claim does not exist", name))
			continue
		case ci.Creator != user && !c.isAdmin(who.UID):
			reply.Errors = append(reply.Errors, fmt.Sprintf("%s: %s", name, errPermission))
			continue
		}
		if err := c.saveClaim(ci, true); err != nil {
			reply.Errors = append(reply.Errors, fmt.Sprintf("%s: Failed to delete the claim: %v", name, err))
			continue
		}
		delete(c.claims.byName, name)
		delete(c.claims.why, name)
		reply.Messages = append(reply.Messages, fmt.Sprintf("Claim <%s> is deleted", name))
	}
	c.Kick()
	return reply
}

// listClaims is bclaim list: the claims with their reasons and jobs.
func (c *Controller) listClaims(names []string) *api.ClaimReply {
	reply := &api.ClaimReply{}
	jobs := map[string][]*api.RsvJob{}
	for _, rec := range c.jobs {
		if n := rec.eff.GetClaim(); n != "" && !isFinished(rec.job.State) {
			jobs[n] = append(jobs[n], &api.RsvJob{JobId: rec.job.JobId, ArrayIndex: rec.job.ArrayIndex, State: rec.job.State})
		}
	}
	for _, ci := range c.claimList() {
		if len(names) > 0 && !slices.Contains(names, ci.Name) {
			continue
		}
		out := proto.Clone(ci).(*api.ClaimInfo)
		out.PendReason = c.claims.why[ci.Name]
		out.Jobs = jobs[ci.Name]
		slices.SortFunc(out.Jobs, func(a, b *api.RsvJob) int {
			if a.JobId != b.JobId {
				return int(a.JobId - b.JobId)
			}
			return int(a.ArrayIndex - b.ArrayIndex)
		})
		reply.Claims = append(reply.Claims, out)
	}
	for _, n := range names {
		if c.claims.byName[n] == nil {
			reply.Errors = append(reply.Errors, fmt.Sprintf("%s: Claim does not exist", n))
		}
	}
	return reply
}

// claimUser reports whether user may use the claim: its creator, a -u
// user, or a member of its -g group (directly or through subgroups).
func claimUser(conf *config.Config, ci *api.ClaimInfo, user string) bool {
	if user == ci.Creator || slices.Contains(ci.Users, user) {
		return true
	}
	if ci.Group == "" {
		return false
	}
	m := claimMembers(conf, ci)
	return m == nil || slices.Contains(m, user)
}

// claimMembers is the users who may use the claim; nil: anyone (a group
// of "all").
func claimMembers(conf *config.Config, ci *api.ClaimInfo) []string {
	out := append([]string{ci.Creator}, ci.Users...)
	if ci.Group == "" {
		return out
	}
	groups := policy.UserGroups(conf)
	seen := map[string]bool{}
	all := false
	var add func(name string, depth int)
	add = func(name string, depth int) {
		m, isGroup := groups[name]
		switch {
		case name == "all":
			all = true
		case !isGroup:
			out = append(out, name)
		case depth < 8 && !seen[name]:
			seen[name] = true
			for _, x := range m {
				add(x, depth+1)
			}
		}
	}
	add(ci.Group, 0)
	if all {
		return nil
	}
	return out
}

// checkClaimJob checks bsub -claim: the claim exists and the job's user
// may use it (c.mu held).
func (c *Controller) checkClaimJob(conf *config.Config, eff *api.JobSpec) error {
	name := eff.GetClaim()
	if name == "" {
		return nil
	}
	ci := c.claims.byName[name]
	if ci == nil {
		return userErr("%s: Claim does not exist", name)
	}
	if !claimUser(conf, ci, eff.GetUser()) {
		return userErr("%s: User does not have permission to use the claim", name)
	}
	return nil
}

// claimsPending reports whether a claim waits for its allocation, for
// which a cycle runs with no job to place (c.mu held).
func (c *Controller) claimsPending() bool {
	for _, ci := range c.claims.byName {
		if ci.Host == "" {
			return true
		}
	}
	return false
}

// snapClaims gives a snapshot the claims and its jobs' (c.mu held).
func (c *Controller) snapClaims(snap *sched.Snapshot) {
	if len(c.claims.byName) == 0 {
		return
	}
	conf := c.config()
	for _, ci := range c.claimList() {
		set, err := claimUsage(conf, ci.ResReq)
		if err != nil {
			// The configuration changed under it: it holds nothing.
			c.claims.why[ci.Name] = fmt.Sprintf("Bad resource requirement: %v", err)
			continue
		}
		sc := sched.Claim{Name: ci.Name, Users: claimMembers(conf, ci), Exclusive: ci.Exclusive, Rusage: set, Hosts: ci.Hosts}
		if ci.Host != "" {
			sc.Held = &sched.HostAlloc{Host: ci.Host, Rusage: set, Lead: true,
				Instances: heldInstances(&api.HostSlots{Instances: ci.Instances})}
		}
		snap.Claims = append(snap.Claims, sc)
	}
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if r := c.jobs[key{j.Key.ID, j.Key.Index}]; r != nil {
			j.Claim = r.eff.GetClaim()
		}
	}
	for i := range snap.Running {
		a := &snap.Running[i]
		if r := c.jobs[key{a.Job.ID, a.Job.Index}]; r != nil {
			a.Claim = r.eff.GetClaim()
		}
	}
}

// applyClaims records the claims a cycle allocated, before any job uses
// them, and keeps the pending ones' reasons (c.mu held).
func (c *Controller) applyClaims(d *sched.Decision, now time.Time) {
	for name, lines := range d.ClaimPending {
		c.claims.why[name] = strings.Join(lines, "; ")
	}
	for _, cp := range d.Claims {
		ci := c.claims.byName[cp.Name]
		if ci == nil {
			continue
		}
		n := proto.Clone(ci).(*api.ClaimInfo)
		n.Host, n.Instances, n.Allocated = cp.Held.Host, recordInstances(cp.Held), now.Unix()
		if err := c.saveClaim(n, false); err != nil {
			slog.Warn("record a claim's allocation", "claim", n.Name, "err", err)
			continue
		}
		c.claims.byName[n.Name] = n
		delete(c.claims.why, n.Name)
		slog.Info("claim allocated", "claim", n.Name, "host", n.Host)
	}
	if len(d.Claims) > 0 {
		c.Kick() // its jobs may start in the next cycle
	}
}

// expireClaims removes the claims whose end time (-e) has passed.
func (c *Controller) expireClaims(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, ci := range c.claims.byName {
		if ci.End == 0 || ci.End > now.Unix() {
			continue
		}
		if err := c.saveClaim(ci, true); err != nil {
			slog.Warn("remove an expired claim", "claim", name, "err", err)
			continue
		}
		delete(c.claims.byName, name)
		delete(c.claims.why, name)
		slog.Info("claim expired", "claim", name)
	}
}
