package controller

// Job groups (LSF's bgadd, bgdel, bgmod, bjgroup). A group exists
// explicitly, made by bgadd (which makes its missing parents too) and kept
// in the store under m/jgroup/<path>, replicated under HA as every store
// write is; or implicitly, while a job the controller knows names it or a
// group below it (bsub -g, bmod -g). bgmod on an implicit group makes it
// explicit (it keeps its implicit mark), so that its limit is kept. bgdel
// removes a group and its subgroups once none of their jobs is
// unfinished; the finished jobs the controller still knows would keep an
// implicit group alive, so a deletion also stores the highest job ID the
// controller had given (m/jgroupdel/<path>): the jobs up to it no longer
// make or count in the group or its subgroups. The limits (-L) are
// decided in lib/sched (jobgroup.go); the snapshot carries them. A
// group's gang size and -gang_fail (bgadd -gang) are kept with it the
// same way; gang.go dispatches and keeps the gangs together.

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/sched"
)

const (
	jgroupPrefix    = "jgroup/"
	jgroupDelPrefix = "jgroupdel/"
)

// jobGroups is the controller's explicit job groups and deletion marks.
type jobGroups struct {
	groups map[string]*api.JobGroupInfo // by path
	del    map[string]int64             // by path: the jobs up to this ID are gone from it
}

// restoreJobGroups reads the job groups from the store.
func (c *Controller) restoreJobGroups() error {
	c.jgroups = jobGroups{groups: map[string]*api.JobGroupInfo{}, del: map[string]int64{}}
	m, err := c.store.Meta(jgroupPrefix)
	if err != nil {
		return fmt.Errorf("read the job groups: %w", err)
	}
	for _, v := range m {
		g := &api.JobGroupInfo{}
		if err := proto.Unmarshal(v, g); err != nil {
			slog.Warn("ignoring an unreadable job group", "err", err)
			continue
		}
		c.jgroups.groups[g.Path] = g
	}
	m, err = c.store.Meta(jgroupDelPrefix)
	if err != nil {
		return fmt.Errorf("read the job group deletions: %w", err)
	}
	for k, v := range m {
		id, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			slog.Warn("ignoring an unreadable job group deletion", "key", k, "err", err)
			continue
		}
		c.jgroups.del[strings.TrimPrefix(k, jgroupDelPrefix)] = id
	}
	return nil
}

// CheckGroupPath checks a job group path as bgadd, bgdel and bgmod take
// it: a full path from the root ("/a/b"), not the root itself, with
// names of letters, digits and "_-." (LSF allows no others in job
// dependency expressions). It returns the path as LSF writes it.
func CheckGroupPath(p string) (string, error) {
	if !strings.HasPrefix(strings.TrimSpace(p), "/") {
		return "", fmt.Errorf("%s: Job group name must be a full path starting with /", p)
	}
	g := api.JobGroupPath(p)
	if g == "/" {
		return "", fmt.Errorf("%s: The root job group cannot be changed", p)
	}
	for _, part := range strings.Split(g[1:], "/") {
		for _, r := range part {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
				return "", fmt.Errorf("%s: Bad job group name", p)
			}
		}
	}
	return g, nil
}

// groupUp is the group above g ("" above a top-level group).
func groupUp(g string) string {
	i := strings.LastIndexByte(g, '/')
	if i <= 0 {
		return ""
	}
	return g[:i]
}

// underGroup reports whether g is p or below it.
func underGroup(g, p string) bool {
	return g == p || strings.HasPrefix(g, p+"/")
}

