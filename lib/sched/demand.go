package sched

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Template is a kind of host a provider can supply, as the scheduler sees
// it: after the real hosts of a cycle fail a job, its instances are tried
// as virtual hosts, and what only they could take becomes demand.
type Template struct {
	Name string
	// Host is what every instance looks like: MaxSlots, Values (type,
	// model, ncpus, maxmem and mem, the template's resources) and GPUs.
	// Its Name and Status are not read.
	Host Host
	// Booting counts the instances requested or booting that have not
	// joined yet: demand is net of them.
	Booting int
	// Free is how many more instances may be requested: max less every
	// instance that exists (joined, booting or requested).
	Free int
	// Queues are the queues whose rc_hosts allow the template.
	Queues []string
}

// Demand is what the jobs a cycle left pending need of the templates.
type Demand struct {
	// Hosts is, per template, how many new instances to request (never
	// more than its Free); templates that need none are absent.
	Hosts map[string]int
	// Jobs names, for each pending job a template could take, the
	// template it would run on (its first host's).
	Jobs map[JobKey]string
}

// virtualSep joins a template's name and an instance number into a
// virtual host's name; no real host name has it.
const virtualSep = "#"

// ComputeDemand tries the jobs that the decision d of snapshot s left
// pending on the templates' instances as virtual hosts, in a second
// cycle over the same queues, limits and shared resources (charged with
// the running jobs and d's placements), and counts the instances the jobs
// placed there need. A job is tried only in queues some template allows,
// and only if its -m (when it has one) names "all" or the template;
// select[], span[], -n, GPUs and exclusivity apply as on real hosts.
// Demand per template is the instances used less those booting, at most
// Free. The snapshot and decision are not modified.
func ComputeDemand(s *Snapshot, d *Decision, templates []Template) *Demand {
	out := &Demand{Hosts: map[string]int{}, Jobs: map[JobKey]string{}}
	allowed := map[string][]string{} // queue -> template names
	vs := &Snapshot{Now: s.Now, Schema: s.Schema, UserGroups: s.UserGroups, Limits: s.Limits,
		Shared: s.Shared, NoReasons: true, HostGroups: map[string][]string{}}
	byName := map[string]*Template{}
	for i := range templates {
		t := &templates[i]
		n := t.Booting + max(0, t.Free)
		if n <= 0 || len(t.Queues) == 0 {
			continue
		}
		byName[t.Name] = t
		var members []string
		for k := range n {
			h := t.Host
			h.Name = t.Name + virtualSep + strconv.Itoa(k)
			h.Status = HostOK
			vs.Hosts = append(vs.Hosts, h)
			members = append(members, h.Name)
		}
		vs.HostGroups[t.Name] = members
		for _, q := range t.Queues {
			allowed[q] = append(allowed[q], t.Name)
		}
	}
	if len(vs.Hosts) == 0 {
		return out
	}
	for _, q := range s.Queues {
		if names := allowed[q.Name]; len(names) > 0 {
			q.Hosts = names
			vs.Queues = append(vs.Queues, q)
		}
	}
	placed := make(map[JobKey]bool, len(d.Placements))
	for _, p := range d.Placements {
		placed[p.Job] = true
	}
	jobs := make(map[JobKey]*Job, len(d.Placements))
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if placed[j.Key] {
			jobs[j.Key] = j
			continue
		}
		names := allowed[j.Queue]
		if len(names) == 0 {
			continue
		}
		if len(j.Hosts) > 0 {
			var keep []string
			for _, h := range j.Hosts {
				h, _, _ = strings.Cut(h, "+") // a preference
				if h == "all" {
					keep = names
					break
				}
				if slices.Contains(names, h) {
					keep = append(keep, h)
				}
			}
			if len(keep) == 0 {
				continue // -m names only real hosts
			}
			jc := *j
			jc.Hosts = keep
			vs.Jobs = append(vs.Jobs, jc)
			continue
		}
		vs.Jobs = append(vs.Jobs, *j)
	}
	if len(vs.Jobs) == 0 {
		return out
	}
	// What runs and what this cycle starts counts against the limits and
	// shared resources the virtual cycle checks.
	vs.Running = append(slices.Clip(s.Running), make([]Alloc, 0, len(d.Placements))...)
	for _, p := range d.Placements {
		j := jobs[p.Job]
		if j == nil {
			continue
		}
		vs.Running = append(vs.Running, Alloc{Job: j.Key, User: j.User, Queue: j.Queue, Project: j.Project,
			App: j.App, LicProject: j.LicProject, Account: j.Account, Start: s.Now, RunLimit: j.RunLimit,
			Exclusive: j.Exclusive, Hosts: p.Hosts})
	}
	vd := Schedule(vs)
	used := map[string]map[string]bool{} // template -> virtual hosts used
	for _, p := range vd.Placements {
		for i, ha := range p.Hosts {
			name, _, _ := strings.Cut(ha.Host, virtualSep)
			if i == 0 {
				out.Jobs[p.Job] = name
			}
			if used[name] == nil {
				used[name] = map[string]bool{}
			}
			used[name][ha.Host] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(used)) {
		t := byName[name]
		if n := min(len(used[name])-t.Booting, max(0, t.Free)); n > 0 {
			out.Hosts[name] = n
		}
	}
	return out
}
