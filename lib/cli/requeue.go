package cli

import (
	"fmt"
	"strconv"

	"xce/lib/api"
)

// bswitch moves pending jobs to another queue.
func bswitch(args []string) int {
	var words []string
	cmd, code := newCommand("bswitch destination_queue job_ID | \"job_ID[index]\" ...", "Move pending jobs to another queue", func(a []string) int {
		words = a
		return 0
	})
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(words) == 0 {
		fmt.Fprintln(sys.stderr, "The destination queue name must be specified.")
		return 255
	}
	queue, ids := words[0], words[1:]
	if len(ids) == 0 {
		fmt.Fprintln(sys.stderr, "Job ID must be specified.")
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	refs, err := parseJobIDs(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return jobControl(&api.ControlRequest{Action: api.ControlRequest_SWITCH, Refs: refs, Queue: queue},
		"is switched to queue <"+queue+">")
}

// brequeue sends jobs back to pending: finished ones at once, running ones
// once they have been killed.
func brequeue(args []string) int {
	var done, exited, running, pending, all, hold bool
	var ids []string
	cmd, code := newCommand("brequeue [-d] [-e] [-r] [-p] [-a] [-H] job_ID | \"job_ID[index]\" ...", "Requeue jobs", func(a []string) int {
		ids = a
		return 0
	})
	f := cmd.Flags()
	f.BoolVar(&done, "d", false, "requeue DONE jobs")
	f.BoolVar(&exited, "e", false, "requeue EXIT jobs")
	f.BoolVar(&running, "r", false, "requeue running (and suspended) jobs, killing them")
	f.BoolVar(&pending, "p", false, "requeue pending jobs")
	f.BoolVar(&all, "a", false, "requeue DONE, EXIT and running jobs")
	f.BoolVar(&hold, "H", false, "requeue into PSUSP (held)")
	if rc, finished := execute(cmd, code, args, false); finished {
		return rc
	}
	if len(ids) == 0 {
		fmt.Fprintln(sys.stderr, "Job ID must be specified.")
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	refs, err := parseJobIDs(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
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
	return jobControl(&api.ControlRequest{Action: api.ControlRequest_REQUEUE, Refs: refs, Hold: hold, States: states},
		"is being requeued")
}

// jobControl sends a job control and prints LSF's line per job.
func jobControl(req *api.ControlRequest, success string) int {
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
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