// jobGroupRows is every job group, explicit or implicit, with its jobs by
// state, its subgroups' included (c.mu held).
func (c *Controller) jobGroupRows() map[string]*api.JobGroupInfo {
	rows := map[string]*api.JobGroupInfo{}
	for p, g := range c.jgroups.groups {
		rows[p] = proto.Clone(g).(*api.JobGroupInfo)
	}
	first := map[string]int64{}
	var chain []string
	for _, r := range c.jobs {
		g := api.JobGroupPath(r.eff.GetJobGroup())
		if g == "" || g == "/" {
			continue
		}
		chain = chain[:0]
		for p := g; p != ""; p = groupUp(p) {
			chain = append(chain, p)
		}
		// Top down: once a deletion hides the job, it is gone below too.
		for i := len(chain) - 1; i >= 0; i-- {
			p := chain[i]
			if r.job.JobId <= c.jgroups.del[p] {
				break
			}
			row := rows[p]
			if row == nil {
				row = &api.JobGroupInfo{Path: p, Implicit: true}
				rows[p] = row
			}
			countJob(row, r.job.State)
			if row.Implicit && c.jgroups.groups[p] == nil {
				if t, seen := first[p]; !seen || r.job.SubmitTime < t {
					first[p], row.Owner = r.job.SubmitTime, r.eff.GetUser()
				}
			}
		}
	}
	return rows
}

func countJob(row *api.JobGroupInfo, s api.JobState) {
	row.Njobs++
	switch s {
	case api.JobState_PEND, api.JobState_PSUSP:
		row.Pend++
	case api.JobState_RUN, api.JobState_UNKWN:
		row.Run++
	case api.JobState_SSUSP:
		row.Ssusp++
	case api.JobState_USUSP:
		row.Ususp++
	case api.JobState_DONE, api.JobState_EXIT:
		row.Finish++
	}
}

func unfinished(row *api.JobGroupInfo) int32 { return row.Njobs - row.Finish }

// JobGroups serves bgadd, bgdel, bgmod and bjgroup's list.
func (c *Controller) JobGroups(who Caller, req *api.JobGroupRequest) *api.JobGroupReply {
	c.mu.Lock()
	defer c.mu.Unlock()
	fail := func(format string, a ...any) *api.JobGroupReply {
		return &api.JobGroupReply{Errors: []string{fmt.Sprintf(format, a...)}}
	}
	if req.Op == api.JobGroupRequest_LIST {
		rows := c.jobGroupRows()
		out := &api.JobGroupReply{}
		for _, p := range slices.Sorted(maps.Keys(rows)) {
			out.Groups = append(out.Groups, rows[p])
		}
		return out
	}
	if req.Op == api.JobGroupRequest_DELETE && (req.Path == "" || req.Path == "0") {
		return c.delEmptyGroups(who, req.User)
	}
	path, err := CheckGroupPath(req.Path)
	if err != nil {
		return fail("%v", err)
	}
	if req.Limited && req.Limit < 0 {
		return fail("%d: The job group limit must be a number from 0 to 2147483647", req.Limit)
	}
	if req.GangFail != "" && req.GangFail != "requeue" && req.GangFail != gangKill {
		return fail("%s: -gang_fail takes requeue or kill", req.GangFail)
	}
	if req.GangSet && req.Gang < 0 {
		return fail("%d: The gang size must be a number from 0 to 2147483647", req.Gang)
	}
	switch req.Op {
	case api.JobGroupRequest_ADD:
		return c.addGroup(who, path, req)
	case api.JobGroupRequest_MODIFY:
		return c.modGroup(who, path, req)
	case api.JobGroupRequest_DELETE:
		return c.delGroup(who, path)
	}
	return fail("Unknown job group operation %v", req.Op)
}

// mayChange reports whether the caller may modify or delete group path:
// administrators, and the owner of the group or of a group above it, as
// in LSF.
func (c *Controller) mayChange(who Caller, rows map[string]*api.JobGroupInfo, path string) bool {
	if c.isAdmin(who.UID) {
		return true
	}
	name, _ := lookupUser(who.UID)
	for p := path; p != ""; p = groupUp(p) {
		if r := rows[p]; r != nil && r.Owner == name {
			return true
		}
	}
	return false
}

