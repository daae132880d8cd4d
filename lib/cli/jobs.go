package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
	"xce/lib/resreq"
)

// waitJob is bsub -K: it waits for every element of the job to finish and
// returns the job's exit code (126 when it was killed while pending).
func waitJob(c *client.Client, id int64) int {
	fmt.Fprintln(sys.stderr, "<<Waiting for dispatch ...>>")
	showHost := sys.getenv("LSB_SUBK_SHOW_EXEC_HOST") != ""
	announced := false
	for {
		code, done, err := watchUntilDone(c, id, showHost, &announced)
		if done {
			if sys.getenv("BSUB_QUIET2") == "" { // LSF's switch for this line
				fmt.Fprintln(sys.stderr, "<<Job is finished>>")
			}
			return code
		}
		if err != nil {
			// The stream broke (controller restart); look again shortly.
			time.Sleep(500 * time.Millisecond)
		}
	}
}

func watchUntilDone(c *client.Client, id int64, showHost bool, announced *bool) (int, bool, error) {
	// No deadline: a job may run for days.
	cx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := c.Watch(cx, &api.WatchRequest{Refs: []*api.JobRef{{JobId: id, ArrayIndex: -1}}, Initial: true})
	if err != nil {
		return 0, false, err
	}
	states := map[int32]*api.Job{}
	for {
		j, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("watch ended")
			}
			return 0, false, err
		}
		job := j.Job
		states[job.ArrayIndex] = job
		if showHost && !*announced && job.State == api.JobState_RUN && len(job.ExecHosts) > 0 {
			fmt.Fprintf(sys.stderr, "<<Starting on %s>>\n", job.ExecHosts[0].Host)
			*announced = true
		}
		// The initial records tell how many elements there are.
		size := int(max(job.ArraySize, 1))
		if len(states) < size {
			continue
		}
		code, finished := 0, true
		for _, s := range states {
			switch s.State {
			case api.JobState_DONE:
			case api.JobState_EXIT:
				if s.StartTime == 0 {
					code = 126
				} else if s.ExitStatus != 0 {
					code = int(s.ExitStatus)
				} else if code == 0 {
					code = 1
				}
			default:
				finished = false
			}
		}
		if finished {
			return code, true, nil
		}
	}
}

type bjobsOpts struct {
	all, done, pend, run, susp, long, wide, noHeader, json, uf bool
	sum, arrays, stats, hms, exceptions, psum, pendLong        bool
	eligible, ineligible                                       bool
	user, queue, name, format, host, project, app              string
	jobGroup, userGroup, desc, rusage                          string
}

