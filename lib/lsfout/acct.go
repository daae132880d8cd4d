package lsfout

import (
	"fmt"
	"io"
	"strings"
	"time"

	"xce/lib/api"
)

// AcctFilter is what bacct was asked for, as its header block states it.
// Empty lists mean "all".
type AcctFilter struct {
	Users    []string // -u (the invoking user by default); nil = all users
	Queues   []string // -q
	Projects []string // -P
	Hosts    []string // -m
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
// ignored): the "Accounting information about jobs that are:" block, with
// long (-l) a record per job, and the SUMMARY. The layout is that of LSF
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
// decimals; the throughput is jobs per hour between the first start and the
// last end, "Beginning time" and "Ending time" those two moments.
//
// A -l record is a blank line, the bjobs -l header paragraph, the Submitted,
// Dispatched and Completed events (folded like bjobs -l unless
// opt.Unformatted), a blank line, "Accounting information about this job:"
// with its CPU_T WAIT TURNAROUND STATUS HOG_FACTOR MEM SWAP table
// ("%10.2f %8d %14d %8s %14.4f %5dM %6dM", memory and swap being the peak
// resident memory and the swap in whole Mbytes), and a line of 78 "-".
func WriteAcct(w io.Writer, jobs []*api.Job, filter AcctFilter, long bool, opt JobsOptions) error {
	lw := &longWriter{opt: opt, loc: opt.loc()}
	b := &lw.b
	b.WriteString("Accounting information about jobs that are: \n")
	list := func(what string, items []string, all string) {
		if len(items) == 0 {
			b.WriteString("  - " + all + ".\n")
			return
		}
		b.WriteString("  - " + what + " " + strings.Join(items, " ") + ", \n")
	}
	list("submitted by users", filter.Users, "submitted by all users")
	list("accounted on projects", filter.Projects, "accounted on all projects")
	b.WriteString("  - completed normally or exited\n")
	list("executed on hosts", filter.Hosts, "executed on all hosts")
	list("submitted to queues", filter.Queues, "submitted to all queues")
	b.WriteString("  - accounted on all service classes.\n")
	b.WriteString(acctSeparator)

	var st acctStats
	for _, j := range jobs {
		if !isFinished(j.GetState()) {
			continue
		}
		m := acctMeasure(j)
		st.add(m)
		if long {
			lw.acctRecord(j, m)
		}
	}
	b.WriteString("\n")
	st.write(b, lw.loc)
	return flush(w, b)
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
func (lw *longWriter) acctRecord(j *api.Job, m acctJob) {
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
	hours := float64(s.end-s.begin) / float64(time.Hour)
	tput := 0.0
	if hours > 0 {
		tput = float64(s.n) / hours
	}
	line(acctCell("Total throughput:", f2(tput)) + fmt.Sprintf(" (jobs/hour)  during %7.2f hours", hours))
	line(acctCell("Beginning time:", FormatSubmitTime(s.begin, loc)), acctCell("Ending time:", FormatSubmitTime(s.end, loc)))
}
