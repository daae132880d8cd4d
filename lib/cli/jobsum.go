package cli

import (
	"context"
	"fmt"
	"time"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
)

// bjobsTotals is bjobs -sum and bjobs -A: counts instead of job lines.
//
// -sum counts the slots of the selected jobs by state; with no job it
// prints zeros. -A shows one line per job array that has at least one
// element of the selected kind (unfinished by default), counting all of
// its elements, finished ones included; jobs that are not arrays are left
// out. A named array that does not exist is "Job array <N> is not found".
func bjobsTotals(c *client.Client, cx context.Context, req *api.QueryRequest, o bjobsOpts, noJobs string) int {
	scope := req.Scope
	if o.arrays {
		req.Scope = api.QueryRequest_ALL
	}
	res, err := c.Query(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	if o.sum {
		if err := lsfout.WriteJobsSum(sys.stdout, res.Jobs, o.noHeader); err != nil {
			fmt.Fprintln(sys.stderr, err)
			return 255
		}
		return 0
	}
	wanted := map[int64]bool{}
	for _, j := range res.Jobs {
		if inScope(scope, j.State) {
			wanted[j.JobId] = true
		}
	}
	var arrays []*lsfout.ArrayCounts
	for _, a := range lsfout.CountArrays(res.Jobs) {
		if wanted[a.Job.JobId] {
			arrays = append(arrays, a)
		}
	}
	if err := writeArrays(arrays, o); err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	for _, r := range res.NotFound {
		fmt.Fprintf(sys.stderr, "Job array <%d> is not found\n", r.JobId)
	}
	if len(arrays) == 0 && len(res.NotFound) == 0 && !o.json {
		fmt.Fprintln(sys.stderr, noJobs)
	}
	if len(res.NotFound) > 0 && len(arrays) > 0 {
		return 255
	}
	return 0
}

// writeArrays prints bjobs -A's lines: its own columns (-w: nothing cut,
// -noheader), or the -o fields, or -json (with -o's fields, else the
// columns of bjobs -A).
func writeArrays(arrays []*lsfout.ArrayCounts, o bjobsOpts) error {
	if o.format == "" && !o.json {
		if len(arrays) == 0 {
			return nil
		}
		return lsfout.WriteArrays(sys.stdout, arrays, o.wide, o.noHeader)
	}
	spec := o.format
	if spec == "" {
		spec = lsfout.ArraysColumns
	}
	f, err := lsfout.ParseArraysFormat(spec)
	if err != nil {
		return err
	}
	f.Now = time.Now()
	if o.json {
		return f.WriteJSON(sys.stdout, arrays)
	}
	if len(arrays) == 0 {
		return nil
	}
	return f.Write(sys.stdout, arrays, o.noHeader)
}

// inScope says whether a job in state s is one a query of that scope selects.
func inScope(scope api.QueryRequest_Scope, s api.JobState) bool {
	finished := s == api.JobState_DONE || s == api.JobState_EXIT
	switch scope {
	case api.QueryRequest_ALL:
		return true
	case api.QueryRequest_FINISHED:
		return finished
	case api.QueryRequest_PENDING:
		return s == api.JobState_PEND || s == api.JobState_PSUSP
	case api.QueryRequest_RUNNING:
		return s == api.JobState_RUN
	case api.QueryRequest_SUSPENDED:
		return s == api.JobState_USUSP || s == api.JobState_SSUSP || s == api.JobState_PSUSP
	}
	return !finished
}
