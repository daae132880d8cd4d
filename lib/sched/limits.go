package sched

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Resource allocation limits (lsb.resources Limit sections), as LSF
// counts them:
//
//   - A job counts against a limit when its user, queue, project,
//     application profile and licence project are each in the limit's list
//     of that kind (a list not given lets every job in). A per list
//     (PER_USER, ...) makes one limit for each member: each user (a user
//     group's members one by one), queue, project, profile or licence
//     project counts on its own; a plain list counts all its members
//     together.
//   - Slots, JOBS and the amounts count running jobs, suspended ones
//     included (RUN, SSUSP, USUSP): the Snapshot's Running. An amount is
//     max(reserved, used) of the job's rusage.
//   - Hosts: a limit with HOSTS counts only what jobs hold on those hosts
//     (together); PER_HOST counts each host on its own, and only there
//     can SLOTS_PER_PROCESSOR (times the host's ncpus) and MEM, SWP, TMP
//     percentages (of maxmem, maxswp, maxtmp) apply.
//   - Within a cycle every placement is charged at once, so the next job
//     sees it.
//
// Choices where LSF is silent: a job-wide limit caps a job before hosts
// are chosen; a HOSTS limit caps each of its hosts at what the limit has
// left and the whole placement is checked against it afterwards (a job
// that would pass it pends with the limit's reason instead of being
// spread over fewer of the limited hosts).

const (
	kUser = iota
	kQueue
	kProject
	kApp
	kLic
	nKinds
)

// scope is what a limit's pending reason says it is defined on.
type scope uint8

const (
	scopeCluster scope = iota
	scopeUser
	scopeQueue
	scopeProject
	scopeHost
)

// matcher is one consumer list: names (groups expanded), "all", and
// "~name" exclusions.
type matcher struct {
	all     bool
	in, out map[string]bool
}

func (m *matcher) match(v string) bool {
	if m == nil {
		return true
	}
	if m.out[v] {
		return false
	}
	return m.all || m.in[v]
}

type limitState struct {
	l       *Limit
	m       [nKinds][2]*matcher // the plain list and the per list
	per     [nKinds]bool
	perHost bool
	hosts   []bool // hosts whose holdings count; nil: all
	scope   scope
	used    map[string]*count
}

type count struct {
	vals  [nKinds]string
	host  string // per host
	slots float64
	jobs  int
	res   map[string]float64
}

// newLimit prepares one limit for the cycle.
func (c *cycle) newLimit(l *Limit) *limitState {
	ls := &limitState{l: l, used: map[string]*count{}}
	lists := [nKinds][2][]string{
		{l.Users, l.PerUsers}, {l.Queues, l.PerQueues}, {l.Projects, l.PerProjects},
		{l.Apps, l.PerApps}, {l.LicProjects, l.PerLicProjects},
	}
	legacy := [nKinds]Per{kUser: PerUser, kQueue: PerQueue, kProject: PerProject, kApp: 255, kLic: 255}
	for k := range nKinds {
		var groups map[string][]string
		if k == kUser {
			groups = c.s.UserGroups
		}
		for i, list := range lists[k] {
			if len(list) > 0 {
				ls.m[k][i] = newMatcher(list, groups)
			}
		}
		ls.per[k] = len(lists[k][1]) > 0 || l.Per == legacy[k]
	}
	ls.perHost = len(l.PerHosts) > 0 || l.Per == PerHost
	for _, list := range [][]string{l.Hosts, l.PerHosts} {
		if len(list) == 0 {
			continue
		}
		set := c.hostSet(list)
		if ls.hosts != nil {
			both := make([]bool, len(set))
			for i := range set {
				both[i] = set[i] && ls.hosts[i]
			}
			set = both
		}
		ls.hosts = set
	}
	if !ls.perHost && ls.hosts != nil && !slices.Contains(ls.hosts, false) {
		ls.hosts = nil // every host: a job-wide limit
	}
	switch {
	case ls.perHost || ls.hosts != nil:
		ls.scope = scopeHost
	case ls.m[kUser] != [2]*matcher{} || ls.per[kUser]:
		ls.scope = scopeUser
	case ls.m[kQueue] != [2]*matcher{} || ls.per[kQueue]:
		ls.scope = scopeQueue
	case ls.m[kProject] != [2]*matcher{} || ls.per[kProject]:
		ls.scope = scopeProject
	}
	return ls
}