func bjobs(args []string) int {
	var o bjobsOpts
	var ids []string
	cmd, code := newCommand("bjobs [options] [job_ID | \"job_ID[index_list]\" ...]", "Show jobs", func(a []string) int {
		ids = a
		return 0
	})
	f := cmd.Flags()
	f.BoolVar(&o.all, "a", false, "also recently finished jobs")
	f.BoolVar(&o.done, "d", false, "only recently finished jobs")
	f.BoolVar(&o.pend, "p", false, "pending jobs, with their pending reasons")
	f.BoolVar(&o.run, "r", false, "running jobs")
	f.BoolVar(&o.susp, "s", false, "suspended jobs")
	f.BoolVar(&o.long, "l", false, "long format")
	f.BoolVar(&o.wide, "w", false, "wide format: nothing truncated")
	f.BoolVar(&o.noHeader, "noheader", false, "no header line")
	f.BoolVar(&o.json, "json", false, "JSON output (with -o)")
	f.BoolVar(&o.uf, "UF", false, "long format without line wrapping")
	f.BoolVar(&o.sum, "sum", false, "slot counts of the jobs by state")
	f.BoolVar(&o.arrays, "A", false, "job arrays: one line per array with its elements by state")
	f.BoolVar(&o.stats, "W", false, "wide format with project, CPU time, memory, swap, PIDs, start and finish times")
	f.BoolVar(&o.hms, "hms", false, "durations as hh:mm:ss (with -o)")
	f.StringVar(&o.user, "u", "", "jobs of this user, or all")
	f.StringVar(&o.queue, "q", "", "jobs in this queue")
	f.StringVar(&o.name, "J", "", "jobs with this name (* wildcards)")
	f.StringVar(&o.format, "o", "", `custom output: "field[:[-][width][:unit]] ... [delimiter='c']"`)
	f.StringVar(&o.host, "m", "", "jobs running on this host or host group")
	f.StringVar(&o.project, "P", "", "jobs of this project")
	f.StringVar(&o.app, "app", "", "jobs of this application profile")
	f.StringVar(&o.jobGroup, "g", "", "jobs in this job group (/path) and its subgroups")
	f.StringVar(&o.userGroup, "G", "", "jobs submitted with bsub -G for this user group (all users')")
	f.StringVar(&o.desc, "Jd", "", "jobs with this `job_description` (* wildcards)")
	f.BoolVar(&o.exceptions, "x", false, "jobs with exceptions (overrun, underrun, idle, runtime_est_exceeded)")
	f.BoolVar(&o.psum, "psum", false, "summary of the pending reasons of the pending jobs (implies -p)")
	f.BoolVar(&o.pendLong, "pl", false, "pending jobs in the long format (-p -l)")
	f.BoolVar(&o.eligible, "pe", false, "pending jobs that are eligible for scheduling")
	f.BoolVar(&o.ineligible, "pi", false, "pending jobs that are not eligible for scheduling (held, a start time or dependency to wait for, an inactive queue)")
	// LSF 10.1's pending reason levels: XCE has one level (the key reason,
	// with host counts where hosts differ), shown for all four.
	levels := make([]bool, 4)
	for i := range levels {
		f.BoolVar(&levels[i], fmt.Sprintf("p%d", i), false, fmt.Sprintf("pending jobs with their reasons (level %d; as -p)", i))
	}
	f.StringVar(&o.rusage, "rusage", "", `jobs that reserve these resources: "name[,name...]"`)
	var gpus bool
	f.BoolVar(&gpus, "gpu", false, "with -l or -UF: the GPU allocation (bjobs -l always shows it for a GPU job)")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if gpus && !o.long && !o.uf {
		fmt.Fprintln(sys.stderr, "bjobs: -gpu must be used with -l or -UF")
		return 255
	}
	if slices.Contains(levels, true) || o.eligible || o.ineligible {
		o.pend = true
	}
	if o.pendLong {
		o.pend, o.long = true, true
	}
	if o.psum {
		o.pend = true
	}
	if o.userGroup != "" && o.user == "" {
		// -G selects by the group the jobs were submitted for, whoever
		// submitted them (LSF: -G and -u do not go together).
		o.user = "all"
	}
	if o.format == "" && !o.arrays {
		// bjobs -A has its own columns: only an explicit -o changes them.
		o.format = sys.getenv("LSB_BJOBS_FORMAT")
	}
	if o.json && o.format == "" && !o.arrays {
		fmt.Fprintln(sys.stderr, "bjobs: -json requires -o or LSB_BJOBS_FORMAT")
		return 255
	}
	var format *lsfout.Format
	if o.format != "" && !o.long && !o.arrays {
		var err error
		if format, err = lsfout.ParseFormat(o.format); err != nil {
			fmt.Fprintln(sys.stderr, err)
			return 255
		}
		format.HMS = o.hms
	}
	refs, err := parseJobIDs(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	req := &api.QueryRequest{Refs: refs, User: o.user, Queue: o.queue, Name: o.name, Host: o.host, Project: o.project, App: o.app,
		JobGroup: o.jobGroup, UserGroup: o.userGroup, Description: o.desc, Exceptions: o.exceptions,
		Submitted: (o.long || o.uf) && !o.psum}
	noJobs := "No unfinished job found"
	switch {
	case o.all:
		req.Scope, noJobs = api.QueryRequest_ALL, "No job found"
	case o.done:
		req.Scope, noJobs = api.QueryRequest_FINISHED, "No DONE/EXIT job found"
	case o.pend:
		req.Scope, noJobs = api.QueryRequest_PENDING, "No pending job found"
		switch {
		case o.eligible && !o.ineligible:
			req.Eligibility = api.QueryRequest_ELIGIBLE
		case o.ineligible && !o.eligible:
			req.Eligibility = api.QueryRequest_INELIGIBLE
		}
	case o.run:
		req.Scope, noJobs = api.QueryRequest_RUNNING, "No running job found"
	case o.susp:
		req.Scope, noJobs = api.QueryRequest_SUSPENDED, "No suspended job found"
	}
	// Columns that read the records alone (a workflow tool's poll of
	// "jobid stat exit_code") need no specs, reasons or usage.
	req.RecordsOnly = format != nil && o.rusage == "" && format.RecordsOnly()
	if format == nil && !o.long && !o.uf && !o.stats && !o.psum && !o.sum && !o.arrays && o.rusage == "" {
		// The default table reads a few spec fields: the rest stays.
		req.SpecFields = lsfout.ListingSpecFields
	}
	if len(refs) > 0 && !o.done && !o.pend && !o.run && !o.susp {
		// Jobs named by id are shown whatever their state.
		req.Scope = api.QueryRequest_ALL
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	if o.psum {
		return pendSummary(c, cx, req)
	}
	if o.sum || o.arrays {
		return bjobsTotals(c, cx, req, o, noJobs)
	}
	// A listing allocates mostly short-lived messages, part by part: with
	// the collector's default it runs a cycle every few parts, for a heap
	// that stays small (48 MB at 100,000 jobs with 400).
	if sys.getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	out := bufio.NewWriterSize(sys.stdout, 64<<10)
	defer out.Flush()
	// Listings are printed part by part as the controller streams them;
	// JSON needs the count first, so it waits for everything.
	var all []*api.Job
	printed := 0
	nf, err := c.QueryEach(cx, req, func(jobs []*api.Job) error {
		if o.rusage != "" {
			jobs = reserving(jobs, strings.Split(o.rusage, ","))
		}
		if format != nil && o.json {
			all = append(all, jobs...)
			return nil
		}
		if len(jobs) == 0 {
			return nil
		}
		first := printed == 0
		printed += len(jobs)
		switch {
		case o.long || o.uf:
			if !first {
				fmt.Fprint(out, lsfout.LongSeparator)
			}
			return lsfout.WriteJobsLong(out, jobs, lsfout.JobsOptions{Unformatted: o.uf, Now: time.Now()})
		case o.stats:
			return lsfout.WriteJobsStats(out, jobs, lsfout.JobsOptions{NoHeader: o.noHeader || !first, Now: time.Now()})
		case format != nil:
			return format.Write(out, jobs, o.noHeader || !first)
		default:
			return lsfout.WriteJobs(out, jobs, lsfout.JobsOptions{Wide: o.wide, NoHeader: o.noHeader || !first, PendReasons: o.pend, SuspReasons: o.susp, Now: time.Now()})
		}
	})
	if err != nil {
		out.Flush()
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	var notFound []string
	for _, r := range nf {
		notFound = append(notFound, refString(r))
	}
	if format != nil && o.json {
		printed = len(all)
		if err := format.WriteJSON(out, all, notFound); err != nil {
			fmt.Fprintln(sys.stderr, err)
			return 255
		}
		notFound = nil
	}
	out.Flush()
	for _, n := range notFound {
		fmt.Fprintf(sys.stderr, "Job <%s> is not found\n", n)
	}
	if printed == 0 && len(notFound) == 0 && !o.json {
		msg, unknown := nothingFound(c, cx, noJobs, len(refs) > 0, o.queue, o.host, o.name)
		fmt.Fprintln(sys.stderr, msg)
		if unknown {
			return 255
		}
	}
	// LSF: 255 only when a job id that does not exist is given next to jobs
	// that do (LSB_BJOBS_CONSISTENT_EXIT_CODE=N).
	if len(notFound) > 0 && printed > 0 {
		return 255
	}
	return 0
}

// reserving keeps the jobs whose resource requirement reserves every one
// of names in one rusage section (bjobs -rusage: alternatives count
// separately).
func reserving(jobs []*api.Job, names []string) []*api.Job {
	kept := jobs[:0]
	for _, j := range jobs {
		for _, text := range j.GetEffective().GetResReq() {
			r, err := resreq.Parse(text)
			if err != nil {
				continue
			}
			if slices.ContainsFunc(r.UsageSections(), func(sec []string) bool {
				return !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(sec, strings.TrimSpace(n)) })
			}) {
				kept = append(kept, j)
				break
			}
		}
	}
	return kept
}

// nothingFound is LSF's message (its jobInfoErr) when a command's filters
// select no job: a job named by -J (and no job id) is not found; a queue
// or host that does not exist is named with the reason (unknown is then
// true); otherwise noJobs, with " in queue <q>" and " on host/group <h>".
func nothingFound(c *client.Client, cx context.Context, noJobs string, ids bool, queue, host, name string) (msg string, unknown bool) {
	if name != "" && !ids {
		return "Job <" + name + "> is not found", false
	}
	msg = noJobs
	if queue != "" {
		if _, err := c.ListQueues(cx, &api.ListQueuesRequest{Names: []string{queue}}); err != nil {
			return rpcError(c, err), true
		}
		msg += " in queue <" + queue + ">"
	}
	if host != "" {
		if _, err := c.ListHosts(cx, &api.ListHostsRequest{Names: []string{host}}); err != nil {
			return rpcError(c, err), true
		}
		msg += " on host/group <" + host + ">"
	}
	return msg, false
}

// pendSummary is bjobs -psum: the pending reasons of the selected jobs,
// counted.
func pendSummary(c *client.Client, cx context.Context, req *api.QueryRequest) int {
	res, err := c.Query(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	info, err := c.Info(cx, &api.ClusterInfoRequest{})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	if err := lsfout.WritePendSummary(sys.stdout, res.Jobs, info.ClusterName, time.Now()); err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	for _, r := range res.NotFound {
		fmt.Fprintf(sys.stderr, "Job <%s> is not found\n", refString(r))
	}
	return 0
}

// control is bkill, bstop and bresume: one set of job filters (-u, -q,
// -J, -m, -app, -g) for the three, plus bkill's own options.
func control(name string, action api.SignalRequest_Action, args []string) int {
	var user, queue, jobName, host, app, group, sig, reason, stat string
	var list, force, markDone, bulk, allJobs bool
	var ids []string
	cmd, code := newCommand(name+" [options] [job_ID | 0 | \"job_ID[index]\" ...]", controlShort[name], func(a []string) int {
		ids = a
		return 0
	})
	f := cmd.Flags()
	f.StringVar(&user, "u", "", "jobs of this user, or all")
	f.StringVar(&queue, "q", "", "jobs in this queue")
	f.StringVar(&jobName, "J", "", "jobs with this name (* wildcards)")
	f.StringVar(&host, "m", "", "jobs running on this host or host group")
	f.StringVar(&app, "app", "", "jobs of this application profile")
	f.StringVar(&group, "g", "", "jobs in this job group (not its subgroups)")
	f.StringVar(&reason, "C", "", "a comment recorded with the request")
	if name == "bkill" {
		f.StringVar(&sig, "s", "", "send this signal (name or number) instead of terminating")
		f.BoolVar(&list, "l", false, "list the signal names")
		f.BoolVar(&force, "r", false, "remove the job at once: record it as ended and send SIGKILL")
		f.StringVar(&stat, "stat", "", "only jobs in this state: run, pend or susp; without a job ID, all of them")
		f.BoolVar(&markDone, "d", false, "kill the job and record it as DONE once it has ended")
		f.BoolVar(&bulk, "b", false, "bulk kill: with 0, skip the jobs that cannot be killed")
	} else {
		f.BoolVar(&allJobs, "a", false, "all jobs that satisfy the other options, as job ID 0")
	}
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if list {
		fmt.Fprintln(sys.stdout, strings.Join(signalList, " "))
		return 0
	}
	usage := func(msg string) int {
		fmt.Fprintln(sys.stderr, msg)
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	if force && sig != "" {
		return usage("-r and -s cannot be used together")
	}
	states, ok := statStates[stat]
	if !ok {
		return usage(stat + ": -stat takes run, pend or susp")
	}
	if bulk && stat != "" {
		return usage("-b and -stat cannot be used together")
	}
	// LSF ignores -b and -d with -r or -s.
	if force || sig != "" {
		bulk, markDone = false, false
	}
	req := &api.SignalRequest{Action: action, User: user, Queue: queue, Name: jobName, Reason: reason, Force: force,
		Host: host, App: app, JobGroup: group, States: states, MarkDone: markDone, Bulk: bulk}
	verb := map[string]string{"bkill": "terminated", "bstop": "stopped", "bresume": "resumed"}[name]
	if sig != "" {
		n, err := parseSignal(sig)
		if err != nil {
			fmt.Fprintln(sys.stderr, err)
			return 255
		}
		req.Action, req.Signal, verb = api.SignalRequest_SIGNAL, int32(n), "signaled"
	}
	var idArgs []string
	req.All = allJobs
	for _, a := range ids {
		if a == "0" {
			req.All = true
		} else {
			idArgs = append(idArgs, a)
		}
	}
	refs, err := parseJobIDs(idArgs)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	req.Refs = refs
	if len(refs) == 0 && !req.All && user == "" && queue == "" && jobName == "" && host == "" && app == "" && group == "" && stat == "" {
		return usage("Job ID or one of '-m', '-u' '-q' and '-J' must be specified.")
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	reply, err := c.Signal(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	// A whole array named by its id answers as one job, as LSF does.
	whole := map[int64]bool{}
	for _, r := range refs {
		if r.ArrayIndex < 0 {
			whole[r.JobId] = true
		}
	}
	failed := 0
	said := map[string]bool{}
	for _, r := range reply.Results {
		id := refString(r.Ref)
		if whole[r.Ref.JobId] {
			id = refString(&api.JobRef{JobId: r.Ref.JobId})
		}
		if r.Error != "" {
			failed++
			if !said[id+r.Error] {
				fmt.Fprintf(sys.stderr, "Job <%s>: %s\n", id, r.Error)
				said[id+r.Error] = true
			}
			continue
		}
		if !said[id] {
			fmt.Fprintf(sys.stdout, "Job <%s> is being %s\n", id, verb)
			said[id] = true
		}
	}
	if len(reply.Results) == 0 {
		msg, _ := nothingFound(c, cx, "No unfinished job found", len(refs) > 0, queue, host, jobName)
		fmt.Fprintln(sys.stderr, msg)
		return 255
	}
	if failed > 0 {
		return 255
	}
	return 0
}

// statStates are the states bkill -stat selects.
var statStates = map[string][]api.JobState{
	"":     nil,
	"run":  {api.JobState_RUN},
	"pend": {api.JobState_PEND},
	"susp": {api.JobState_USUSP, api.JobState_SSUSP, api.JobState_PSUSP},
}

var controlShort = map[string]string{
	"bkill":   "Send signals to kill, suspend or resume jobs",
	"bstop":   "Suspend jobs",
	"bresume": "Resume suspended jobs",
}

func bkill(args []string) int   { return control("bkill", api.SignalRequest_KILL, args) }
func bstop(args []string) int   { return control("bstop", api.SignalRequest_STOP, args) }
func bresume(args []string) int { return control("bresume", api.SignalRequest_RESUME, args) }

func bqueues(args []string) int {
	var noHeader, long, wide, shares, json bool
	var host, user, format string
	var names []string
	cmd, code := newCommand(`bqueues [-w | -l | -r | -o "field_name[:[-][output_width]] ... [delimiter='character']" [-json]] [-m host_name | -m host_group | -m cluster_name | -m all] [-u user_name | -u user_group | -u all] [-noheader] [queue_name ...]`,
		"Show queues", func(a []string) int {
			names = a
			return 0
		})
	f := cmd.Flags()
	acceptAlloc(f)
	f.BoolVar(&noHeader, "noheader", false, "no header line")
	f.BoolVar(&long, "l", false, "long format: description, limits, policies, users, hosts")
	f.BoolVar(&wide, "w", false, "wide format: queue names not cut")
	f.BoolVar(&shares, "r", false, "long format with the fairshare accounts: shares, dynamic priority, started and reserved slots, CPU and run time")
	f.StringVar(&format, "o", "", `custom output: "field_name[:[-][output_width]] ... [delimiter='c']"`)
	f.BoolVar(&json, "json", false, "JSON output (with -o)")
	f.StringVar(&host, "m", "", "only the queues that can run jobs on this host, host group or cluster (all: every queue)")
	f.StringVar(&user, "u", "", "only the queues this user or a member of this user group may use (all: the queues open to every user)")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	long = long || shares
	if format == "" {
		format = sys.getenv("LSB_BQUEUES_FORMAT")
	}
	var custom *lsfout.Custom[*api.Queue]
	if format != "" && !long {
		var err error
		if custom, err = lsfout.ParseQueuesFormat(format); err != nil {
			fmt.Fprintln(sys.stderr, err)
			return 255
		}
	}
	return fetch(func(c *client.Client, cx context.Context) (*api.ListQueuesReply, error) {
		return c.ListQueues(cx, &api.ListQueuesRequest{Names: names, Host: host, User: user, ShareInfo: shares})
	}, func(reply *api.ListQueuesReply) error {
		switch {
		case long:
			return lsfout.WriteQueuesLong(sys.stdout, reply.Queues)
		case custom != nil && json:
			return custom.WriteJSON(sys.stdout, reply.Queues)
		case custom != nil:
			return custom.Write(sys.stdout, reply.Queues, noHeader)
		case wide:
			return lsfout.WriteQueuesWide(sys.stdout, reply.Queues, noHeader)
		}
		return lsfout.WriteQueues(sys.stdout, reply.Queues, noHeader)
	})
}

func bhosts(args []string) int {
	var noHeader, wide, long, shared, json, gpus, rc, rcOnly, uncondensed bool
	var resReq, format string
	var names []string
	cmd, code := newCommand(`bhosts [-w | -l [-gpu] | -gpu | -rc | -rconly | -o "field_name[:[-][output_width]] ... [delimiter='character']" [-json]] [-X] [-R "res_req"] [-noheader] [host_name | compute_unit ...] | -s [resource_name ...]`,
		"Show hosts", func(a []string) int {
			names = a
			return 0
		})
	f := cmd.Flags()
	acceptAlloc(f)
	f.BoolVar(&noHeader, "noheader", false, "no header line")
	f.BoolVar(&wide, "w", false, "wide format with detailed status")
	f.BoolVar(&long, "l", false, "long format: CPU factor, load and reservations used for scheduling, thresholds, the administrator's comment")
	f.StringVar(&format, "o", "", `custom output: "field_name[:[-][output_width]] ... [delimiter='c']"`)
	f.BoolVar(&json, "json", false, "JSON output (with -o)")
	f.StringVar(&resReq, "R", "", "only the hosts that satisfy this resource requirement's select")
	f.BoolVar(&shared, "s", false, "the shared resources (the arguments are resource names): total left, reserved, location")
	f.BoolVar(&gpus, "gpu", false, "the hosts' GPUs: one row per device (with -l: their static and dynamic attributes and jobs)")
	f.BoolVar(&rc, "rc", false, "the resource connector's columns: RC_STATUS, PROV_STATUS, UPDATED_AT, INSTANCE_ID")
	f.BoolVar(&rcOnly, "rconly", false, "only the hosts providers supplied, with -rc's columns")
	f.BoolVar(&uncondensed, "X", false, "uncondensed: the hosts of condensed compute units one by one")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if gpus && (wide || format != "" || shared) {
		fmt.Fprintln(sys.stderr, "bhosts: -gpu cannot be used with -w, -o or -s")
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.UseLine())
		return 255
	}
	if shared {
		if long || wide || resReq != "" || format != "" {
			fmt.Fprintln(sys.stderr, "bhosts: -s cannot be used with -l, -w, -R or -o")
			fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.UseLine())
			return 255
		}
		return showShared("bhosts", names, func(res []*api.SharedResource) error {
			if len(res) == 0 {
				// OpenLava's bhosts: lsb_perror("lsb_sharedresourceinfo")
				// of LSBE_NO_RESOURCE, exit(-1).
				return errors.New("lsb_sharedresourceinfo: No resource defined")
			}
			return lsfout.WriteSharedResources(sys.stdout, res)
		})
	}
	if format == "" {
		format = sys.getenv("LSB_BHOSTS_FORMAT")
	}
	var custom *lsfout.Custom[*api.Host]
	if format != "" && !long {
		var err error
		if custom, err = lsfout.ParseHostsFormat(format); err != nil {
			fmt.Fprintln(sys.stderr, err)
			return 255
		}
	}
	return fetch(func(c *client.Client, cx context.Context) (*api.ListHostsReply, error) {
		return c.ListHosts(cx, &api.ListHostsRequest{Names: names, ResReq: resReq})
	}, func(reply *api.ListHostsReply) error {
		if len(reply.Hosts) == 0 {
			return errors.New("No host is eligible")
		}
		switch {
		case long && gpus:
			return lsfout.WriteHostsLongGPU(sys.stdout, reply.Hosts, reply.Shared)
		case gpus:
			return lsfout.WriteHostsGPU(sys.stdout, reply.Hosts, noHeader)
		case long:
			return lsfout.WriteHostsLong(sys.stdout, reply.Hosts, reply.Shared)
		case custom != nil && json:
			return custom.WriteJSON(sys.stdout, reply.Hosts)
		case custom != nil:
			return custom.Write(sys.stdout, reply.Hosts, noHeader)
		case rc || rcOnly:
			return writeHostsRC(reply.Hosts, rcOnly, lsfout.HostsOptions{Wide: wide, NoHeader: noHeader})
		}
		hosts := reply.Hosts
		if !uncondensed {
			hosts = lsfout.CondenseHosts(hosts, reply.Condensed)
		}
		return lsfout.WriteHosts(sys.stdout, hosts, lsfout.HostsOptions{Wide: wide, NoHeader: noHeader})
	})
}

// showShared is -s of bhosts, lshosts and lsload: the cluster's shared
// resources, only those named when names are given (a name that is not one
// is LSF's "Bad resource name").
func showShared(cmd string, names []string, show func([]*api.SharedResource) error) int {
	return fetch(func(c *client.Client, cx context.Context) (*api.ListHostsReply, error) {
		return c.ListHosts(cx, &api.ListHostsRequest{})
	}, func(reply *api.ListHostsReply) error {
		res := reply.Shared
		if len(names) > 0 {
			res = nil
			for _, n := range names {
				i := slices.IndexFunc(reply.Shared, func(s *api.SharedResource) bool { return s.Name == n })
				if i < 0 {
					return fmt.Errorf("%s: Bad resource name", n)
				}
				res = append(res, reply.Shared[i])
			}
		}
		return show(res)
	})
}
