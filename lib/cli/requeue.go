package cli

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"xce/lib/api"
	"xce/lib/client"
)

// bswitch moves pending jobs to another queue: the jobs named, or those
// the filters select (with 0 all of them, else the caller's latest).
func bswitch(args []string) int {
	var words []string
	var sel jobSelection
	cmd, code := newCommand(`bswitch [-a app] [-J name] [-m host] [-q queue] [-u user|all] destination_queue [0] [job_ID | "job_ID[index]" ...]`,
		"Move pending jobs to another queue", func(a []string) int {
			words = a
			return 0
		})
	f := cmd.Flags()
	f.StringVar(&sel.app, "a", "", "jobs of this application profile")
	f.StringVar(&sel.name, "J", "", "jobs with this name (* wildcards)")
	f.StringVar(&sel.host, "m", "", "jobs on this host or host group")
	f.StringVar(&sel.queue, "q", "", "jobs in this queue")
	f.StringVar(&sel.user, "u", "", "jobs of this user, or all")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(words) == 0 {
		fmt.Fprintln(sys.stderr, "The destination queue name must be specified.")
		return 255
	}
	queue, ids := words[0], words[1:]
	refs, all, err := idsAndZero(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	if len(refs) == 0 && !all && !sel.filters() {
		fmt.Fprintln(sys.stderr, "Job ID must be specified.")
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	sel.all, sel.states = all, []api.JobState{api.JobState_PEND, api.JobState_PSUSP}
	return jobControl(&api.ControlRequest{Action: api.ControlRequest_SWITCH, Refs: refs, Queue: queue},
		"is switched to queue <"+queue+">", &sel)
}

// brequeue sends jobs back to pending: finished ones at once, running ones
// once they have been killed.
func brequeue(args []string) int {
	var done, exited, running, pending, all, hold bool
	var ids []string
	var sel jobSelection
	cmd, code := newCommand(`brequeue [-J name] [-u user|all] [-d] [-e] [-r] [-p] [-a] [-H] [0] [job_ID | "job_ID[index]" ...]`, "Requeue jobs", func(a []string) int {
		ids = a
		return 0
	})
	f := cmd.Flags()
	f.StringVar(&sel.name, "J", "", "jobs with this name (* wildcards)")
	f.StringVar(&sel.user, "u", "", "jobs of this user, or all")
	f.BoolVar(&done, "d", false, "requeue DONE jobs")
	f.BoolVar(&exited, "e", false, "requeue EXIT jobs")
	f.BoolVar(&running, "r", false, "requeue running (and suspended) jobs, killing them")
	f.BoolVar(&pending, "p", false, "requeue pending jobs")
	f.BoolVar(&all, "a", false, "requeue DONE, EXIT and running jobs")
	f.BoolVar(&hold, "H", false, "requeue into PSUSP (held)")
	if rc, finished := execute(cmd, code, args, false); finished {
		return rc
	}
	refs, zero, err := idsAndZero(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	if len(refs) == 0 && !zero && !sel.filters() {
		fmt.Fprintln(sys.stderr, "Job ID must be specified.")
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	// With filters and no job ID every matching job is requeued (as with 0).
	sel.all = true
	// With no state option, DONE, EXIT and running jobs, as -a (LSF's
	// default set is unconfirmed; this is what a user naming a job means).
	if !done && !exited && !running && !pending {
		all = true
	}
	var states []api.JobState
	add := func(on bool, s ...api.JobState) {
		if on || all {
			states = append(states, s...)
		}
	}
	add(done, api.JobState_DONE)
	add(exited, api.JobState_EXIT)
	add(running, api.JobState_RUN)
	if pending {
		states = append(states, api.JobState_PEND, api.JobState_PSUSP)
	}
	sel.states = states
	return jobControl(&api.ControlRequest{Action: api.ControlRequest_REQUEUE, Refs: refs, Hold: hold, States: states},
		"is being requeued", &sel)
}

// jobSelection selects the jobs of a job control by filters when no job
// ID is given: every matching job in states with all (job ID 0), else
// the caller's latest submitted one.
type jobSelection struct {
	user, queue, name, host, app string
	all                          bool
	states                       []api.JobState
}

func (s *jobSelection) filters() bool {
	return s != nil && (s.user != "" || s.queue != "" || s.name != "" || s.host != "" || s.app != "")
}

// idsAndZero reads job ID arguments, where "0" means all matching jobs.
func idsAndZero(ids []string) (refs []*api.JobRef, zero bool, err error) {
	var rest []string
	for _, a := range ids {
		if a == "0" {
			zero = true
		} else {
			rest = append(rest, a)
		}
	}
	refs, err = parseJobIDs(rest)
	return refs, zero, err
}

// selectRefs finds the jobs a selection names; msg is LSF's message when
// there is none.
func (s *jobSelection) selectRefs(c *client.Client, cx context.Context) (refs []*api.JobRef, msg string) {
	res, err := c.Query(cx, &api.QueryRequest{Scope: api.QueryRequest_ALL, User: s.user, Queue: s.queue,
		Name: s.name, Host: s.host, App: s.app})
	if err != nil {
		return nil, rpcError(c, err)
	}
	var jobs []*api.Job
	for _, j := range res.Jobs {
		if slices.Contains(s.states, j.State) {
			jobs = append(jobs, j)
		}
	}
	if len(jobs) == 0 {
		msg, _ := nothingFound(c, cx, "No matching job found", false, s.queue, s.host, s.name)
		return nil, msg
	}
	if !s.all {
		last := slices.MaxFunc(jobs, func(a, b *api.Job) int { return cmp.Compare(a.JobId, b.JobId) })
		jobs = slices.DeleteFunc(jobs, func(j *api.Job) bool { return j.JobId != last.JobId })
	}
	for _, j := range jobs {
		refs = append(refs, &api.JobRef{JobId: j.JobId, ArrayIndex: j.ArrayIndex})
	}
	return refs, ""
}

// jobControl sends a job control and prints LSF's line per job; with no
// job ID the selection names the jobs.
func jobControl(req *api.ControlRequest, success string, sel *jobSelection) int {
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	if len(req.Refs) == 0 && sel != nil {
		refs, msg := sel.selectRefs(c, cx)
		if len(refs) == 0 {
			fmt.Fprintln(sys.stderr, msg)
			return 255
		}
		req.Refs = refs
	}
	reply, err := c.Control(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	whole := map[int64]bool{}
	for _, r := range req.Refs {
		if r.ArrayIndex < 0 {
			whole[r.JobId] = true
		}
	}
	failed := false
	said := map[string]bool{}
	for _, r := range reply.Results {
		id := refString(r.Ref)
		if whole[r.Ref.JobId] {
			id = refString(&api.JobRef{JobId: r.Ref.JobId})
		}
		line := fmt.Sprintf("Job <%s> %s", id, success)
		out := sys.stdout
		if r.Error != "" {
			line, out, failed = fmt.Sprintf("Job <%s>: %s", id, r.Error), sys.stderr, true
		}
		if !said[line] {
			fmt.Fprintln(out, line)
			said[line] = true
		}
	}
	if failed || len(reply.Results) == 0 {
		return 255
	}
	return 0
}

// btop and bbot move a pending job to a position from the top or the
// bottom of its queue.
func btop(args []string) int { return move("btop", "top", api.ControlRequest_TOP, args) }
func bbot(args []string) int { return move("bbot", "bottom", api.ControlRequest_BOTTOM, args) }

func move(name, end string, action api.ControlRequest_Action, args []string) int {
	var words []string
	cmd, code := newCommand(name+` job_ID | "job_ID[index]" [position]`, "Move a pending job to the "+end+" of its queue", func(a []string) int {
		words = a
		return 0
	})
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(words) == 0 || len(words) > 2 {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	refs, err := parseJobIDs(words[:1])
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	pos := 1
	if len(words) == 2 {
		if pos, err = strconv.Atoi(words[1]); err != nil || pos < 1 {
			fmt.Fprintf(sys.stderr, "%s: Invalid position\n", words[1])
			return 255
		}
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	reply, err := c.Control(cx, &api.ControlRequest{Action: action, Refs: refs, Position: int32(pos)})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	failed := len(reply.Results) == 0
	for _, r := range reply.Results {
		if r.Error != "" {
			fmt.Fprintf(sys.stderr, "Job <%s>: %s\n", words[0], r.Error)
			failed = true
			continue
		}
		if r.Warning != "" {
			fmt.Fprintln(sys.stderr, r.Warning)
		}
		// OpenLava writes this line to stderr; LSF's scripts read it there.
		fmt.Fprintf(sys.stderr, "Job <%s> has been moved to position %d from %s.\n", words[0], pos, end)
	}
	if failed {
		return 255
	}
	return 0
}