func newMatcher(list []string, groups map[string][]string) *matcher {
	m := &matcher{in: map[string]bool{}, out: map[string]bool{}}
	for _, name := range list {
		name, _, _ = strings.Cut(name, "+") // a preference level means nothing here
		if rest, ok := strings.CutPrefix(name, "~"); ok {
			expand(rest, groups, m.out, map[string]bool{})
			continue
		}
		if name == "all" || groupHasAll(name, groups, map[string]bool{}) {
			m.all = true // "all" among a group's members lets everyone in
		}
		expand(name, groups, m.in, map[string]bool{})
	}
	return m
}

// expand adds name and, for a group, its members (recursively) to set.
func expand(name string, groups map[string][]string, set, seen map[string]bool) {
	set[name] = true
	if seen[name] {
		return
	}
	seen[name] = true
	for _, m := range groups[name] {
		expand(m, groups, set, seen)
	}
}

func groupHasAll(name string, groups map[string][]string, seen map[string]bool) bool {
	if seen[name] {
		return false
	}
	seen[name] = true
	for _, m := range groups[name] {
		if m == "all" || groupHasAll(m, groups, seen) {
			return true
		}
	}
	return false
}

// consumers are a job's values of each consumer kind.
type consumers [nKinds]string

func jobConsumers(j *Job) consumers {
	return consumers{kUser: j.User, kQueue: j.Queue, kProject: j.Project, kApp: j.App, kLic: j.LicProject}
}

// allocConsumers is what a running job counts as against limits.
func allocConsumers(a *Alloc) consumers {
	return consumers{kUser: a.User, kQueue: a.Queue, kProject: a.Project, kApp: a.App, kLic: a.LicProject}
}

func (ls *limitState) matches(v *consumers) bool {
	for k := range nKinds {
		if !ls.m[k][0].match(v[k]) || !ls.m[k][1].match(v[k]) {
			return false
		}
	}
	return true
}

// key names the count of a job's consumers in a limit: its values of the
// per kinds.
func (ls *limitState) key(v *consumers) string {
	var b strings.Builder
	for k := range nKinds {
		if ls.per[k] {
			b.WriteString(v[k])
		}
		b.WriteByte(0)
	}
	return b.String()
}

func (ls *limitState) get(k string, v *consumers, host string) *count {
	if host != "" {
		k += "\x01" + host
	}
	n := ls.used[k]
	if n == nil {
		n = &count{host: host}
		for i := range nKinds {
			if ls.per[i] {
				n.vals[i] = v[i]
			}
		}
		ls.used[k] = n
	}
	return n
}

func (ls *limitState) peek(k, host string) *count {
	if host != "" {
		k += "\x01" + host
	}
	if n := ls.used[k]; n != nil {
		return n
	}
	return &count{}
}

// matching returns the limits a job with these consumers counts against.
func (c *cycle) matching(v *consumers) []*limitState {
	var out []*limitState
	for _, ls := range c.limits {
		if ls.matches(v) {
			out = append(out, ls)
		}
	}
	return out
}

// charge counts an allocation against a limit it matches.
func (c *cycle) charge(ls *limitState, v *consumers, has []HostAlloc, elapsed time.Duration) {
	k := ls.key(v)
	if ls.perHost {
		for _, ha := range has {
			h, ok := c.byName[ha.Host]
			if !ok || (ls.hosts != nil && !ls.hosts[h]) {
				continue
			}
			n := ls.get(k, v, ha.Host)
			n.jobs++
			ls.add(n, ha, elapsed)
		}
		return
	}
	var n *count
	for _, ha := range has {
		if ls.hosts != nil {
			if h, ok := c.byName[ha.Host]; !ok || !ls.hosts[h] {
				continue
			}
		}
		if n == nil {
			n = ls.get(k, v, "")
			n.jobs++
		}
		ls.add(n, ha, elapsed)
	}
	if n == nil && ls.hosts == nil {
		ls.get(k, v, "").jobs++
	}
}

