package cli

import (
	"bufio"
	"fmt"
	"time"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// bacct summarizes finished jobs: the caller's by default, -u user or all,
// -q queue, -P project, -m host, or the jobs named. XCE keeps no accounting log: bacct sees the
// finished jobs the controller still holds (those bjobs -d shows).
func bacct(args []string) int {
	var long, uf bool
	var userName, queue, project, host string
	var ids []string
	cmd, code := newCommand("bacct [-l] [-UF] [-u user_name | -u all] [-q queue_name] [-P project_name] [-m host_name] [job_ID ...]", "Show accounting statistics of finished jobs", func(a []string) int {
		ids = a
		return 0
	})
	f := cmd.Flags()
	f.BoolVar(&long, "l", false, "long format: every job, then the summary")
	f.BoolVar(&uf, "UF", false, "long format without line wrapping")
	f.StringVar(&userName, "u", "", "jobs of this user, or all")
	f.StringVar(&queue, "q", "", "jobs in this queue")
	f.StringVar(&project, "P", "", "jobs of this project")
	f.StringVar(&host, "m", "", "jobs that ran on this host")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	refs, err := parseJobIDs(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	filter := lsfout.AcctFilter{}
	switch {
	case userName == "all" || (userName == "" && len(refs) > 0):
	case userName != "":
		filter.Users = []string{userName}
	default:
		me, ok := currentUser("bacct")
		if !ok {
			return 255
		}
		filter.Users = []string{me}
	}
	if queue != "" {
		filter.Queues = []string{queue}
	}
	if project != "" {
		filter.Projects = []string{project}
	}
	if host != "" {
		filter.Hosts = []string{host}
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	req := &api.QueryRequest{Scope: api.QueryRequest_FINISHED, Refs: refs, User: userName, Queue: queue, Project: project, Host: host, Submitted: long || uf}
	res, err := c.Query(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	for _, r := range res.NotFound {
		fmt.Fprintf(sys.stderr, "Job <%s> is not found\n", refString(r))
	}
	if len(res.Jobs) == 0 {
		fmt.Fprintln(sys.stderr, "No matching job found")
		return 255
	}
	out := bufio.NewWriter(sys.stdout)
	defer out.Flush()
	if err := lsfout.WriteAcct(out, res.Jobs, filter, long || uf, lsfout.JobsOptions{Unformatted: uf, Now: time.Now()}); err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return 0
}
