package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/client"
	"xce/lib/lsfout"
)

// bhist shows jobs' histories from their event logs.
//
// Which jobs: by default the caller's unfinished ones; -a all of them;
// -d finished, -e exited, -p pending, -r running, -s suspended (these
// add up; -a overrides them); job IDs name jobs in any state. -C keeps
// jobs that completed in a time range (and so selects finished jobs),
// -S those submitted in one, -D those dispatched in one. -u, -G, -q, -J,
// -Jd, -P, -app, -m and -g filter as in bjobs.
func bhist(args []string) int {
	var o histOpts
	var ids []string
	cmd, code := newCommand("bhist [-a] [-b] [-d] [-e] [-p] [-r] [-s] [-l | -UF] [-w] [-C start,end] [-D start,end] [-S start,end] [-J job_name] [-Jd description] [-m host_name ...] [-P project] [-q queue] [-app profile] [-g job_group] [-u user_name | -u all | -G user_group] [job_ID | \"job_ID[index]\" ...]",
		"Show the history of jobs", func(a []string) int {
			ids = a
			return 0
		})
	f := cmd.Flags()
	f.BoolVar(&o.all, "a", false, "finished and unfinished jobs")
	f.BoolVar(&o.brief, "b", false, "brief format: every event, in short")
	f.BoolVar(&o.done, "d", false, "only finished jobs")
	f.BoolVar(&o.exited, "e", false, "only jobs that exited")
	f.BoolVar(&o.pend, "p", false, "only pending jobs")
	f.BoolVar(&o.run, "r", false, "only running jobs")
	f.BoolVar(&o.susp, "s", false, "only suspended jobs")
	f.BoolVar(&o.long, "l", false, "long format: every event")
	f.BoolVar(&o.uf, "UF", false, "long format without line wrapping")
	f.BoolVar(&o.wide, "w", false, "wide format: names not cut")
	f.StringVar(&o.completed, "C", "", "jobs that completed or exited in the `start,end` time range")
	f.StringVar(&o.dispatched, "D", "", "jobs dispatched in the `start,end` time range")
	f.StringVar(&o.submitted, "S", "", "jobs submitted in the `start,end` time range")
	f.StringVar(&o.user, "u", "", "jobs of this user, or all")
	f.StringVar(&o.ugroup, "G", "", "jobs of the users of `user_group`")
	f.StringVar(&o.queue, "q", "", "jobs in this queue")
	f.StringVar(&o.name, "J", "", "jobs with this name ('*' matches any text)")
	f.StringVar(&o.desc, "Jd", "", "jobs with this `description` ('*' matches any text)")
	f.StringVar(&o.hosts, "m", "", "jobs that ran on these hosts or host groups")
	f.StringVar(&o.project, "P", "", "jobs of this project")
	f.StringVar(&o.app, "app", "", "jobs of this application profile")
	f.StringVar(&o.jgroup, "g", "", "jobs in `job_group` and its subgroups")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	now := time.Now()
	for _, w := range []struct {
		spec string
		r    **timeRange
	}{{o.completed, &o.cRange}, {o.dispatched, &o.dRange}, {o.submitted, &o.sRange}} {
		if w.spec == "" {
			continue
		}
		r, err := parseTimeRange(w.spec, now)
		if err != nil {
			fmt.Fprintf(sys.stderr, "%s: %v\n", w.spec, err)
			return 255
		}
		*w.r = &r
	}
	refs, err := parseJobIDs(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	c, cx, closeConn, ok := connect()
	if !ok {
		return 255
	}
	defer closeConn()
	o.states = o.wantedStates(len(refs) > 0)
	req := &api.QueryRequest{Refs: refs, User: o.user, Queue: o.queue, Name: o.name, Project: o.project, App: o.app,
		Submitted: true, Scope: api.QueryRequest_ALL}
	if o.ugroup != "" && o.user == "" {
		req.User = "all"
	}
	if o.states != nil && !o.states[api.JobState_DONE] && !o.states[api.JobState_EXIT] {
		req.Scope = api.QueryRequest_UNFINISHED
	}
	if o.ugroup != "" || o.hosts != "" {
		info, err := c.Info(cx, &api.ClusterInfoRequest{})
		if err != nil {
			fmt.Fprintln(sys.stderr, rpcError(c, err))
			return 255
		}
		if o.ugroup != "" {
			if o.members = groupMembers(info.UserGroups, o.ugroup); o.members == nil {
				fmt.Fprintf(sys.stderr, "%s: Bad user group name\n", o.ugroup)
				return 255
			}
		}
		if o.hosts != "" {
			o.hostSet = map[string]bool{}
			for _, h := range strings.Fields(o.hosts) {
				if m := groupMembers(info.HostGroups, h); m != nil {
					for x := range m {
						o.hostSet[x] = true
					}
					continue
				}
				o.hostSet[h] = true
			}
		}
	}
	res, err := c.Query(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	var jobs []*api.Job
	var evRefs []*api.JobRef
	for _, j := range res.Jobs {
		if o.keep(j) {
			jobs = append(jobs, j)
			evRefs = append(evRefs, &api.JobRef{JobId: j.JobId, ArrayIndex: j.ArrayIndex})
		}
	}
	byJob := map[string][]*api.Event{}
	if len(jobs) > 0 {
		evs, err := c.Events(cx, &api.EventsRequest{Refs: evRefs})
		if err != nil {
			fmt.Fprintln(sys.stderr, rpcError(c, err))
			return 255
		}
		for _, ev := range evs.Events {
			k := lsfout.JobIDString(&api.Job{JobId: ev.JobId, ArrayIndex: ev.ArrayIndex})
			byJob[k] = append(byJob[k], ev)
		}
	}
	if o.dRange != nil {
		kept := jobs[:0]
		for _, j := range jobs {
			if dispatchedIn(j, byJob[lsfout.JobIDString(j)], *o.dRange) {
				kept = append(kept, j)
			}
		}
		jobs = kept
	}
	if len(jobs) == 0 {
		fmt.Fprintln(sys.stderr, "No matching job found")
		return 255
	}
	opt := lsfout.JobsOptions{Unformatted: o.uf, Wide: o.wide, Now: now}
	switch {
	case o.long || o.uf:
		err = lsfout.WriteHistoryLong(sys.stdout, jobs, byJob, opt)
	case o.brief:
		err = lsfout.WriteHistoryBrief(sys.stdout, jobs, byJob, opt)
	default:
		err = lsfout.WriteHistory(sys.stdout, jobs, byJob, opt)
	}
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return 0
}

// histOpts are bhist's options, and what they select once read.
type histOpts struct {
	all, brief, done, exited, pend, run, susp, long, uf, wide bool
	completed, dispatched, submitted                          string
	user, ugroup, queue, name, desc, hosts, project, app      string
	jgroup                                                    string

	cRange, dRange, sRange *timeRange
	states                 map[api.JobState]bool // nil: any state
	members                map[string]bool       // -G: the group's users (nil: no -G; "all": anyone)
	hostSet                map[string]bool       // -m: the hosts, groups expanded
}

// wantedStates is the set of states the state options select; nil for
// every state (-a, or job IDs without a state option).
func (o *histOpts) wantedStates(named bool) map[api.JobState]bool {
	if o.all {
		return nil
	}
	set := map[api.JobState]bool{}
	add := func(on bool, ss ...api.JobState) {
		if on {
			for _, s := range ss {
				set[s] = true
			}
		}
	}
	add(o.done, api.JobState_DONE, api.JobState_EXIT)
	add(o.exited, api.JobState_EXIT)
	add(o.pend, api.JobState_PEND, api.JobState_PSUSP)
	add(o.run, api.JobState_RUN)
	add(o.susp, api.JobState_PSUSP, api.JobState_USUSP, api.JobState_SSUSP)
	switch {
	case len(set) > 0:
		return set
	case o.cRange != nil:
		// A job completed in a range has finished.
		add(true, api.JobState_DONE, api.JobState_EXIT)
		return set
	case named:
		return nil
	}
	add(true, api.JobState_PEND, api.JobState_PSUSP, api.JobState_RUN, api.JobState_USUSP, api.JobState_SSUSP, api.JobState_UNKWN)
	return set
}

// keep applies the filters the controller does not: states, time ranges
// (but -D, which needs the events), -G, -Jd, -g and -m.
func (o *histOpts) keep(j *api.Job) bool {
	if o.states != nil && !o.states[j.State] {
		return false
	}
	eff := j.GetEffective()
	if o.members != nil && !o.members["all"] && !o.members[eff.GetUser()] {
		return false
	}
	if o.sRange != nil && !o.sRange.contains(time.Unix(0, j.SubmitTime)) {
		return false
	}
	if o.cRange != nil && (j.EndTime == 0 || !o.cRange.contains(time.Unix(0, j.EndTime))) {
		return false
	}
	if o.desc != "" {
		d := eff.GetDescription()
		if ok, _ := path.Match(o.desc, d); !ok && d != o.desc {
			return false
		}
	}
	if g := o.jgroup; g != "" {
		jg := eff.GetJobGroup()
		if jg != g && !strings.HasPrefix(jg, strings.TrimSuffix(g, "/")+"/") {
			return false
		}
	}
	if o.hostSet != nil {
		on := false
		for _, h := range j.ExecHosts {
			on = on || o.hostSet[h.Host]
		}
		if !on {
			return false
		}
	}
	return true
}

// dispatchedIn says whether a job was dispatched (a START event naming
// its hosts) within r.
func dispatchedIn(j *api.Job, evs []*api.Event, r timeRange) bool {
	for _, ev := range evs {
		if ev.Type == api.EventType_START && ev.Pid == 0 && r.contains(time.Unix(0, ev.Time)) {
			return true
		}
	}
	return len(evs) == 0 && j.StartTime != 0 && r.contains(time.Unix(0, j.StartTime))
}

// groupMembers is a configured group's members, subgroups expanded; nil
// when there is no such group.
func groupMembers(groups []*api.Group, name string) map[string]bool {
	byName := map[string]*api.Group{}
	for _, g := range groups {
		byName[g.Name] = g
	}
	if byName[name] == nil {
		return nil
	}
	out := map[string]bool{}
	var walk func(n string, depth int)
	walk = func(n string, depth int) {
		g := byName[n]
		if g == nil || depth > len(groups) {
			out[n] = true
			return
		}
		for _, m := range g.Members {
			walk(m, depth+1)
		}
	}
	walk(name, 0)
	return out
}

// bpeek shows the output an unfinished job has written so far.
func bpeek(args []string) int {
	var follow bool
	var queue, name, host string
	var ids []string
	cmd, code := newCommand("bpeek [-f] [-m host_name | -q queue | -J job_name | job_ID | \"job_ID[index]\"]", "Show the output of an unfinished job", func(a []string) int {
		ids = a
		return 0
	})
	f := cmd.Flags()
	f.BoolVar(&follow, "f", false, "follow the output until the job finishes")
	f.StringVar(&host, "m", "", "the user's most recent job running on this host")
	f.StringVar(&queue, "q", "", "the user's most recent job in this queue")
	f.StringVar(&name, "J", "", "the user's most recent job with this name")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	usage := func() int {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	given := 0
	for _, s := range []string{queue, name, host} {
		if s != "" {
			given++
		}
	}
	if given > 1 || (given > 0 && len(ids) > 0) {
		fmt.Fprintln(sys.stderr, "Command syntax error: more than one of -m , -q, -J or jobId are specified.")
		return usage()
	}
	if len(ids) > 1 {
		return usage()
	}
	refs, err := parseJobIDs(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	if len(refs) > 1 {
		fmt.Fprintf(sys.stderr, "%s: Illegal job array index. One element only.\n", ids[0])
		return usage()
	}
	c, cx, closeConn, ok := connect()
	if !ok {
		return 255
	}
	defer closeConn()
	// A job named by ID is looked at whatever its state; otherwise the
	// user's most recent unfinished job (LSF's LAST_JOB).
	req := &api.QueryRequest{Refs: refs, Queue: queue, Name: name, Host: host, Scope: api.QueryRequest_UNFINISHED}
	if len(refs) > 0 {
		req.Scope = api.QueryRequest_ALL
	}
	res, err := c.Query(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	if len(res.Jobs) == 0 {
		msg := ""
		if len(refs) > 0 {
			msg = "Job <" + refString(refs[0]) + "> is not found"
		} else {
			msg, _ = nothingFound(c, cx, "No unfinished job found", false, queue, host, name)
		}
		fmt.Fprintln(sys.stderr, msg)
		return 255
	}
	if len(refs) > 0 && refs[0].ArrayIndex < 0 && (len(res.Jobs) > 1 || res.Jobs[0].ArrayIndex > 0) {
		fmt.Fprintln(sys.stderr, "bpeek: Cannot operate on job array")
		return 255
	}
	// Without a job id: the user's most recent job.
	j := res.Jobs[0]
	if len(refs) == 0 {
		for _, x := range res.Jobs {
			if x.SubmitTime > j.SubmitTime || (x.SubmitTime == j.SubmitTime && x.JobId > j.JobId) {
				j = x
			}
		}
	}
	id := lsfout.JobIDString(j)
	if uid := j.GetEffective().GetUid(); int(uid) != os.Getuid() {
		// Only the owner and the administrators may read a job's output.
		info, err := c.Info(cx, &api.ClusterInfoRequest{})
		if err != nil || (!info.CallerIsAdmin && info.Uid != uid) {
			fmt.Fprintf(sys.stderr, "Job <%s>: User permission denied\n", id)
			return 255
		}
	}
	switch j.State {
	case api.JobState_PEND, api.JobState_PSUSP:
		fmt.Fprintf(sys.stderr, "Job <%s> : Not yet started.\n", id)
		return 255
	case api.JobState_DONE, api.JobState_EXIT:
		fmt.Fprintf(sys.stderr, "Job <%s> : Already finished.\n", id)
		return 255
	}
	if j.GetEffective().GetInteractive() != api.Interactive_BATCH || j.GetSpec().GetInteractive() != api.Interactive_BATCH {
		// Its output goes to the waiting bsub, not to a file.
		fmt.Fprintf(sys.stderr, "Job <%s> : Cannot bpeek an interactive job.\n", id)
		return 255
	}
	// The worker of the job's host reads the output, wherever that is.
	var off int64
	read := func() ([]byte, error) {
		var got []byte
		for {
			pcx, cancel := connectTimeout()
			r, err := c.Peek(pcx, &rpc.PeekRequest{JobId: j.JobId, Index: j.ArrayIndex, Offset: off})
			cancel()
			if err != nil {
				return got, err
			}
			got = append(got, r.Data...)
			off += int64(len(r.Data))
			if len(r.Data) == 0 || off >= r.Size {
				return got, nil
			}
		}
	}
	first, err := read()
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	fmt.Fprintln(sys.stdout, "<< output from stdout >>")
	out := bufio.NewWriter(sys.stdout)
	defer out.Flush()
	// The job report the shepherd appends when the job ends is not output:
	// stop at its first line. A tail as long as that line is held back in
	// case it arrives in two parts.
	var held []byte
	pending := first
	copyNew := func() (ended bool) {
		b := pending
		pending = nil
		if b == nil {
			b, _ = read()
		}
		held = append(held, b...)
		if i := bytes.Index(held, []byte(reportMarker)); i >= 0 {
			out.Write(held[:i])
			held = nil
			return true
		}
		if keep := len(reportMarker) - 1; len(held) > keep {
			out.Write(held[:len(held)-keep])
			held = held[len(held)-keep:]
		}
		return false
	}
	if copyNew() || !follow {
		out.Write(held)
		return 0
	}
	// -f: keep copying until the job ends.
	for {
		out.Flush()
		time.Sleep(200 * time.Millisecond)
		if copyNew() {
			return 0
		}
		if finished(c, j) {
			copyNew()
			out.Write(held)
			return 0
		}
	}
}

// reportMarker starts the job report appended to an output file.
const reportMarker = "\n------------------------------------------------------------\nSender: LSF System"

func finished(c *client.Client, j *api.Job) bool {
	cx, cancel := connectTimeout()
	defer cancel()
	res, err := c.Query(cx, &api.QueryRequest{Refs: []*api.JobRef{{JobId: j.JobId, ArrayIndex: j.ArrayIndex}}, Scope: api.QueryRequest_ALL})
	if err != nil || len(res.Jobs) == 0 {
		return true
	}
	s := res.Jobs[0].State
	return s == api.JobState_DONE || s == api.JobState_EXIT
}
