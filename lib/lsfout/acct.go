package lsfout

import (
	"fmt"
	"io"
	"strings"
	"time"

	"xce/lib/api"
)

// AcctFilter is what bacct was asked for, as its header block states it.
// Empty lists and zero values mean "all".
type AcctFilter struct {
	Users    []string // -u (the invoking user by default); nil = all users
	Queues   []string // -q
	Projects []string // -P
	Hosts    []string // -m
	// -d and -e: only DONE jobs, only EXIT jobs (both: either).
	Done, Exited bool
	Exceptions   bool   // -x
	App          string // -app
	Name         string // -J
	UserGroup    string // -G
	JobGroup     string // -g
	// -S, -D, -C: submitted, dispatched, completed in the range (zero
	// ranges select all).
	Submitted, Dispatched, Completed TimeSpan
}

// TimeSpan is a range of times, both ends included; the zero value is
// no range.
type TimeSpan struct{ Start, End time.Time }

// AcctFormat is what bacct prints for each job before the SUMMARY.
type AcctFormat int

const (
	AcctSummary AcctFormat = iota // nothing: the SUMMARY alone
	AcctBrief                     // -b: one line per job
	AcctLong                      // -l: a record per job
)

// AcctOptions says how bacct prints.
type AcctOptions struct {
	JobsOptions // Unformatted (-UF), Now, Location
	Format      AcctFormat
	// Wide (-w): -b cuts no column.
	Wide bool
	// Exceptions (-x): -l shows each job's EXCEPTION STATUS.
	Exceptions bool
}

// acctSeparator ends bacct's header block and each -l record.
var acctSeparator = strings.Repeat("-", 78) + "\n"

// acctCell is one "label value" half of a SUMMARY line: the label followed
// by the value right-aligned so that the cell is 34 columns wide (wider
// values push the line right, as printf does).
func acctCell(label, value string) string {
	return label + padLeft(value, 34-runeLen(label))
}

// WriteAcct writes bacct for finished jobs (DONE and EXIT; others are
// ignored): the header block, the record of each job (-l: long) and the
// SUMMARY; see AcctWriter.
func WriteAcct(w io.Writer, jobs []*api.Job, filter AcctFilter, long bool, opt JobsOptions) error {
	o := AcctOptions{JobsOptions: opt}
	if long {
		o.Format = AcctLong
	}
	aw := NewAcctWriter(w, filter, o)
	for _, j := range jobs {
		if err := aw.Add(j); err != nil {
			return err
		}
	}
	return aw.Close()
}

// AcctWriter writes bacct as the records come (a streamed answer need not
// be held whole): NewAcctWriter, Add for each finished job (DONE or EXIT;
// others are ignored), Close for the SUMMARY. The layout is that of LSF
// 10.1 output as seen in the wild:
//
//	Accounting information about jobs that are: ␠
//	  - submitted by users user1, ␠   (or "  - submitted by all users.")
//	  - accounted on all projects.
//	  - completed normally or exited
//	  - executed on all hosts.
//	  - submitted to all queues.
//	  - accounted on all service classes.
//	------------------------------------------------------------------------------
//
//	SUMMARY:      ( time unit: second ) ␠
//	 Total number of done jobs:       8      Total number of exited jobs:     2
//	 ...
//
// Each SUMMARY line holds one or two 34-column cells, the first after one
// space, the second after six more. Times are seconds: CPU and wait times
// with one decimal, turnaround and run times whole; hog factors (CPU time
// over turnaround) and expansion factors (turnaround over run time) with two
// decimals; the throughput is jobs per hour (T = N/(ET-BT), LSF's formula)
// between the first start and the last end, in whole seconds, or over
// the -C period when both its ends are given; "Beginning time" and "Ending
// time" are those two moments.
//
// A -l record is a blank line, the bjobs -l header paragraph, the Submitted,
// Dispatched and Completed events (folded like bjobs -l unless
// opt.Unformatted), with -x the EXCEPTION STATUS line of a job that has
// exceptions (as bjobs -l prints it), a blank line, "Accounting information
// about this job:" with its CPU_T WAIT TURNAROUND STATUS HOG_FACTOR MEM SWAP
// table ("%10.2f %8d %14d %8s %14.4f %5dM %6dM", memory and swap being the
// peak resident memory and the swap in whole Mbytes), and a line of 78 "-".
//
// XCE's choices where LSF's output could not be confirmed:
//   - -b prints, after the header block, a table with a line per job:
//     JOBID, STAT, U/UID, QUEUE, SUBMIT_TIME, CPU_T, WAIT, TURNAROUND,
//     FROM, EXEC_ON, JOB_NAME (bjobs's widths and cuts for the names; the
//     first execution host; -w cuts nothing and joins the hosts with ":");
//   - the header block states -d ("completed normally"), -e ("exited"),
//     and, only when given, -x, -app, -J, -G, -g and the -S/-D/-C ranges.
type AcctWriter struct {
	w      io.Writer
	filter AcctFilter
	opt    AcctOptions
	lw     *longWriter
	st     acctStats
	headed bool
	err    error
}

