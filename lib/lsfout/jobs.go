package lsfout

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"xce/lib/api"
)

// jobsHeader is the bjobs header, byte for byte (also for -w and -p).
const jobsHeader = "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n"

// execHostColumn is where bjobs puts each further execution host of a
// multi-host job, one per line.
const execHostColumn = 45

// WriteJobs writes the default bjobs table (and -w, -noheader, -p) for jobs in
// the order given. Columns are cut to LSF's widths (OpenLava's
// "%-7d %-7.7s %-5.5s %-10.10s %-11.11s %-11.11s %-10.10s %s"); a JOB_NAME
// longer than 10 becomes "*" and its last 9 characters. A job on several
// hosts shows the first on its line and each other one alone on a line,
// starting in column 45. With opt.Wide nothing is cut, the hosts are joined
// by ":" on the job's line and a job without hosts shows "   -    ". With
// opt.PendReasons each pending job's line is followed by its reasons, one per
// line as " <reason>;".
func WriteJobs(w io.Writer, jobs []*api.Job, opt JobsOptions) error {
	var b bytes.Buffer
	if !opt.NoHeader {
		b.WriteString(jobsHeader)
	}
	for _, j := range jobs {
		writeJobRow(&b, j, opt)
	}
	return flush(w, &b)
}

func writeJobRow(b *bytes.Buffer, j *api.Job, opt JobsOptions) {
	s := submitted(j)
	id := strconv.FormatInt(j.GetJobId(), 10)
	hosts := ExecHosts(j)
	var cols []string
	if opt.Wide {
		exec := strings.Join(hosts, ":")
		if exec == "" {
			exec = "   -    "
		}
		cols = []string{
			padRight(id, 7),
			padRight(s.GetUser(), 7),
			fixed(StateName(j.GetState()), 5),
			padRight(effective(j).GetQueue(), 10),
			padRight(s.GetSubmitHost(), 11),
			padRight(exec, 11),
			padRight(DisplayName(j), 10),
			FormatSubmitTime(j.GetSubmitTime(), opt.loc()),
		}
	} else {
		first := ""
		if len(hosts) > 0 {
			first = hosts[0]
		}
		cols = []string{
			padRight(id, 7),
			fixed(s.GetUser(), 7),
			fixed(StateName(j.GetState()), 5),
			fixed(effective(j).GetQueue(), 10),
			fixed(s.GetSubmitHost(), 11),
			fixed(first, 11),
			padRight(tailName(DisplayName(j), 10), 10),
			FormatSubmitTime(j.GetSubmitTime(), opt.loc()),
		}
	}
	b.WriteString(strings.Join(cols, " "))
	b.WriteByte('\n')
	if !opt.Wide && len(hosts) > 1 {
		for _, h := range hosts[1:] {
			b.WriteString(strings.Repeat(" ", execHostColumn))
			b.WriteString(h)
			b.WriteByte('\n')
		}
	}
	if opt.PendReasons && isPending(j.GetState()) {
		for _, r := range pendReasons(j) {
			b.WriteString(" " + r + ";\n")
		}
	}
}
