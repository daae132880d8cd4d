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

const (
	// wrapWidth is the cursor position at which LSF's prtLine breaks a line:
	// the cursor is 1 at the start of a line, so the first line holds 79
	// characters.
	wrapWidth = 80
	// wrapIndent is the number of spaces that start each continuation line;
	// the cursor is then 22, so a continuation holds 58 characters.
	wrapIndent = 21
)

// eventIndent lines up a paragraph's further lines with the text after the
// event time.
var eventIndent = strings.Repeat(" ", wrapIndent)

// Wrap folds text the way LSF's bjobs -l and bhist -l do (OpenLava prtLine):
// characters are emitted one by one; when 79 have been written on a line and
// another follows, a newline and 21 spaces are inserted first, and if that
// character is a space it is dropped. Continuation lines therefore hold 21
// spaces and 58 characters. Words are cut anywhere. A "\n" in s starts a
// fresh line. Columns count runes, not bytes.
func Wrap(s string) string {
	var b strings.Builder
	rs := []rune(s)
	col := 1
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == '\n' {
			b.WriteRune(r)
			col = 1
			continue
		}
		if col == wrapWidth {
			if r == ' ' {
				i++
				if i == len(rs) {
					break
				}
				if r = rs[i]; r == '\n' {
					b.WriteRune(r)
					col = 1
					continue
				}
			}
			b.WriteByte('\n')
			b.WriteString(eventIndent)
			col = wrapIndent + 1
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// LongSeparator separates the records of bjobs -l (exported for callers
// that print records in several parts).
var LongSeparator = strings.Repeat("-", 78) + "\n"

// thresholdTable is the SCHEDULING PARAMETERS table of a job, which has no
// load thresholds of its own (OpenLava's printThresholds with every index
// undefined, trailing spaces included).
const thresholdTable = "           r15s   r1m  r15m   ut      pg    io   ls    it    tmp    swp    mem\n" +
	" loadSched   -     -     -     -       -     -    -     -     -      -      -  \n" +
	" loadStop    -     -     -     -       -     -    -     -     -      -      -  \n"

// WriteJobsLong writes bjobs -l (or, with opt.Unformatted, bjobs -UF) for
// jobs in the order given. Each record starts with a blank line; records are
// separated by a line of 78 "-". The header paragraph and each time-stamped
// event paragraph are folded by Wrap unless opt.Unformatted.
//
// A record holds: the header (Job, Job Name if -J was given, User, Project,
// Application, User Group, Job Group, Mail, Status, Queue, Job Priority,
// Command, Job Description); the Submitted paragraph; the CPULIMIT/RUNLIMIT and MEMLIMIT
// tables when the job has such limits; the Started paragraph once the job
// has started, which ends with "Output spooled to <file>" when the job has no
// -o file but a spool file (an XCE addition); then by state the finish lines
// (DONE, EXIT), the resource usage (RUN, UNKWN, SSUSP, USUSP), MEMORY USAGE,
// PENDING REASONS (PEND, PSUSP) or SUSPENDING REASONS (SSUSP, USUSP); the
// EXCEPTION STATUS line of a job with exceptions (the resource usage then
// shows IDLE_FACTOR for an idle job); and last the SCHEDULING PARAMETERS
// table and the RESOURCE REQUIREMENT DETAILS;
// then, for a job whose effective spec records where its values came from
// (JobSpec.origin), the EFFECTIVE SETTINGS section (an XCE addition).
func WriteJobsLong(w io.Writer, jobs []*api.Job, opt JobsOptions) error {
	lw := longWriter{opt: opt, loc: opt.loc()}
	for i, j := range jobs {
		if i > 0 {
			lw.b.WriteString(LongSeparator)
		}
		lw.job(j)
	}
	return flush(w, &lw.b)
}

type longWriter struct {
	b   bytes.Buffer
	opt JobsOptions
	loc *time.Location
}

// para writes one logical line, folded unless -UF.
func (lw *longWriter) para(text string) {
	if !lw.opt.Unformatted {
		text = Wrap(text)
	}
	lw.b.WriteString(text)
	lw.b.WriteByte('\n')
}

// event writes a time-stamped paragraph.
func (lw *longWriter) event(ns int64, text string) {
	lw.para(FormatEventTime(ns, lw.loc) + ": " + text)
}

func (lw *longWriter) job(j *api.Job) {
	state := j.GetState()
	started := j.GetStartTime() != 0 && len(j.GetExecHosts()) > 0 && !isPending(state)

	lw.b.WriteByte('\n')
	lw.para(longHeader(j))
	lw.event(j.GetSubmitTime(), submittedText(j, lw.loc))
	lw.limits(effective(j))
	if started {
		lw.event(j.GetStartTime(), startedText(j))
	}
	switch state {
	case api.JobState_DONE, api.JobState_EXIT:
		lw.finish(j, started)
		lw.memoryUsage(j)
	case api.JobState_PEND, api.JobState_PSUSP:
		lw.b.WriteString(" PENDING REASONS:\n")
		for _, r := range pendReasons(j) {
			lw.b.WriteString(" " + r + ";\n")
		}
	case api.JobState_RUN, api.JobState_UNKWN:
		lw.usage(j)
		lw.memoryUsage(j)
	case api.JobState_SSUSP, api.JobState_USUSP:
		lw.usage(j)
		lw.memoryUsage(j)
		lw.b.WriteString(" SUSPENDING REASONS:\n")
		for _, r := range suspendReasons(j) {
			lw.b.WriteString(" " + r + ";\n")
		}
	}
	if exc := api.ExceptionNames(j.GetExceptions()); len(exc) > 0 {
		lw.b.WriteString("\n EXCEPTION STATUS:  " + strings.Join(exc, "  ") + "\n")
	}
	lw.b.WriteString("\n SCHEDULING PARAMETERS:\n")
	lw.b.WriteString(thresholdTable)

	combined := combinedResReq(effective(j).GetResReq())
	// Effective is what the job was dispatched with: "-" until then (LSF).
	eff := "-"
	if started {
		eff = combined
	}
	lw.b.WriteString("\n RESOURCE REQUIREMENT DETAILS:\n")
	lw.b.WriteString(" Combined: " + combined + "\n")
	lw.b.WriteString(" Effective: " + eff + "\n")
	gpuLongJob(&lw.b, j, started)
	instancesLong(&lw.b, j)
	claimLong(&lw.b, j)
	effectiveSettings(&lw.b, effective(j))
}

// projectName is the job's project; LSF's default project is "default".
func projectName(j *api.Job) string {
	if p := effective(j).GetProject(); p != "" {
		return p
	}
	return "default"
}

// interactiveModes are bjobs -l's words for an interactive job (LSF's).
var interactiveModes = map[api.Interactive]string{
	api.Interactive_PLAIN:     "Interactive mode",
	api.Interactive_PTY:       "Interactive pseudo-terminal mode",
	api.Interactive_PTY_SHELL: "Interactive pseudo-terminal shell mode",
}

func longHeader(j *api.Job) string {
	s, e := submitted(j), effective(j)
	items := []string{"Job <" + JobIDString(j) + ">"}
	if s.GetJobName() != "" {
		items = append(items, "Job Name <"+DisplayName(j)+">")
	}
	items = append(items, "User <"+s.GetUser()+">", "Project <"+projectName(j)+">")
	if e.GetApp() != "" {
		items = append(items, "Application <"+e.GetApp()+">")
	}
	if e.GetUserGroup() != "" {
		items = append(items, "User Group <"+e.GetUserGroup()+">")
	}
	if g := api.JobGroupPath(e.GetJobGroup()); g != "" {
		items = append(items, "Job Group <"+g+">")
	}
	if s.GetMailUser() != "" {
		items = append(items, "Mail <"+s.GetMailUser()+">")
	}
	items = append(items, "Status <"+StateName(j.GetState())+">", "Queue <"+e.GetQueue()+">")
	if e.GetUserPriority() > 0 {
		items = append(items, "Job Priority <"+strconv.Itoa(int(e.GetUserPriority()))+">")
	}
	if mode := interactiveModes[s.GetInteractive()]; mode != "" {
		items = append(items, mode)
	}
	items = append(items, "Command <"+CommandString(j)+">")
	if s.GetDescription() != "" {
		items = append(items, "Job Description <"+s.GetDescription()+">")
	}
	return strings.Join(items, ", ")
}

func submittedText(j *api.Job, loc *time.Location) string {
	s := submitted(j)
	var b strings.Builder
	b.WriteString("Submitted from host <" + s.GetSubmitHost() + ">")
	if s.GetHold() {
		b.WriteString(" with hold")
	}
	b.WriteString(", CWD <" + submitCWD(j) + ">")
	item := func(key, val string) {
		if val != "" {
			b.WriteString(", " + key + " <" + val + ">")
		}
	}
	if s.GetCwd() != "" {
		item("Specified CWD", DisplayCWD(s.GetCwd(), s.GetHome()))
	}
	overwrite := func(ow bool) string {
		if ow {
			return " (overwrite)"
		}
		return ""
	}
	item("Output File"+overwrite(s.GetOutputOverwrite()), s.GetOutputFile())
	item("Error File"+overwrite(s.GetErrorOverwrite()), s.GetErrorFile())
	item("Input File", s.GetInputFile())
	if t := s.GetBeginTime(); t > 0 {
		item("Specified Start Time", FormatEventTime(t*int64(time.Second), loc))
	}
	if t := s.GetTermTime(); t > 0 {
		item("Specified Termination Time", FormatEventTime(t*int64(time.Second), loc))
	}
	switch {
	case s.GetNotifyBegin() && s.GetNotifyEnd():
		b.WriteString(", Notify when job begins/ends")
	case s.GetNotifyBegin():
		b.WriteString(", Notify when job begins")
	case s.GetNotifyEnd():
		b.WriteString(", Notify when job ends")
	}
	if s.GetExclusive() {
		b.WriteString(", Exclusive Execution")
	}
	if s.GetRerunnable() {
		b.WriteString(", Re-runnable")
	}
	if lo, hi := taskRange(s); hi > 1 {
		if lo == hi {
			fmt.Fprintf(&b, ", %d Task(s)", lo)
		} else {
			fmt.Fprintf(&b, ", %d-%d Task(s)", lo, hi)
		}
	}
	item("Requested Resources", strings.Join(s.GetResReq(), " "))
	item("Requested GPU", s.GetGpu())
	item("Dependency Condition", s.GetDependency())
	item("Login Shell", s.GetLoginShell())
	item("Pre-execute Command", s.GetPreExec())
	item("Post-execute Command", s.GetPostExec())
	if hosts := s.GetHosts(); len(hosts) > 0 {
		b.WriteString(", Specified Hosts <" + strings.Join(hosts, ">, <") + ">")
	}
	if p := s.GetUserPriority(); p > 0 {
		item("User Priority", strconv.Itoa(int(p)))
	}
	b.WriteString(";")
	return b.String()
}

// taskRange is the -n min,max of a submission (1,1 when not given).
func taskRange(s *api.JobSpec) (lo, hi int) {
	lo, hi = int(s.GetMinTasks()), int(s.GetMaxTasks())
	if lo < 1 {
		lo = 1
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

func startedText(j *api.Job) string {
	hosts := "<" + strings.Join(ExecHosts(j), "> <") + ">"
	n := allocSlots(j)
	text := fmt.Sprintf("Started %d Task(s) on Host(s) %s, Allocated %d Slot(s) on Host(s) %s", n, hosts, n, hosts)
	if h := j.GetExecHome(); h != "" {
		text += ", Execution Home <" + h + ">"
	}
	if c := j.GetExecCwd(); c != "" {
		text += ", Execution CWD <" + c + ">"
	}
	// An interactive job's output goes to the waiting bsub, not a spool file.
	if submitted(j).GetOutputFile() == "" && j.GetSpoolOutput() != "" && submitted(j).GetInteractive() == api.Interactive_BATCH {
		text += ", Output spooled to <" + j.GetSpoolOutput() + ">"
	}
	return text + ";"
}

// limits writes the limit tables OpenLava prints after the Submitted
// paragraph: the time limits side by side in 25-column cells, then the
// size and count limits (FILELIMIT ... MEMLIMIT SWAPLIMIT PROCESSLIMIT
// THREADLIMIT), each value under its name.
func (lw *longWriter) limits(e *api.JobSpec) {
	var names, values []string
	if sec := e.GetCpuLimitSec(); sec > 0 {
		names = append(names, "CPULIMIT")
		values = append(values, fmt.Sprintf("%.1f min", float64(sec)/60))
	}
	if sec := e.GetRunLimitSec(); sec > 0 {
		names = append(names, "RUNLIMIT")
		values = append(values, fmt.Sprintf("%.1f min", float64(sec)/60))
	}
	if len(names) > 0 {
		lw.b.WriteByte('\n')
		for _, n := range names {
			lw.b.WriteString(" " + padRight(n, 24))
		}
		lw.b.WriteByte('\n')
		for _, v := range values {
			lw.b.WriteString(padRight(" "+v, 25))
		}
		lw.b.WriteByte('\n')
	}
	// The size and count limits, each in a column under its name.
	var heads, cells []string
	size := func(name string, kb int64) {
		if kb > 0 {
			num, unit := scaleKB(kb)
			heads, cells = append(heads, name), append(cells, padRight(padLeft(num, 6)+" "+unit, len(name)))
		}
	}
	count := func(name string, n int32) {
		if n > 0 {
			heads, cells = append(heads, name), append(cells, padLeft(strconv.Itoa(int(n)), len(name)))
		}
	}
	size("FILELIMIT", e.GetFileLimitKb())
	size("DATALIMIT", e.GetDataLimitKb())
	size("STACKLIMIT", e.GetStackLimitKb())
	size("CORELIMIT", e.GetCoreLimitKb())
	size("MEMLIMIT", e.GetMemLimitKb())
	size("SWAPLIMIT", e.GetSwapLimitKb())
	count("PROCESSLIMIT", e.GetProcessLimit())
	count("THREADLIMIT", e.GetThreadLimit())
	if len(heads) > 0 {
		lw.b.WriteString("\n " + strings.Join(heads, " ") + "\n")
		lw.b.WriteString(" " + strings.TrimRight(strings.Join(cells, " "), " ") + "\n")
	}
}

// scaleKB expresses a KB amount in the largest of K, M, G, T, P that keeps
// it at least 1, with one decimal unless it is whole.
func scaleKB(kb int64) (num, unit string) {
	units := []string{"K", "M", "G", "T", "P"}
	v := float64(kb)
	i := 0
	for i < len(units)-1 && v >= 1024 {
		v /= 1024
		i++
	}
	return trimZero(fmt.Sprintf("%.1f", v)), units[i]
}

// trimZero drops a ".0" ending.
func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// finish writes the lines of a finished job.
func (lw *longWriter) finish(j *api.Job, started bool) {
	end := firstSet(j.GetEndTime(), unixNano(lw.opt.Now), j.GetStartTime(), j.GetSubmitTime())
	var text string
	switch {
	case j.GetState() == api.JobState_DONE:
		text = "Done successfully."
	case j.GetExitStatus() != 0:
		text = fmt.Sprintf("Exited with exit code %d.", j.GetExitStatus())
	default:
		text = "Exited."
	}
	if started {
		if u := j.GetUsage(); u != nil {
			text += fmt.Sprintf(" The CPU time used is %.1f seconds.", float64(u.GetCpuTimeMs())/1000)
		} else {
			text += " The CPU time used is unknown."
		}
	}
	lw.event(end, text)
	if j.GetState() == api.JobState_EXIT && j.GetTermReasonSet() {
		lw.event(end, "Completed <exit>; "+TermReasonText(j.GetTermReason())+".")
	}
}

// memKB is a memory amount as the -l usage lines print it (OpenLava):
// whole Mbytes above 1024 KB, else Kbytes; 0 is "0 Mbytes".
func memKB(kb int64) string {
	switch {
	case kb > 1024:
		return strconv.FormatInt(kb/1024, 10) + " Mbytes"
	case kb > 0:
		return strconv.FormatInt(kb, 10) + " Kbytes"
	}
	return "0 Mbytes"
}

// usage writes the "Resource usage collected." paragraph of a running or
// suspended job: the paragraph's further lines are indented 21 spaces; with
// -UF they are joined on one line, each ending in "." or ";".
func (lw *longWriter) usage(j *api.Job) {
	u := j.GetUsage()
	if u == nil {
		return
	}
	at := firstSet(u.GetCollectedTime(), unixNano(lw.opt.Now), j.GetStartTime())
	lines := []string{fmt.Sprintf("The CPU time used is %d seconds.", u.GetCpuTimeMs()/1000)}
	if j.GetExceptions()&api.ExceptionIdle != 0 {
		// LSF adds the idle factor once the job has the idle exception.
		if run := float64(at-j.GetStartTime()) / 1e9; run > 0 {
			lines = append(lines, fmt.Sprintf("IDLE_FACTOR(cputime/runtime):   %.2f", float64(u.GetCpuTimeMs())/1000/run))
		}
	}
	lines = append(lines, fmt.Sprintf("MEM: %s;  SWAP: %s;  NTHREAD: %d", memKB(u.GetMemKb()), memKB(u.GetSwapKb()), u.GetNthreads()))
	pgid := u.GetPgid()
	if pgid == 0 {
		pgid = j.GetPid()
	}
	var pids []string
	for _, p := range u.GetPids() {
		pids = append(pids, strconv.Itoa(int(p)))
	}
	var pidLine string
	switch {
	case pgid != 0 && len(pids) > 0:
		pidLine = fmt.Sprintf("PGID: %d;  PIDs: %s", pgid, strings.Join(pids, " "))
	case pgid != 0:
		pidLine = fmt.Sprintf("PGID: %d", pgid)
	case len(pids) > 0:
		pidLine = "PIDs: " + strings.Join(pids, " ")
	}

	head := FormatEventTime(at, lw.loc) + ": Resource usage collected."
	if lw.opt.Unformatted {
		if pidLine != "" {
			lines = append(lines, pidLine)
		}
		for i, l := range lines {
			if !strings.HasSuffix(l, ".") {
				lines[i] = l + ";"
			}
		}
		lw.b.WriteString(head + " " + strings.Join(lines, " ") + "\n")
		return
	}
	lw.b.WriteString(head + "\n")
	for _, l := range lines {
		lw.b.WriteString(eventIndent + l + "\n")
	}
	if pidLine != "" {
		lw.b.WriteString(foldList(pidLine))
	}
}

// foldList writes an indented line of space-separated items, starting a new
// indented line before an item that would pass column 79.
func foldList(line string) string {
	var b strings.Builder
	col := 0
	for i, word := range strings.Split(line, " ") {
		if i == 0 {
			b.WriteString(eventIndent + word)
			col = wrapIndent + runeLen(word)
			continue
		}
		if col+1+runeLen(word) > wrapWidth-1 {
			b.WriteString("\n" + eventIndent + word)
			col = wrapIndent + runeLen(word)
			continue
		}
		b.WriteString(" " + word)
		col += 1 + runeLen(word)
	}
	b.WriteByte('\n')
	return b.String()
}

// memoryUsage writes the MEMORY USAGE section when a peak is known.
func (lw *longWriter) memoryUsage(j *api.Job) {
	u := j.GetUsage()
	if u.GetMaxMemKb() <= 0 {
		return
	}
	lw.b.WriteString("\n MEMORY USAGE:\n")
	lw.b.WriteString(" MAX MEM: " + memKB(u.GetMaxMemKb()) + ";  AVG MEM: " + memKB(u.GetAvgMemKb()) + "\n")
}

// suspendReasons are the reasons a suspended job shows: its pending reasons
// field when the controller set one, else who suspended it.
func suspendReasons(j *api.Job) []string {
	if rs := pendReasons(j); len(rs) > 0 {
		return rs
	}
	switch {
	case j.GetState() != api.JobState_USUSP:
		return nil
	case j.GetHeldByAdmin():
		return []string{"The job was suspended by the LSF admin or root"}
	}
	return []string{"The job was suspended by user"}
}
