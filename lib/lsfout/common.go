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

// JobsOptions selects the variant of the bjobs output and carries the two
// things the formats must not look up themselves: the current time and the
// time zone.
type JobsOptions struct {
	Wide        bool // -w: no truncation, EXEC_HOST on one line
	NoHeader    bool // -noheader
	PendReasons bool // -p: pending reasons after each pending job's line
	SuspReasons bool // -s: suspending reasons after each suspended job's line
	Unformatted bool // -UF (WriteJobsLong only): no line wrapping

	// Now is the current time; it measures how long running jobs have run.
	Now time.Time
	// Location is the zone times are printed in; nil means time.Local.
	Location *time.Location
}

func (o JobsOptions) loc() *time.Location { return locOrLocal(o.Location) }

func locOrLocal(l *time.Location) *time.Location {
	if l == nil {
		return time.Local
	}
	return l
}

// unixNano is t in unix nanoseconds, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// firstSet is the first of the times that is not 0.
func firstSet(ts ...int64) int64 {
	for _, t := range ts {
		if t != 0 {
			return t
		}
	}
	return 0
}

// submitted returns what the job's owner submitted; never nil.
func submitted(j *api.Job) *api.JobSpec {
	if s := j.GetSpec(); s != nil {
		return s
	}
	if s := j.GetEffective(); s != nil {
		return s
	}
	return &api.JobSpec{}
}

// effective returns the job's settings after defaults and configuration,
// falling back to the submission; never nil.
func effective(j *api.Job) *api.JobSpec {
	if s := j.GetEffective(); s != nil {
		return s
	}
	return submitted(j)
}

// JobIDString is the job ID as LSF prints it in messages and bjobs -l:
// "123", or "123[4]" for an element of a job array.
func JobIDString(j *api.Job) string {
	id := strconv.FormatInt(j.GetJobId(), 10)
	if j.GetArrayIndex() > 0 {
		id += "[" + strconv.Itoa(int(j.GetArrayIndex())) + "]"
	}
	return id
}

// DisplayName is the JOB_NAME bjobs shows: the -J name, or else the command
// line (for a script read from stdin, its first line that is neither blank
// nor a comment), followed by "[index]" for an element of a job array.
func DisplayName(j *api.Job) string {
	s := submitted(j)
	name := s.GetJobName()
	if name == "" {
		if s.GetCommandIsScript() {
			name = scriptFirstCommand(s.GetCommand())
		} else {
			name = s.GetCommand()
		}
	}
	if j.GetArrayIndex() > 0 {
		name += "[" + strconv.Itoa(int(j.GetArrayIndex())) + "]"
	}
	return name
}

// scriptFirstCommand is the first line of a script that is neither blank nor
// a comment (#! and #BSUB lines are comments), trimmed; the first non-blank
// line when every line is a comment.
func scriptFirstCommand(script string) string {
	first := ""
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if first == "" {
			first = line
		}
		if !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return first
}

// CommandString is the job's command on one line, as bjobs -l (Command <...>)
// and the COMMAND field show it: the command line, or for a script read from
// stdin its non-blank lines joined by "; ".
func CommandString(j *api.Job) string {
	s := submitted(j)
	if !s.GetCommandIsScript() {
		return s.GetCommand()
	}
	var lines []string
	for _, line := range strings.Split(s.GetCommand(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "; ")
}

// StateName is the STAT column: PEND, RUN, DONE, ... ("-" for an unset state).
func StateName(s api.JobState) string {
	if s == api.JobState_STATE_UNSPECIFIED {
		return "-"
	}
	return s.String()
}

func isPending(s api.JobState) bool {
	return s == api.JobState_PEND || s == api.JobState_PSUSP
}

func isFinished(s api.JobState) bool {
	return s == api.JobState_DONE || s == api.JobState_EXIT
}

// ExecHosts lists the job's execution hosts as LSF shows them: "host" for a
// host with one slot, "N*host" for N slots on it.
func ExecHosts(j *api.Job) []string { return hostSlotNames(j.GetExecHosts()) }

// hostSlotNames writes hosts as LSF does: "host", or "N*host" for N slots.
func hostSlotNames(hs []*api.HostSlots) []string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		if h.GetSlots() > 1 {
			out = append(out, strconv.Itoa(int(h.GetSlots()))+"*"+h.GetHost())
		} else {
			out = append(out, h.GetHost())
		}
	}
	return out
}

// allocSlots is the number of slots the job holds.
func allocSlots(j *api.Job) int {
	if n := j.GetAllocSlots(); n > 0 {
		return int(n)
	}
	n := 0
	for _, h := range j.GetExecHosts() {
		if h.GetSlots() > 0 {
			n += int(h.GetSlots())
		} else {
			n++
		}
	}
	return n
}

// DisplayCWD shows a directory the way LSF does for a submission CWD: "$HOME"
// for the home directory itself, "$HOME/rel" below it, dir unchanged
// otherwise.
func DisplayCWD(dir, home string) string {
	home = strings.TrimRight(home, "/")
	if home == "" || dir == "" {
		return dir
	}
	d := strings.TrimRight(dir, "/")
	if d == home {
		return "$HOME"
	}
	if strings.HasPrefix(d, home+"/") {
		return "$HOME" + d[len(home):]
	}
	return dir
}

// submitCWD is the job's working directory as submitted (-cwd, else the
// directory bsub ran in), shown with DisplayCWD.
func submitCWD(j *api.Job) string {
	s := submitted(j)
	return DisplayCWD(s.GetSubmitCwd(), s.GetHome())
}

