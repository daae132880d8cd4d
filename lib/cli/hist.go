package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/exec"
	"xce/lib/lsfout"
)

// bhist shows jobs' histories from their event logs.
func bhist(args []string) int {
	var all, done, exited, pend, run, susp, long, uf bool
	var user, queue, name string
	var ids []string
	cmd, code := newCommand("bhist [options] [job_ID | \"job_ID[index]\" ...]", "Show the history of jobs", func(a []string) int {
		ids = a
		return 0
	})
	f := cmd.Flags()
	f.BoolVar(&all, "a", false, "finished and unfinished jobs")
	f.BoolVar(&done, "d", false, "only finished jobs")
	f.BoolVar(&exited, "e", false, "only jobs that exited")
	f.BoolVar(&pend, "p", false, "only pending jobs")
	f.BoolVar(&run, "r", false, "only running jobs")
	f.BoolVar(&susp, "s", false, "only suspended jobs")
	f.BoolVar(&long, "l", false, "long format: every event")
	f.BoolVar(&uf, "UF", false, "long format without line wrapping")
	f.StringVar(&user, "u", "", "jobs of this user, or all")
	f.StringVar(&queue, "q", "", "jobs in this queue")
	f.StringVar(&name, "J", "", "jobs with this name")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	refs, err := parseJobIDs(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	req := &api.QueryRequest{Refs: refs, User: user, Queue: queue, Name: name, Submitted: true}
	switch {
	case all || len(refs) > 0:
		req.Scope = api.QueryRequest_ALL
	case done || exited:
		req.Scope = api.QueryRequest_FINISHED
	case pend:
		req.Scope = api.QueryRequest_PENDING
	case run:
		req.Scope = api.QueryRequest_RUNNING
	case susp:
		req.Scope = api.QueryRequest_SUSPENDED
	}
	c, cx, closeConn, ok := connect()
	if !ok {
		return 255
	}
	defer closeConn()
	res, err := c.Query(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	var jobs []*api.Job
	var evRefs []*api.JobRef
	for _, j := range res.Jobs {
		if exited && j.State != api.JobState_EXIT {
			continue
		}
		jobs = append(jobs, j)
		evRefs = append(evRefs, &api.JobRef{JobId: j.JobId, ArrayIndex: j.ArrayIndex})
	}
	if len(jobs) == 0 {
		fmt.Fprintln(sys.stderr, "No matching job found")
		return 255
	}
	evs, err := c.Events(cx, &api.EventsRequest{Refs: evRefs})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	byJob := map[string][]*api.Event{}
	for _, ev := range evs.Events {
		k := lsfout.JobIDString(&api.Job{JobId: ev.JobId, ArrayIndex: ev.ArrayIndex})
		byJob[k] = append(byJob[k], ev)
	}
	if long || uf {
		err = lsfout.WriteHistoryLong(sys.stdout, jobs, byJob, lsfout.JobsOptions{Unformatted: uf, Now: time.Now()})
	} else {
		err = lsfout.WriteHistory(sys.stdout, jobs, byJob, time.Now())
	}
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return 0
}

// bpeek shows the output an unfinished job has written so far.
func bpeek(args []string) int {
	var follow bool
	var queue, name string
	var ids []string
	cmd, code := newCommand("bpeek [-f] [-q queue | -J job_name | job_ID | \"job_ID[index]\"]", "Show the output of an unfinished job", func(a []string) int {
		ids = a
		return 0
	})
	f := cmd.Flags()
	f.BoolVar(&follow, "f", false, "follow the output until the job finishes")
	f.StringVar(&queue, "q", "", "the user's most recent job in this queue")
	f.StringVar(&name, "J", "", "the user's most recent job with this name")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	given := len(ids)
	if queue != "" {
		given++
	}
	if name != "" {
		given++
	}
	if given > 1 {
		fmt.Fprintln(sys.stderr, "Command syntax error: more than one of -m , -q, -J or jobId are specified")
		return 255
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
	res, err := c.Query(cx, &api.QueryRequest{Refs: refs, Queue: queue, Name: name, Scope: api.QueryRequest_ALL})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	if len(res.Jobs) == 0 {
		if len(refs) > 0 {
			fmt.Fprintf(sys.stderr, "Job <%s>: No matching job found\n", refString(refs[0]))
		} else {
			fmt.Fprintln(sys.stderr, "No unfinished job found")
		}
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
	switch j.State {
	case api.JobState_PEND, api.JobState_PSUSP:
		fmt.Fprintf(sys.stderr, "Job <%s> : Not yet started.\n", id)
		return 255
	case api.JobState_DONE, api.JobState_EXIT:
		fmt.Fprintf(sys.stderr, "Job <%s> : Already finished.\n", id)
		return 255
	}
	path := outputPath(j)
	fmt.Fprintln(sys.stdout, "<< output from stdout >>")
	file, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(sys.stderr, "Job <%s> : Cannot open the output file %s: %v\n", id, path, err)
		return 255
	}
	defer file.Close()
	out := bufio.NewWriter(sys.stdout)
	defer out.Flush()
	// The job report the shepherd appends when the job ends is not output:
	// stop at its first line. A tail as long as that line is held back in
	// case it arrives in two parts.
	var held []byte
	copyNew := func() (ended bool) {
		b, _ := io.ReadAll(file)
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

// outputPath is where a running job's standard output goes: its -o file
// (with %J and %I expanded, relative to its working directory), else the
// spool file.
func outputPath(j *api.Job) string {
	o := j.Effective.GetOutputFile()
	if o == "" {
		return j.SpoolOutput
	}
	o = exec.ExpandPattern(o, j.JobId, j.ArrayIndex)
	if !filepath.IsAbs(o) {
		o = filepath.Join(j.ExecCwd, o)
	}
	return o
}

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