// limitFits checks a new limit against the groups above and below path:
// LSF keeps a group's limit at most its parents' and at least its
// subgroups'.
func (c *Controller) limitFits(path string, limit int32) error {
	for p, g := range c.jgroups.groups {
		if !g.Limited || p == path {
			continue
		}
		if underGroup(path, p) && limit > g.Limit {
			return fmt.Errorf("The job group limit %d is greater than the limit %d of its parent job group <%s>", limit, g.Limit, p)
		}
		if underGroup(p, path) && limit < g.Limit {
			return fmt.Errorf("The job group limit %d is less than the limit %d of its subgroup <%s>", limit, g.Limit, p)
		}
	}
	return nil
}

// saveGroups writes the groups (nil values: deleted) and deletion marks
// in one store batch, then applies them (c.mu held).
func (c *Controller) saveGroups(groups map[string]*api.JobGroupInfo, dels map[string]int64) error {
	kv := map[string][]byte{}
	for p, g := range groups {
		if g == nil {
			kv[jgroupPrefix+p] = nil
			continue
		}
		b, err := proto.Marshal(g)
		if err != nil {
			return err
		}
		kv[jgroupPrefix+p] = b
	}
	for p, id := range dels {
		kv[jgroupDelPrefix+p] = []byte(strconv.FormatInt(id, 10))
	}
	if err := c.store.SetMetas(kv); err != nil {
		return fmt.Errorf("save job groups: %w", err)
	}
	for p, g := range groups {
		if g == nil {
			delete(c.jgroups.groups, p)
		} else {
			c.jgroups.groups[p] = g
		}
	}
	maps.Copy(c.jgroups.del, dels)
	return nil
}

// addGroup is bgadd: the group and its missing parents; the limit is the
// new group's only.
func (c *Controller) addGroup(who Caller, path string, req *api.JobGroupRequest) *api.JobGroupReply {
	rows := c.jobGroupRows()
	if rows[path] != nil {
		return &api.JobGroupReply{Errors: []string{fmt.Sprintf("Job group <%s> already exists", path)}}
	}
	if req.Limited {
		if err := c.limitFits(path, req.Limit); err != nil {
			return &api.JobGroupReply{Errors: []string{err.Error()}}
		}
	}
	owner, _ := lookupUser(who.UID)
	now := time.Now().Unix()
	add := map[string]*api.JobGroupInfo{}
	for p := path; p != "" && rows[p] == nil; p = groupUp(p) {
		add[p] = &api.JobGroupInfo{Path: p, Owner: owner, Created: now}
	}
	add[path].Limited, add[path].Limit = req.Limited, req.Limit
	add[path].Gang, add[path].GangFail = gangSize(req.Gang), req.GangFail
	if err := c.saveGroups(add, nil); err != nil {
		return &api.JobGroupReply{Errors: []string{err.Error()}}
	}
	return &api.JobGroupReply{Messages: []string{fmt.Sprintf("Job group <%s> was added.", path)}}
}

// modGroup is bgmod -L limit and -Ln.
func (c *Controller) modGroup(who Caller, path string, req *api.JobGroupRequest) *api.JobGroupReply {
	rows := c.jobGroupRows()
	row := rows[path]
	switch {
	case row == nil:
		return &api.JobGroupReply{Errors: []string{fmt.Sprintf("%s: Job group does not exist", path)}}
	case !c.mayChange(who, rows, path):
		return &api.JobGroupReply{Errors: []string{errPermission}}
	}
	if req.Limited {
		if err := c.limitFits(path, req.Limit); err != nil {
			return &api.JobGroupReply{Errors: []string{err.Error()}}
		}
	}
	g := c.jgroups.groups[path]
	if g == nil {
		g = &api.JobGroupInfo{Path: path, Owner: row.Owner, Implicit: true, Created: time.Now().Unix()}
	} else {
		g = proto.Clone(g).(*api.JobGroupInfo)
	}
	if req.LimitSet || !req.GangSet && req.GangFail == "" {
		// Without limit_set, an older bgmod: no -L is -Ln.
		g.Limited, g.Limit = req.Limited, req.Limit
		if !req.Limited {
			g.Limit = 0
		}
	}
	if req.GangSet {
		g.Gang = gangSize(req.Gang)
	}
	if req.GangFail != "" {
		g.GangFail = req.GangFail
	}
	if err := c.saveGroups(map[string]*api.JobGroupInfo{path: g}, nil); err != nil {
		return &api.JobGroupReply{Errors: []string{err.Error()}}
	}
	return &api.JobGroupReply{Messages: []string{fmt.Sprintf("Job group %s is modified.", path)}}
}

