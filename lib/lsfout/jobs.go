package lsfout

import (
	"bytes"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"xce/lib/api"
)

// jobsHeader is the bjobs header, byte for byte (also for -w and -p).
const jobsHeader = "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n"

// execHostColumn is where bjobs puts each further execution host of a
// multi-host job, one per line.
const execHostColumn = 45

// ListingSpecFields are the JobSpec fields WriteJobs reads (command,
// command_is_script, queue, job_name, submit_host, user), by number: a
// query for the listing asks for these alone (QueryRequest.spec_fields).
var ListingSpecFields = []int32{1, 2, 3, 4, 61, 72}

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
	// About 90 bytes a line: one allocation for the whole table.
	b.Grow(len(jobsHeader) + 96*len(jobs))
	if !opt.NoHeader {
		b.WriteString(jobsHeader)
	}
	var row rowBuffers
	for _, j := range jobs {
		writeJobRow(&b, j, opt, &row)
	}
	return flush(w, &b)
}

// rowBuffers is what writeJobRow reuses from one row to the next: a
// scratch buffer, and the last submission time it formatted (jobs
// submitted in the same second share it).
type rowBuffers struct {
	scratch  []byte
	timeSec  int64
	timeText []byte
}

// writeJobRow writes one job's line (and its further hosts and pending
// reasons) straight into b, without a string per column.
func writeJobRow(b *bytes.Buffer, j *api.Job, opt JobsOptions, row *rowBuffers) {
	scratch := row.scratch
	defer func() { row.scratch = scratch }()
	s := submitted(j)
	hs := j.GetExecHosts()
	scratch = strconv.AppendInt(scratch[:0], j.GetJobId(), 10)
	writePadded(b, scratch, 7)
	b.WriteByte(' ')
	if opt.Wide {
		writePaddedString(b, s.GetUser(), 7)
		b.WriteByte(' ')
		writeFixed(b, StateName(j.GetState()), 5)
		b.WriteByte(' ')
		writePaddedString(b, effective(j).GetQueue(), 10)
		b.WriteByte(' ')
		writePaddedString(b, s.GetSubmitHost(), 11)
		b.WriteByte(' ')
		if len(hs) == 0 {
			writePaddedString(b, "   -    ", 11)
		} else {
			scratch = scratch[:0]
			for i, h := range hs {
				if i > 0 {
					scratch = append(scratch, ':')
				}
				scratch = appendHostSlots(scratch, h)
			}
			writePadded(b, scratch, 11)
		}
		b.WriteByte(' ')
		scratch = appendDisplayName(scratch[:0], j, s)
		writePadded(b, scratch, 10)
	} else {
		writeFixed(b, s.GetUser(), 7)
		b.WriteByte(' ')
		writeFixed(b, StateName(j.GetState()), 5)
		b.WriteByte(' ')
		writeFixed(b, effective(j).GetQueue(), 10)
		b.WriteByte(' ')
		writeFixed(b, s.GetSubmitHost(), 11)
		b.WriteByte(' ')
		if len(hs) == 0 {
			writePaddedString(b, "", 11)
		} else {
			scratch = appendHostSlots(scratch[:0], hs[0])
			writePadded(b, []byte(cut(string(scratch), 11)), 11)
		}
		b.WriteByte(' ')
		scratch = appendDisplayName(scratch[:0], j, s)
		if utf8.RuneCount(scratch) > 10 {
			name := string(scratch)
			writePaddedString(b, tailName(name, 10), 10)
		} else {
			writePadded(b, scratch, 10)
		}
	}
	b.WriteByte(' ')
	if ns := j.GetSubmitTime(); ns != 0 {
		sec := ns / int64(time.Second)
		if ns%int64(time.Second) < 0 {
			sec-- // floored, so that a second never spans two minutes
		}
		if sec != row.timeSec || row.timeText == nil {
			row.timeSec = sec
			row.timeText = time.Unix(0, ns).In(opt.loc()).AppendFormat(row.timeText[:0], "Jan _2 15:04")
		}
		b.Write(row.timeText)
	}
	b.WriteByte('\n')
	if !opt.Wide && len(hs) > 1 {
		for _, h := range hs[1:] {
			b.WriteString(spaces[:execHostColumn])
			scratch = appendHostSlots(scratch[:0], h)
			b.Write(scratch)
			b.WriteByte('\n')
		}
	}
	if opt.PendReasons && isPending(j.GetState()) {
		for _, r := range pendReasons(j) {
			b.WriteByte(' ')
			b.WriteString(r)
			b.WriteString(";\n")
		}
	}
	if st := j.GetState(); opt.SuspReasons && (st == api.JobState_SSUSP || st == api.JobState_USUSP) {
		// bjobs -s: the suspending reasons, as -p gives pending ones.
		for _, r := range suspendReasons(j) {
			b.WriteString(" " + r + ";\n")
		}
	}
}

// appendHostSlots appends a host as hostSlotNames writes it.
func appendHostSlots(dst []byte, h *api.HostSlots) []byte {
	if h.GetSlots() > 1 {
		dst = strconv.AppendInt(dst, int64(h.GetSlots()), 10)
		dst = append(dst, '*')
	}
	return append(dst, h.GetHost()...)
}

// appendDisplayName appends DisplayName(j) (s is j's submitted spec).
func appendDisplayName(dst []byte, j *api.Job, s *api.JobSpec) []byte {
	switch {
	case s.GetJobName() != "":
		dst = append(dst, s.GetJobName()...)
	case s.GetCommandIsScript():
		dst = append(dst, scriptFirstCommand(s.GetCommand())...)
	default:
		dst = append(dst, s.GetCommand()...)
	}
	if j.GetArrayIndex() > 0 {
		dst = append(dst, '[')
		dst = strconv.AppendInt(dst, int64(j.GetArrayIndex()), 10)
		dst = append(dst, ']')
	}
	return dst
}

// spaces is padding for the write helpers.
const spaces = "                                                                "

// writeSpaces writes n spaces.
func writeSpaces(b *bytes.Buffer, n int) {
	for n > len(spaces) {
		b.WriteString(spaces)
		n -= len(spaces)
	}
	if n > 0 {
		b.WriteString(spaces[:n])
	}
}

// writePaddedString writes padRight(s, width).
func writePaddedString(b *bytes.Buffer, s string, width int) {
	b.WriteString(s)
	writeSpaces(b, width-utf8.RuneCountInString(s))
}

// writePadded writes padRight(string(s), width).
func writePadded(b *bytes.Buffer, s []byte, width int) {
	b.Write(s)
	writeSpaces(b, width-utf8.RuneCount(s))
}

// writeFixed writes fixed(s, width).
func writeFixed(b *bytes.Buffer, s string, width int) {
	writePaddedString(b, cut(s, width), width)
}