// add counts slots and max(reserved, used) of each limited resource.
func (ls *limitState) add(n *count, ha HostAlloc, elapsed time.Duration) {
	n.slots += float64(ha.Slots)
	for r := range ls.resNames() {
		a := max(amount(ha.Rusage, r, elapsed, ha.Slots, ha.Lead, false), ha.Used[r])
		if a == 0 {
			continue
		}
		if n.res == nil {
			n.res = map[string]float64{}
		}
		n.res[r] += a
	}
}

// resNames are the resources the limit counts, each once.
func (ls *limitState) resNames() map[string]bool {
	out := make(map[string]bool, len(ls.l.Resources)+len(ls.l.HostPercent))
	for r := range ls.l.Resources {
		out[r] = true
	}
	for r := range ls.l.HostPercent {
		out[r] = true
	}
	return out
}

// hostLimits are a limit's slot and amount ceilings on one host (per
// host limits: SLOTS_PER_PROCESSOR and percentages apply).
func (c *cycle) hostLimits(ls *limitState, h int) (slots int, res map[string]float64) {
	slots = ls.l.Slots
	res = ls.l.Resources
	if !ls.perHost {
		return slots, res
	}
	hs := &c.hosts[h]
	if spp := ls.l.SlotsPerProcessor; spp > 0 {
		n := int(math.Floor(spp*c.hostNum(hs, "ncpus", float64(hs.h.MaxSlots)) + 1e-9))
		if slots == 0 || n < slots {
			slots = n
		}
		if slots == 0 {
			slots = -1 // no slot at all; 0 would mean no limit
		}
	}
	if len(ls.l.HostPercent) > 0 {
		res = map[string]float64{}
		for r, v := range ls.l.Resources {
			res[r] = v
		}
		for r, pct := range ls.l.HostPercent {
			total := c.hostNum(hs, "max"+r, 0)
			v := math.Floor(total * pct / 100)
			if old, ok := res[r]; !ok || v < old {
				res[r] = v
			}
		}
	}
	return slots, res
}

// hostNum is a host's static value of a numeric resource, def when it
// has none.
func (c *cycle) hostNum(hs *hostState, name string, def float64) float64 {
	if hs.h.Values == nil {
		return def
	}
	if _, i, ok := c.schema.Lookup(name); ok && i < len(hs.h.Values.Num) {
		if v := hs.h.Values.Num[i]; !math.IsNaN(v) && v > 0 {
			return v
		}
	}
	return def
}

// hostLimitCap lowers free, the slots part p may take on host h, to what
// the per-host and host-list limits allow; why is set when it reaches 0.
func (c *cycle) hostLimitCap(b *bucket, p *part, h, free, ovs int) (int, fail) {
	name := c.hosts[h].h.Name
	for _, ls := range b.lims {
		if (!ls.perHost && ls.hosts == nil) || (ls.hosts != nil && !ls.hosts[h]) {
			continue
		}
		k := ls.key(&b.vals)
		host := ""
		if ls.perHost {
			host = name
		} else {
			ovs = 0
		}
		n := ls.peek(k, host)
		slots, res := c.hostLimits(ls, h)
		if slots != 0 {
			if f := max(slots, 0) - int(n.slots) - ovs; f < free {
				free = f
				if free <= 0 {
					if ls.l.Per == PerHost && len(ls.l.PerHosts) == 0 {
						return 0, fLimit
					}
					return 0, fLimitSlot
				}
			}
		}
		if ls.l.Jobs != 0 && n.jobs+1 > max(ls.l.Jobs, 0) {
			return 0, fLimitJobs
		}
		for _, r := range sortedKeys(res) {
			a, perTask := perUnit(p, r)
			if a <= 0 {
				continue
			}
			av := res[r] - n.res[r]
			if perTask {
				if k := int(math.Floor(av/a + 1e-9)); k < free {
					free = k
				}
			} else if av+1e-9 < a {
				free = 0
			}
			if free <= 0 {
				return 0, limitResFail(r)
			}
		}
	}
	return free, okHost
}

