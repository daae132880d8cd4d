package cli

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// bacct summarizes finished jobs from the controller's accounting (the
// finished jobs it holds, then their records, kept for the cluster's
// acct_retention, 30 days by default, long after bjobs has forgotten
// them): the caller's jobs by default, -u users or all, or the jobs named
// (whoever's). -q, -P and -m (each a list), -app, -J, -G, -g, -d, -e, -x
// and the -S/-D/-C time ranges select; the controller applies every
// filter and streams the records in pages, which are printed as they
// come. -b lists each job on a line, -l (-UF) in full; -w keeps -b's
// columns whole.
func bacct(args []string) int {
	var o struct {
		long, uf, brief, wide, done, exited, exceptions bool
		users, queues, projects, hosts                  string
		app, name, ugroup, jgroup                       string
		submitted, dispatched, completed                string
	}
	var ids []string
	cmd, code := newCommand("bacct [-b | -l | -UF] [-d] [-e] [-w] [-x] [-app application_profile_name] [-C time0,time1] [-D time0,time1] [-S time0,time1] [-g job_group] [-G user_group] [-J job_name] [-m \"host_name ...\"] [-P \"project_name ...\"] [-q \"queue_name ...\"] [-u \"user_name ...\" | -u all] [job_ID ...]",
		"Show accounting statistics of finished jobs", func(a []string) int {
			ids = a
			return 0
		})
	f := cmd.Flags()
	f.BoolVar(&o.long, "l", false, "long format: every job, then the summary")
	f.BoolVar(&o.uf, "UF", false, "long format without line wrapping")
	f.BoolVar(&o.brief, "b", false, "brief format: a line per job, then the summary")
	f.BoolVar(&o.wide, "w", false, "wide format: -b cuts no column")
	f.BoolVar(&o.done, "d", false, "only jobs that completed normally (DONE)")
	f.BoolVar(&o.exited, "e", false, "only jobs that exited (EXIT)")
	f.BoolVar(&o.exceptions, "x", false, "only jobs that showed an exception (overrun, underrun, idle, runtime_est_exceeded); -l shows them")
	f.StringVar(&o.users, "u", "", "jobs of these users (a quoted list), or all")
	f.StringVar(&o.queues, "q", "", "jobs in these queues (a quoted list)")
	f.StringVar(&o.projects, "P", "", "jobs of these projects (a quoted list)")
	f.StringVar(&o.hosts, "m", "", "jobs that ran on these hosts or host groups (a quoted list)")
	f.StringVar(&o.app, "app", "", "jobs of this application profile")
	f.StringVar(&o.name, "J", "", "jobs with this name ('*' matches any text)")
	f.StringVar(&o.ugroup, "G", "", "jobs submitted to `user_group` (bsub -G)")
	f.StringVar(&o.jgroup, "g", "", "jobs in `job_group` and its subgroups")
	f.StringVar(&o.completed, "C", "", "jobs that completed or exited in the `time0,time1` range")
	f.StringVar(&o.dispatched, "D", "", "jobs dispatched in the `time0,time1` range")
	f.StringVar(&o.submitted, "S", "", "jobs submitted in the `time0,time1` range")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	refs, err := parseJobIDs(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	filter := lsfout.AcctFilter{
		Queues: strings.Fields(o.queues), Projects: strings.Fields(o.projects), Hosts: strings.Fields(o.hosts),
		Done: o.done, Exited: o.exited, Exceptions: o.exceptions,
		App: o.app, Name: o.name, UserGroup: o.ugroup, JobGroup: o.jgroup,
	}
	req := &api.AcctRequest{
		Refs: refs, Queues: filter.Queues, Projects: filter.Projects, Hosts: filter.Hosts,
		App: o.app, Name: o.name, UserGroup: o.ugroup, JobGroup: o.jgroup, Exceptions: o.exceptions,
	}
	users := strings.Fields(o.users)
	switch {
	case len(users) == 1 && users[0] == "all", len(users) == 0 && len(refs) > 0:
		req.AllUsers = true
	case len(users) > 0:
		filter.Users, req.Users = users, users
	default:
		me, ok := currentUser("bacct")
		if !ok {
			return 255
		}
		filter.Users, req.Users = []string{me}, []string{me}
	}
	if o.done != o.exited {
		req.States = []api.JobState{api.JobState_DONE}
		if o.exited {
			req.States = []api.JobState{api.JobState_EXIT}
		}
	}
	now := time.Now()
	for _, w := range []struct {
		spec string
		r    **api.TimeRange
		span *lsfout.TimeSpan
	}{{o.submitted, &req.Submitted, &filter.Submitted}, {o.dispatched, &req.Dispatched, &filter.Dispatched}, {o.completed, &req.Completed, &filter.Completed}} {
		if w.spec == "" {
			continue
		}
		r, err := parseTimeRange(w.spec, now)
		if err != nil {
			fmt.Fprintf(sys.stderr, "%s: %v\n", w.spec, err)
			return 255
		}
		// The end is the last second of its span: all of that second.
		*w.r = &api.TimeRange{Start: r.start.UnixNano(), End: r.end.Add(time.Second - 1).UnixNano()}
		*w.span = lsfout.TimeSpan{Start: r.start, End: r.end}
	}
	opt := lsfout.AcctOptions{JobsOptions: lsfout.JobsOptions{Unformatted: o.uf, Now: now}, Wide: o.wide, Exceptions: o.exceptions}
	switch {
	case o.long || o.uf: // -l wins over -b, as in LSF
		opt.Format = lsfout.AcctLong
	case o.brief:
		opt.Format = lsfout.AcctBrief
	}
	req.Specs = opt.Format != lsfout.AcctSummary

	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	out := bufio.NewWriter(sys.stdout)
	defer out.Flush()
	aw := lsfout.NewAcctWriter(out, filter, opt)
	notFound, err := c.Accounting(cx, req, func(jobs []*api.Job) error {
		for _, j := range jobs {
			if err := aw.Add(j); err != nil {
				return err
			}
		}
		return nil
	})
	for _, r := range notFound {
		fmt.Fprintf(sys.stderr, "Job <%s> is not found\n", refString(r))
	}
	if err != nil {
		out.Flush()
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	if aw.Count() == 0 {
		fmt.Fprintln(sys.stderr, "No matching job found")
		return 255
	}
	if err := aw.Close(); err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return 0
}