// NewAcctWriter starts bacct's output; nothing is written before the
// first job (or Close).
func NewAcctWriter(w io.Writer, filter AcctFilter, opt AcctOptions) *AcctWriter {
	return &AcctWriter{w: w, filter: filter, opt: opt, lw: &longWriter{opt: opt.JobsOptions, loc: opt.loc()}}
}

// Count is how many jobs were added.
func (a *AcctWriter) Count() int { return a.st.n }

// flushAt is how much output is held before it is written.
const flushAt = 64 << 10

// Add counts a job and writes its record (-b, -l).
func (a *AcctWriter) Add(j *api.Job) error {
	if !isFinished(j.GetState()) || a.err != nil {
		return a.err
	}
	a.header()
	m := acctMeasure(j)
	a.st.add(m)
	switch a.opt.Format {
	case AcctLong:
		a.lw.acctRecord(j, m, a.opt.Exceptions)
	case AcctBrief:
		a.brief(j, m)
	}
	if a.lw.b.Len() >= flushAt {
		a.err = flush(a.w, &a.lw.b)
		a.lw.b.Reset()
	}
	return a.err
}

// Close writes the SUMMARY.
func (a *AcctWriter) Close() error {
	if a.err != nil {
		return a.err
	}
	a.header()
	a.lw.b.WriteString("\n")
	// With -C time0,time1 the throughput is over that period (LSF's bacct:
	// "use -C time0,time1 to specify the job start time as time0 and the
	// end time as time1").
	if c := a.filter.Completed; a.st.n > 0 && !c.Start.IsZero() && !c.End.IsZero() {
		a.st.begin, a.st.end = c.Start.UnixNano(), c.End.UnixNano()
	}
	a.st.write(&a.lw.b, a.lw.loc)
	a.err = flush(a.w, &a.lw.b)
	a.lw.b.Reset()
	return a.err
}

// acctBriefHeader heads bacct -b's table.
const acctBriefHeader = "JOBID   STAT  U/UID   QUEUE      SUBMIT_TIME       CPU_T     WAIT TURNAROUND FROM        EXEC_ON     JOB_NAME\n"

// header writes the block that says what was selected, once.
func (a *AcctWriter) header() {
	if a.headed {
		return
	}
	a.headed = true
	b := &a.lw.b
	f := a.filter
	b.WriteString("Accounting information about jobs that are: \n")
	list := func(what string, items []string, all string) {
		if len(items) == 0 {
			b.WriteString("  - " + all + ".\n")
			return
		}
		b.WriteString("  - " + what + " " + strings.Join(items, " ") + ", \n")
	}
	given := func(what, item string) {
		if item != "" {
			b.WriteString("  - " + what + " " + item + ", \n")
		}
	}
	between := func(what string, r TimeSpan) {
		if r == (TimeSpan{}) {
			return
		}
		const layout = "Mon Jan _2 15:04:05 2006"
		loc := a.lw.loc
		fmt.Fprintf(b, "  - %s between %s and %s.\n", what, r.Start.In(loc).Format(layout), r.End.In(loc).Format(layout))
	}
	list("submitted by users", f.Users, "submitted by all users")
	list("accounted on projects", f.Projects, "accounted on all projects")
	switch {
	case f.Done && !f.Exited:
		b.WriteString("  - completed normally\n")
	case f.Exited && !f.Done:
		b.WriteString("  - exited\n")
	default:
		b.WriteString("  - completed normally or exited\n")
	}
	if f.Exceptions {
		b.WriteString("  - with exceptions (overrun, underrun, idle, runtime_est_exceeded)\n")
	}
	between("submitted", f.Submitted)
	between("dispatched", f.Dispatched)
	between("completed", f.Completed)
	list("executed on hosts", f.Hosts, "executed on all hosts")
	list("submitted to queues", f.Queues, "submitted to all queues")
	given("of application profile", f.App)
	given("named", f.Name)
	given("of user group", f.UserGroup)
	if f.JobGroup != "" {
		given("in job group (and its subgroups)", f.JobGroup)
	}
	b.WriteString("  - accounted on all service classes.\n")
	b.WriteString(acctSeparator)
	if a.opt.Format == AcctBrief {
		b.WriteString("\n" + acctBriefHeader)
	}
}

