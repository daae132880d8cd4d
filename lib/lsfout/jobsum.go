package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"xce/lib/api"
)

// jobsSumColumns are bjobs -sum's titles and their widths (the IBM example:
// every column left-justified and padded, the last one too).
var jobsSumColumns = []struct {
	title string
	width int
}{{"RUN", 11}, {"SSUSP", 12}, {"USUSP", 11}, {"UNKNOWN", 11}, {"PEND", 11}, {"FWD_PEND", 10}, {"PSUSP", 9}}

// WriteJobsSum writes bjobs -sum: the slots of jobs by state, RUN SSUSP
// USUSP UNKNOWN PEND FWD_PEND PSUSP. Pending jobs count their requested
// slots. XCE forwards no jobs to other clusters: FWD_PEND is always 0.
func WriteJobsSum(w io.Writer, jobs []*api.Job, noHeader bool) error {
	var n [7]int
	for _, j := range jobs {
		i := -1
		switch j.GetState() {
		case api.JobState_RUN:
			i = 0
		case api.JobState_SSUSP:
			i = 1
		case api.JobState_USUSP:
			i = 2
		case api.JobState_UNKWN:
			i = 3
		case api.JobState_PEND:
			i = 4
		case api.JobState_PSUSP:
			i = 6
		}
		if i >= 0 {
			n[i] += jobSlots(j)
		}
	}
	var b bytes.Buffer
	if !noHeader {
		for _, c := range jobsSumColumns {
			b.WriteString(padRight(c.title, c.width))
		}
		b.WriteByte('\n')
	}
	for i, c := range jobsSumColumns {
		b.WriteString(padRight(strconv.Itoa(n[i]), c.width))
	}
	b.WriteByte('\n')
	return flush(w, &b)
}

// ArrayCounts is one line of bjobs -A: an array and its elements by state.
type ArrayCounts struct {
	Job                                               *api.Job // any element: the id, name, spec and owner
	NJobs, Pend, Done, Run, Exit, Ssusp, Ususp, Psusp int
}

// CountArrays groups array elements by job id, in the order each array is
// first seen; jobs that are not array elements are left out. UNKWN
// elements count as running.
func CountArrays(jobs []*api.Job) []*ArrayCounts {
	var out []*ArrayCounts
	by := map[int64]*ArrayCounts{}
	for _, j := range jobs {
		if j.GetArrayIndex() <= 0 {
			continue
		}
		a := by[j.GetJobId()]
		if a == nil {
			a = &ArrayCounts{Job: j}
			by[j.GetJobId()] = a
			out = append(out, a)
		}
		a.NJobs++
		switch j.GetState() {
		case api.JobState_PEND:
			a.Pend++
		case api.JobState_DONE:
			a.Done++
		case api.JobState_RUN, api.JobState_UNKWN:
			a.Run++
		case api.JobState_EXIT:
			a.Exit++
		case api.JobState_SSUSP:
			a.Ssusp++
		case api.JobState_USUSP:
			a.Ususp++
		case api.JobState_PSUSP:
			a.Psusp++
		}
	}
	return out
}

// arraysHeader is bjobs -A's header, byte for byte.
const arraysHeader = "JOBID    ARRAY_SPEC  OWNER   NJOBS PEND DONE  RUN EXIT SSUSP USUSP PSUSP\n"

// WriteArrays writes bjobs -A, one line per array (OpenLava's
// "%-7d  %-8.8s %8.8s   %5d %4d %4d %4d %4d %5d %5d %5d"). ARRAY_SPEC is
// the job name with its index list ("sweep[1-100]"), cut to 8 columns
// unless wide (-w); OWNER is the submitting user, right-aligned and cut to 8.
func WriteArrays(w io.Writer, arrays []*ArrayCounts, wide, noHeader bool) error {
	var b bytes.Buffer
	if !noHeader {
		b.WriteString(arraysHeader)
	}
	for _, a := range arrays {
		spec := submitted(a.Job).GetJobName() + submitted(a.Job).GetArraySpec()
		owner := submitted(a.Job).GetUser()
		if wide {
			spec, owner = padRight(spec, 8), padLeft(owner, 8)
		} else {
			spec, owner = fixed(spec, 8), padLeft(cut(owner, 8), 8)
		}
		fmt.Fprintf(&b, "%-7d  %s %s   %5d %4d %4d %4d %4d %5d %5d %5d\n",
			a.Job.GetJobId(), spec, owner, a.NJobs, a.Pend, a.Done, a.Run, a.Exit, a.Ssusp, a.Ususp, a.Psusp)
	}
	return flush(w, &b)
}

// statsHeader is bjobs -W's header: the bjobs header and seven columns.
const statsHeader = "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME  PROJ_NAME CPU_USED MEM SWAP PIDS START_TIME FINISH_TIME\n"

// WriteJobsStats writes bjobs -W: the -w row (nothing cut, hosts joined by
// ":") with SUBMIT_TIME as MM/DD-HH:MM:SS, followed by PROJ_NAME ("%-10s"),
// CPU_USED as HHH:MM:SS.cc, MEM and SWAP in Kbytes ("%-6d"), the PIDS joined
// by ",", START_TIME and FINISH_TIME as MM/DD-HH:MM:SS. As in LSF's output,
// only the headers are single words, so the rows split on blanks into the
// same columns as the header as long as the job name has no blank. A value
// the job does not have yet (no usage, not started, not finished) is "-".
func WriteJobsStats(w io.Writer, jobs []*api.Job, opt JobsOptions) error {
	var b bytes.Buffer
	if !opt.NoHeader {
		b.WriteString(statsHeader)
	}
	loc := opt.loc()
	for _, j := range jobs {
		s := submitted(j)
		exec := strings.Join(ExecHosts(j), ":")
		if exec == "" {
			exec = "   -    "
		}
		cols := []string{
			padRight(strconv.FormatInt(j.GetJobId(), 10), 7),
			padRight(s.GetUser(), 7),
			fixed(StateName(j.GetState()), 5),
			padRight(effective(j).GetQueue(), 10),
			padRight(s.GetSubmitHost(), 11),
			padRight(exec, 11),
			padRight(DisplayName(j), 10),
			statsTime(j.GetSubmitTime(), loc),
			padRight(projectName(j), 10),
		}
		if u := j.GetUsage(); u != nil {
			ms := u.GetCpuTimeMs()
			cols = append(cols,
				fmt.Sprintf("%03d:%02d:%02d.%02d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000/10),
				padRight(strconv.FormatInt(u.GetMemKb(), 10), 6),
				padRight(strconv.FormatInt(u.GetSwapKb(), 10), 6),
				dashIfEmpty(pidList(j)))
		} else {
			cols = append(cols, "-", padRight("-", 6), padRight("-", 6), "-")
		}
		cols = append(cols, statsTime(j.GetStartTime(), loc), statsTime(j.GetEndTime(), loc))
		b.WriteString(strings.Join(cols, " "))
		b.WriteByte('\n')
	}
	return flush(w, &b)
}

// statsTime is a time as bjobs -W prints it: MM/DD-HH:MM:SS, "-" for none.
func statsTime(ns int64, loc *time.Location) string {
	if ns == 0 {
		return "-"
	}
	return time.Unix(0, ns).In(locOrLocal(loc)).Format("01/02-15:04:05")
}