func limitResFail(r string) fail {
	switch r {
	case "mem":
		return fLimitMem
	case "swp":
		return fLimitSwp
	case "tmp":
		return fLimitTmp
	}
	return fLimitRes
}

// perUnit is what part p reserves of resource r on a host: an amount per
// slot (perTask) or per host.
func perUnit(p *part, r string) (float64, bool) {
	for i := range p.set {
		for _, ru := range p.set[i].Resources {
			if ru.Name != r {
				continue
			}
			a, _ := p.set[i].AmountAt(r, 0)
			return a, ru.Method == "task"
		}
	}
	return 0, false
}

// limitCap returns the most slots the queue's and the cluster's limits
// allow the bucket's next job, with the reason when that is below its
// minimum.
func (c *cycle) limitCap(b *bucket) (int, []string) {
	q := b.q.q
	mx := math.MaxInt32
	if q.SlotLimit > 0 {
		if mx = q.SlotLimit - b.q.used; mx < b.min {
			return mx, []string{reasonQueueFull, fmt.Sprintf("queue %s: %d of %d slots in use", q.Name, b.q.used, q.SlotLimit)}
		}
	}
	if q.UserSlotLimit > 0 {
		u := b.q.uused[b.user]
		if f := q.UserSlotLimit - u; f < mx {
			mx = f
			if mx < b.min {
				return mx, []string{reasonQueueUser, fmt.Sprintf("queue %s: user %s has %d of %d slots", q.Name, b.user, u, q.UserSlotLimit)}
			}
		}
	}
	for _, ls := range b.lims {
		if ls.perHost || ls.hosts != nil {
			continue
		}
		k := ls.key(&b.vals)
		n := ls.peek(k, "")
		if ls.l.Slots != 0 {
			lim := max(ls.l.Slots, 0)
			if f := lim - int(n.slots); f < mx {
				mx = f
				if mx < b.min {
					return mx, c.limitWhy(ls, &b.vals, "slots", n.slots, float64(lim))
				}
			}
		}
		if ls.l.Jobs != 0 && n.jobs+1 > max(ls.l.Jobs, 0) {
			return -1, c.limitWhy(ls, &b.vals, "jobs", float64(n.jobs), float64(max(ls.l.Jobs, 0)))
		}
		for _, r := range sortedKeys(ls.l.Resources) {
			lim := ls.l.Resources[r]
			need := 0.0
			for _, p := range b.variants[0].parts {
				cnt := p.count
				if cnt == 0 {
					cnt = b.min
				}
				need += amount(p.set, r, 0, cnt, true, false)
			}
			if need > 0 && n.res[r]+need > lim+1e-9 {
				return -1, c.limitWhy(ls, &b.vals, r, n.res[r], lim)
			}
		}
	}
	return mx, nil
}