// brief writes one job of bacct -b.
func (a *AcctWriter) brief(j *api.Job, m acctJob) {
	s := submitted(j)
	hosts := ExecHosts(j)
	exec := "-"
	var user, queue, from, name string
	if a.opt.Wide {
		if len(hosts) > 0 {
			exec = strings.Join(hosts, ":")
		}
		user, queue, from, name = s.GetUser(), effective(j).GetQueue(), s.GetSubmitHost(), DisplayName(j)
	} else {
		if len(hosts) > 0 {
			exec = cut(hosts[0], 11)
		}
		user, queue, from = cut(s.GetUser(), 7), cut(effective(j).GetQueue(), 10), cut(s.GetSubmitHost(), 11)
		name = tailName(DisplayName(j), 10)
	}
	status := "DONE"
	if !m.done {
		status = "EXIT"
	}
	fmt.Fprintf(&a.lw.b, "%-7d %-5s %-7s %-10s %-12s %10.2f %8d %10d %-11s %-11s %s\n",
		j.GetJobId(), status, user, queue, FormatSubmitTime(j.GetSubmitTime(), a.lw.loc),
		m.cpu, m.wait, m.turnaround, from, exec, name)
}

// acctJob is what bacct measures of one finished job, in seconds.
type acctJob struct {
	done                  bool
	cpu                   float64
	wait, turnaround, run int64
	hog                   float64
	begin, end            int64 // unix nanoseconds: start (or submission), end
	maxMemKb, swapKb      int64
}

func acctMeasure(j *api.Job) acctJob {
	sec := func(ns int64) int64 { return ns / int64(time.Second) }
	m := acctJob{done: j.GetState() == api.JobState_DONE, end: j.GetEndTime()}
	submit, start, end := j.GetSubmitTime(), j.GetStartTime(), j.GetEndTime()
	if end == 0 {
		end = firstSet(start, submit)
		m.end = end
	}
	m.begin = firstSet(start, submit)
	if start != 0 {
		m.wait = sec(start) - sec(submit)
		m.run = sec(end) - sec(start)
	} else {
		m.wait = sec(end) - sec(submit)
	}
	m.turnaround = sec(end) - sec(submit)
	if u := j.GetUsage(); u != nil {
		m.cpu = float64(u.GetCpuTimeMs()) / 1000
		m.maxMemKb, m.swapKb = u.GetMaxMemKb(), u.GetSwapKb()
	}
	if m.turnaround > 0 {
		m.hog = m.cpu / float64(m.turnaround)
	}
	return m
}

// acctRecord writes one job of bacct -l.
func (lw *longWriter) acctRecord(j *api.Job, m acctJob, exceptions bool) {
	lw.b.WriteByte('\n')
	lw.para(longHeader(j))
	lw.event(j.GetSubmitTime(), submittedText(j, lw.loc))
	if j.GetStartTime() != 0 && len(j.GetExecHosts()) > 0 {
		hosts := "<" + strings.Join(ExecHosts(j), "> <") + ">"
		n := allocSlots(j)
		text := fmt.Sprintf("Dispatched %d Task(s) on Host(s) %s, Allocated %d Slot(s) on Host(s) %s", n, hosts, n, hosts)
		if rr := strings.Join(effective(j).GetResReq(), " "); rr != "" {
			text += ", Effective RES_REQ <" + rr + " >"
		}
		lw.event(j.GetStartTime(), text+";")
	}
	status, text := "done", "Completed <done>."
	if !m.done {
		status, text = "exit", "Completed <exit>."
		if j.GetTermReasonSet() {
			text = "Completed <exit>; " + TermReasonText(j.GetTermReason()) + "."
		}
	}
	lw.event(m.end, text)
	if exc := api.ExceptionNames(j.GetExceptions()); exceptions && len(exc) > 0 {
		lw.b.WriteString("\n EXCEPTION STATUS:  " + strings.Join(exc, "  ") + "\n")
	}
	lw.b.WriteString("\nAccounting information about this job:\n")
	lw.b.WriteString("     CPU_T     WAIT     TURNAROUND   STATUS     HOG_FACTOR    MEM    SWAP\n")
	fmt.Fprintf(&lw.b, "%10.2f %8d %14d %8s %14.4f %5dM %6dM\n",
		m.cpu, m.wait, m.turnaround, status, m.hog, m.maxMemKb/1024, m.swapKb/1024)
	lw.b.WriteString(acctSeparator)
}

// acctStats accumulates the SUMMARY.
type acctStats struct {
	n, done, exited        int
	cpu, cpuMax, cpuMin    float64
	wait                   int64
	waitMax, waitMin       int64
	turn, turnMax, turnMin int64
	hog, hogMax, hogMin    float64
	run, runMax, runMin    int64
	nExp                   int
	exp, expMax, expMin    float64
	begin, end             int64
}

