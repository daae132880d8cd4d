package controller

import (
	"slices"
	"strconv"
	"strings"

	"xce/lib/api"
	"xce/lib/config"
)

// jobFilter is the job selection that bjobs, bkill, bstop and bresume
// share: -u, -q, -P, -app, -m, -J, -Jd, -g, -G and bkill's -stat. One is
// compiled per request (a host group expands once) and applied to each
// job under c.mu.
type jobFilter struct {
	user      string // -u: "" the caller's jobs, "all", or a user
	queue     string
	project   string
	app       string
	hosts     map[string]bool // -m: a host, or a host group's members; nil = any
	name      string          // -J, '*' anywhere, an optional "[index]"
	desc      string          // -Jd, '*' anywhere
	group     string          // -g, a cleaned job group path
	subgroups bool            // -g also selects the group's subgroups (bjobs)
	userGroup string          // -G
	states    []api.JobState  // bkill -stat (run RUN, pend PEND, susp USUSP SSUSP PSUSP); empty = any
}

// newJobFilter compiles the filters of a request; -m names a host or a
// configured host group.
func newJobFilter(conf *config.Config, host string) jobFilter {
	var f jobFilter
	if host != "" {
		f.hosts = map[string]bool{host: true}
		if conf != nil && conf.HostGroups[host] != nil {
			f.hosts = map[string]bool{}
			for _, h := range conf.ExpandHosts([]string{host}) {
				f.hosts[h] = true
			}
		}
	}
	return f
}

// queryFilter is bjobs's selection: -g takes the group's subgroups too.
func queryFilter(conf *config.Config, req *api.QueryRequest) jobFilter {
	f := newJobFilter(conf, req.Host)
	f.user, f.queue, f.project, f.app = req.User, req.Queue, req.Project, req.App
	f.name, f.desc, f.userGroup = req.Name, req.Description, req.UserGroup
	f.group, f.subgroups = api.JobGroupPath(req.JobGroup), true
	return f
}

// signalFilter is the selection of bkill, bstop and bresume: -g takes only
// the group itself, as LSF's bkill does.
func signalFilter(conf *config.Config, req *api.SignalRequest) jobFilter {
	f := newJobFilter(conf, req.Host)
	f.user, f.queue, f.app, f.name = req.User, req.Queue, req.App, req.Name
	f.group = api.JobGroupPath(req.JobGroup)
	f.states = req.States
	return f
}

// match applies the filter to a job (c.mu held). A job named by id is
// selected whoever owns it: the user filter applies to listings only.
func (f *jobFilter) match(who Caller, r *rec, named bool) bool {
	if !named && !userMatches(who, f.user, r) {
		return false
	}
	if f.queue != "" && r.eff.GetQueue() != f.queue {
		return false
	}
	if f.project != "" && r.eff.GetProject() != f.project {
		return false
	}
	if f.app != "" && r.eff.GetApp() != f.app {
		return false
	}
	if f.hosts != nil {
		on := false
		for _, h := range r.job.ExecHosts {
			on = on || f.hosts[h.Host]
		}
		if !on {
			return false
		}
	}
	if f.name != "" && !nameMatches(f.name, r) {
		return false
	}
	if f.desc != "" && !wildcardMatch(f.desc, r.eff.GetDescription()) {
		return false
	}
	if f.group != "" && !inGroup(r.eff.GetJobGroup(), f.group, f.subgroups) {
		return false
	}
	if f.userGroup != "" && r.eff.GetUserGroup() != f.userGroup {
		return false
	}
	if len(f.states) > 0 && !slices.Contains(f.states, r.job.State) {
		return false
	}
	return true
}

// nameMatches applies -J to a job's name (its command when it has none):
// '*' matches anything; "pattern[N]" selects element N of the arrays whose
// name matches pattern (a '*' inside the brackets matches nothing, as in
// LSF).
func nameMatches(pattern string, r *rec) bool {
	name := r.eff.GetJobName()
	if name == "" {
		name = r.eff.GetCommand()
	}
	return namePatternMatches(pattern, name, r.job.ArrayIndex)
}

// namePatternMatches applies -J to the name of a job or of array element
// index.
func namePatternMatches(pattern, name string, index int32) bool {
	if base, idx, ok := strings.Cut(pattern, "["); ok && strings.HasSuffix(idx, "]") {
		n, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
		if err == nil && n > 0 {
			return index == int32(n) && wildcardMatch(base, name)
		}
	}
	return wildcardMatch(pattern, name)
}

// wildcardMatch matches s against pattern, in which each '*' stands for any
// run of characters (none included) and every other character for itself.
func wildcardMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return s == pattern
	}
	first, last := parts[0], parts[len(parts)-1]
	if !strings.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}

// inGroup reports whether a job in group jg belongs to group g (both
// cleaned): the group itself, and with subgroups every group under it.
func inGroup(jg, g string, subgroups bool) bool {
	switch {
	case jg == "":
		return false
	case jg == g:
		return true
	case !subgroups:
		return false
	case g == "/":
		return true
	}
	return strings.HasPrefix(jg, g+"/")
}