// limitOver checks a placement against the limits it counts toward,
// charging each host as commit will; nil when it fits.
func (c *cycle) limitOver(b *bucket, has []HostAlloc) []string {
	for _, ls := range b.lims {
		if ls.perHost {
			continue
		}
		k := ls.key(&b.vals)
		n := ls.peek(k, "")
		need := &count{res: map[string]float64{}}
		for _, ha := range has {
			if ls.hosts != nil {
				if h, ok := c.byName[ha.Host]; !ok || !ls.hosts[h] {
					continue
				}
			}
			need.slots += float64(ha.Slots)
			need.jobs = 1
			for r := range ls.l.Resources {
				need.res[r] += amount(ha.Rusage, r, 0, ha.Slots, ha.Lead, false)
			}
		}
		if ls.hosts != nil {
			if lim := max(ls.l.Slots, 0); ls.l.Slots != 0 && n.slots+need.slots > float64(lim) {
				return c.limitWhy(ls, &b.vals, "slots", n.slots, float64(lim))
			}
			if lim := max(ls.l.Jobs, 0); ls.l.Jobs != 0 && n.jobs+need.jobs > lim {
				return c.limitWhy(ls, &b.vals, "jobs", float64(n.jobs), float64(lim))
			}
		}
		for _, r := range sortedKeys(ls.l.Resources) {
			if lim := ls.l.Resources[r]; need.res[r] > 0 && n.res[r]+need.res[r] > lim+1e-9 {
				return c.limitWhy(ls, &b.vals, r, n.res[r], lim)
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// limitReason is LSF's pending reason for a limit of this scope reached
// on what ("slots", "jobs", "mem", a resource).
func limitReason(s scope, what string) string {
	if what == "jobs" {
		return [...]string{
			scopeCluster: "JOBS limit defined cluster-wide has been reached",
			scopeUser:    "JOBS limit defined for the user or user group has been reached",
			scopeQueue:   "JOBS limit defined for the queue has been reached",
			scopeProject: "JOBS limit defined for the project has been reached",
			scopeHost:    "JOBS limit defined on host or host group has been reached",
		}[s]
	}
	if what == "slots" {
		what = "slot"
	}
	return fmt.Sprintf([...]string{
		scopeCluster: "Resource (%s) limit defined cluster-wide has been reached",
		scopeUser:    "Resource (%s) limit defined on user or user group has been reached",
		scopeQueue:   "Resource (%s) limit defined on queue has been reached",
		scopeProject: "Resource (%s) limit defined on project has been reached",
		scopeHost:    "Resource (%s) limit defined on host and/or host group has been reached",
	}[s], what)
}

func (c *cycle) limitWhy(ls *limitState, v *consumers, what string, used, lim float64) []string {
	l := ls.l
	first := limitReason(ls.scope, what)
	if what == "slots" && l.Per == PerUser && len(l.Queues) == 0 && len(l.Projects) == 0 {
		first = reasonUserLimit // a user's MAX_JOBS
	}
	var who []string
	for k, word := range [nKinds]string{"user ", "queue ", "project ", "application ", "licence project "} {
		if ls.per[k] {
			who = append(who, word+v[k])
		}
	}
	if len(who) == 0 {
		who = []string{"its consumers"}
	}
	return []string{first, fmt.Sprintf("limit %s: %s %s of %s in use by %s", l.Name, num(used), what, num(lim), strings.Join(who, ", "))}
}

// LimitUse is what running jobs hold of one limit, or of one member of
// its per lists: one row of blimits.
type LimitUse struct {
	Limit int // index in Snapshot.Limits
	// The consumer: the member for a per kind, else "" (the limit's
	// list, or none).
	User, Queue, Project, App, LicProject, Host string
	Slots                                       float64
	Jobs                                        int
	Res                                         map[string]float64
	// SlotLimit and ResLimit are the limit's ceilings for this row
	// (SLOTS_PER_PROCESSOR and percentages made absolute on a host).
	SlotLimit int
	ResLimit  map[string]float64
}

// LimitUsage counts what the snapshot's running jobs hold of each limit,
// as a scheduling cycle does, one LimitUse per limit and member that
// holds something, in the order of Snapshot.Limits, then by member.
func LimitUsage(s *Snapshot) []LimitUse {
	c := newCycle(&Snapshot{Now: s.Now, Schema: s.Schema, Hosts: s.Hosts, HostGroups: s.HostGroups,
		UserGroups: s.UserGroups, Queues: s.Queues, Limits: s.Limits, Shared: s.Shared, Running: s.Running}, nil)
	var out []LimitUse
	for i, ls := range c.limits {
		for _, k := range slices.Sorted(maps.Keys(ls.used)) {
			n := ls.used[k]
			if n.slots == 0 && n.jobs == 0 && len(n.res) == 0 {
				continue
			}
			u := LimitUse{Limit: i, User: n.vals[kUser], Queue: n.vals[kQueue], Project: n.vals[kProject],
				App: n.vals[kApp], LicProject: n.vals[kLic], Host: n.host,
				Slots: n.slots, Jobs: n.jobs, Res: n.res, SlotLimit: ls.l.Slots, ResLimit: ls.l.Resources}
			if h, ok := c.byName[n.host]; ok && ls.perHost {
				u.SlotLimit, u.ResLimit = c.hostLimits(ls, h)
			}
			out = append(out, u)
		}
	}
	return out
}