func (s *acctStats) add(m acctJob) {
	first := s.n == 0
	s.n++
	if m.done {
		s.done++
	} else {
		s.exited++
	}
	s.cpu += m.cpu
	s.wait += m.wait
	s.turn += m.turnaround
	s.hog += m.hog
	s.run += m.run
	if first {
		s.cpuMax, s.cpuMin = m.cpu, m.cpu
		s.waitMax, s.waitMin = m.wait, m.wait
		s.turnMax, s.turnMin = m.turnaround, m.turnaround
		s.hogMax, s.hogMin = m.hog, m.hog
		s.runMax, s.runMin = m.run, m.run
		s.begin, s.end = m.begin, m.end
	}
	s.cpuMax, s.cpuMin = max(s.cpuMax, m.cpu), min(s.cpuMin, m.cpu)
	s.waitMax, s.waitMin = max(s.waitMax, m.wait), min(s.waitMin, m.wait)
	s.turnMax, s.turnMin = max(s.turnMax, m.turnaround), min(s.turnMin, m.turnaround)
	s.hogMax, s.hogMin = max(s.hogMax, m.hog), min(s.hogMin, m.hog)
	s.runMax, s.runMin = max(s.runMax, m.run), min(s.runMin, m.run)
	s.begin, s.end = min(s.begin, m.begin), max(s.end, m.end)
	if m.run > 0 {
		e := float64(m.turnaround) / float64(m.run)
		if s.nExp == 0 {
			s.expMax, s.expMin = e, e
		}
		s.nExp++
		s.exp += e
		s.expMax, s.expMin = max(s.expMax, e), min(s.expMin, e)
	}
}

func (s *acctStats) write(b interface{ WriteString(string) (int, error) }, loc *time.Location) {
	n := float64(max(s.n, 1))
	line := func(cells ...string) {
		b.WriteString(" " + strings.Join(cells, "      ") + "\n")
	}
	f1 := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	f2 := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	d := func(v int64) string { return fmt.Sprint(v) }
	b.WriteString("SUMMARY:      ( time unit: second ) \n")
	line(acctCell("Total number of done jobs:", fmt.Sprint(s.done)), acctCell("Total number of exited jobs:", fmt.Sprint(s.exited)))
	line(acctCell("Total CPU time consumed:", f1(s.cpu)), acctCell("Average CPU time consumed:", f1(s.cpu/n)))
	line(acctCell("Maximum CPU time of a job:", f1(s.cpuMax)), acctCell("Minimum CPU time of a job:", f1(s.cpuMin)))
	line(acctCell("Total wait time in queues:", f1(float64(s.wait))))
	line(acctCell("Average wait time in queue:", f1(float64(s.wait)/n)))
	line(acctCell("Maximum wait time in queue:", f1(float64(s.waitMax))), acctCell("Minimum wait time in queue:", f1(float64(s.waitMin))))
	line(acctCell("Average turnaround time:", d(int64(float64(s.turn)/n))) + " (seconds/job)")
	line(acctCell("Maximum turnaround time:", d(s.turnMax)), acctCell("Minimum turnaround time:", d(s.turnMin)))
	line(acctCell("Average hog factor of a job:", f2(s.hog/n)) + " ( cpu time / turnaround time )")
	line(acctCell("Maximum hog factor of a job:", f2(s.hogMax)), acctCell("Minimum hog factor of a job:", f2(s.hogMin)))
	expAvg := 0.0
	if s.nExp > 0 {
		expAvg = s.exp / float64(s.nExp)
	}
	line("Average expansion factor of a job:  " + f2(expAvg) + " ( turnaround time / run time )")
	line("Maximum expansion factor of a job:  " + f2(s.expMax))
	line("Minimum expansion factor of a job:  " + f2(s.expMin))
	line(acctCell("Total Run time consumed:", d(s.run)), acctCell("Average Run time consumed:", d(int64(float64(s.run)/n))))
	line(acctCell("Maximum Run time of a job:", d(s.runMax)), acctCell("Minimum Run time of a job:", d(s.runMin)))
	// In whole seconds, as LSF's time_t accounting times are.
	hours := float64(s.end/int64(time.Second)-s.begin/int64(time.Second)) / 3600
	tput := 0.0
	if hours > 0 {
		tput = float64(s.n) / hours
	}
	line(acctCell("Total throughput:", f2(tput)) + fmt.Sprintf(" (jobs/hour)  during %7.2f hours", hours))
	line(acctCell("Beginning time:", FormatSubmitTime(s.begin, loc)), acctCell("Ending time:", FormatSubmitTime(s.end, loc)))
}