// delGroup is bgdel: the group and its subgroups, once none of their jobs
// is unfinished.
func (c *Controller) delGroup(who Caller, path string) *api.JobGroupReply {
	rows := c.jobGroupRows()
	row := rows[path]
	switch {
	case row == nil:
		return &api.JobGroupReply{Errors: []string{fmt.Sprintf("%s: Job group does not exist", path)}}
	case !c.mayChange(who, rows, path):
		return &api.JobGroupReply{Errors: []string{errPermission}}
	case unfinished(row) > 0:
		return &api.JobGroupReply{Errors: []string{fmt.Sprintf("Job group <%s> has unfinished jobs: it cannot be deleted", path)}}
	}
	if err := c.removeGroups(path); err != nil {
		return &api.JobGroupReply{Errors: []string{err.Error()}}
	}
	return &api.JobGroupReply{Messages: []string{fmt.Sprintf("Job group %s is deleted.", path)}}
}

// removeGroups deletes path and its subgroups, and marks the jobs known
// now as gone from them (c.mu held).
func (c *Controller) removeGroups(path string) error {
	var top int64
	for _, r := range c.jobs {
		top = max(top, r.job.JobId)
	}
	gone := map[string]*api.JobGroupInfo{}
	for p := range c.jgroups.groups {
		if underGroup(p, path) {
			gone[p] = nil
		}
	}
	return c.saveGroups(gone, map[string]int64{path: top})
}

// delEmptyGroups is bgdel 0 and bgdel -u user|all: the empty groups (no
// unfinished job) of the caller, of user, or of everyone; another user's
// or everyone's for administrators only.
func (c *Controller) delEmptyGroups(who Caller, user string) *api.JobGroupReply {
	me, _ := lookupUser(who.UID)
	if user == "" {
		user = me
	}
	if user != me && !c.isAdmin(who.UID) {
		return &api.JobGroupReply{Errors: []string{errPermission}}
	}
	rows := c.jobGroupRows()
	reply := &api.JobGroupReply{}
	var done []string
	for _, p := range slices.Sorted(maps.Keys(rows)) { // parents first
		row := rows[p]
		if unfinished(row) > 0 || user != "all" && row.Owner != user ||
			slices.ContainsFunc(done, func(d string) bool { return underGroup(p, d) }) {
			continue
		}
		if err := c.removeGroups(p); err != nil {
			reply.Errors = append(reply.Errors, err.Error())
			continue
		}
		done = append(done, p)
		reply.Messages = append(reply.Messages, fmt.Sprintf("Job group %s is deleted.", p))
	}
	if len(done) == 0 && len(reply.Errors) == 0 {
		reply.Errors = append(reply.Errors, "No job group found")
	}
	return reply
}

// snapJobGroups gives a snapshot the groups' limits and, when there are
// any, its jobs' groups (c.mu held).
func (c *Controller) snapJobGroups(snap *sched.Snapshot) {
	for p, g := range c.jgroups.groups {
		if g.Limited {
			snap.JobGroupLimits = append(snap.JobGroupLimits, sched.JobGroupLimit{Path: p, Limit: int(g.Limit)})
		}
	}
	c.snapGangs(snap) // gang.go
	if len(snap.JobGroupLimits) == 0 && len(snap.GangGroups) == 0 {
		return
	}
	group := func(k sched.JobKey) string {
		if r := c.jobs[key{k.ID, k.Index}]; r != nil {
			return api.JobGroupPath(r.eff.GetJobGroup())
		}
		return ""
	}
	for i := range snap.Jobs {
		snap.Jobs[i].JobGroup = group(snap.Jobs[i].Key)
	}
	for i := range snap.Running {
		snap.Running[i].JobGroup = group(snap.Running[i].Job)
	}
}