// FormatSubmitTime formats a unix-nanosecond time the way the bjobs
// SUBMIT_TIME column does ("%b %e %H:%M": "Oct  2 10:05"); "" for 0.
// A nil loc means time.Local.
func FormatSubmitTime(ns int64, loc *time.Location) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).In(locOrLocal(loc)).Format("Jan _2 15:04")
}

// FormatEventTime formats a unix-nanosecond time the way bjobs -l and bhist -l
// start an event line, without the trailing ": " ("%a %b %e %H:%M:%S", the
// day space-padded as LSF and OpenLava print it: "Tue May  6 15:45:10", so
// the line's text always starts in the same column). A nil loc means
// time.Local.
func FormatEventTime(ns int64, loc *time.Location) string {
	return time.Unix(0, ns).In(locOrLocal(loc)).Format("Mon Jan _2 15:04:05")
}

// pendReasons splits Job.pend_reason into its reasons (one per line), with
// any trailing ";" removed: the formats add their own.
func pendReasons(j *api.Job) []string {
	var out []string
	for _, r := range strings.Split(j.GetPendReason(), "\n") {
		r = strings.TrimSpace(r)
		r = strings.TrimSpace(strings.TrimRight(r, ";"))
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}

// flush writes buf to w, returning the write error.
func flush(w io.Writer, buf *bytes.Buffer) error {
	_, err := w.Write(buf.Bytes())
	return err
}

// cut keeps the first n runes of s.
func cut(s string, n int) string {
	if n < 0 {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// runeLen is the number of runes in s, the column count the formats use.
func runeLen(s string) int { return len([]rune(s)) }

// padRight pads s with spaces to width runes (printf %-Ns).
func padRight(s string, width int) string {
	if n := runeLen(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// padLeft pads s with spaces on the left to width runes (printf %Ns).
func padLeft(s string, width int) string {
	if n := runeLen(s); n < width {
		return strings.Repeat(" ", width-n) + s
	}
	return s
}

// fixed is printf "%-N.Ns": padded and cut to exactly width runes.
func fixed(s string, width int) string { return padRight(cut(s, width), width) }

// tailName shortens a job name to width runes the way bjobs does: "*"
// followed by its last width-1 runes.
func tailName(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	if width <= 0 {
		return ""
	}
	return "*" + string(r[len(r)-(width-1):])
}

// dashIfZero is a limit as the tables print it: the number, or "-" for none.
func dashIfZero(n int32) string {
	if n <= 0 {
		return "-"
	}
	return strconv.Itoa(int(n))
}

// termReasons holds the LSF exit reason texts (environment.md section 5).
var termReasons = map[api.TermReason]string{
	api.TermReason_TERM_UNKNOWN:         "job exited, reason unknown",
	api.TermReason_TERM_PREEMPT:         "job killed after preemption",
	api.TermReason_TERM_WINDOW:          "job killed after queue run window is closed",
	api.TermReason_TERM_LOAD:            "job killed after load exceeds threshold",
	api.TermReason_TERM_OTHER:           "job killed for another reason",
	api.TermReason_TERM_RUNLIMIT:        "job killed after reaching LSF run time limit",
	api.TermReason_TERM_DEADLINE:        "job killed after deadline expires",
	api.TermReason_TERM_PROCESSLIMIT:    "job killed after reaching LSF process limit",
	api.TermReason_TERM_FORCE_OWNER:     "job killed by owner without time for cleanup",
	api.TermReason_TERM_FORCE_ADMIN:     "job killed by root or LSF administrator without time for cleanup",
	api.TermReason_TERM_REQUEUE_OWNER:   "job killed and requeued by owner",
	api.TermReason_TERM_REQUEUE_ADMIN:   "job killed and requeued by root or LSF administrator",
	api.TermReason_TERM_CPULIMIT:        "job killed after reaching LSF CPU usage limit",
	api.TermReason_TERM_CHKPNT:          "job killed after checkpointing",
	api.TermReason_TERM_OWNER:           "job killed by owner",
	api.TermReason_TERM_ADMIN:           "job killed by root or an administrator",
	api.TermReason_TERM_MEMLIMIT:        "job killed after reaching LSF memory usage limit",
	api.TermReason_TERM_EXTERNAL_SIGNAL: "job killed by a signal external to LSF",
	api.TermReason_TERM_RMS:             "job terminated abnormally in RMS",
	api.TermReason_TERM_ZOMBIE:          "job killed when LSF is not available",
	api.TermReason_TERM_SWAP:            "job killed after reaching LSF swap usage limit",
	api.TermReason_TERM_THREADLIMIT:     "job killed after reaching LSF thread limit",
	api.TermReason_TERM_SLURM:           "job terminated abnormally in SLURM",
	api.TermReason_TERM_BUCKET_KILL:     "job killed with bkill -b",
	api.TermReason_TERM_CTRL_PID:        "job terminated after control PID died",
	api.TermReason_TERM_CWD_NOTEXIST:    "Current working directory is not accessible or does not exist on the execution host",
	api.TermReason_TERM_REMOVE_HUNG_JOB: "job removed from LSF system",
	api.TermReason_TERM_ORPHAN_SYSTEM:   "The orphan job was automatically terminated by LSF",
	api.TermReason_TERM_ORPHAN:          "job status lost when the controller restarted",
}

// TermReasonText is an exit reason as LSF prints it, without a final period:
// "TERM_OWNER: job killed by owner". bjobs -l and bhist -l print it after
// "Completed <exit>; ", the job report on a line of its own; both add ".".
// A code with no known text prints as "TERM_<number>: job exited, reason
// unknown".
func TermReasonText(r api.TermReason) string {
	msg, ok := termReasons[r]
	if !ok {
		return fmt.Sprintf("TERM_%d: %s", int32(r), termReasons[api.TermReason_TERM_UNKNOWN])
	}
	return r.String() + ": " + msg
}
