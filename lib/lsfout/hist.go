package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"xce/lib/api"
)

// StateTimes is how long a job spent in each state, in seconds (bhist).
type StateTimes struct {
	Pend, Psusp, Run, Ususp, Ssusp, Unkwn float64
}

// Total is the sum of all states.
func (s StateTimes) Total() float64 {
	return s.Pend + s.Psusp + s.Run + s.Ususp + s.Ssusp + s.Unkwn
}

// TimeInStates adds up, from a job's event log, the time spent in each
// state: each event's state lasts until the next event, the last one until
// the job ended or until now.
func TimeInStates(j *api.Job, evs []*api.Event, now time.Time) StateTimes {
	var st StateTimes
	end := now.UnixNano()
	if j.GetEndTime() > 0 {
		end = j.GetEndTime()
	}
	for i, ev := range evs {
		until := end
		if i+1 < len(evs) {
			until = evs[i+1].GetTime()
		}
		if until < ev.GetTime() {
			continue
		}
		d := float64(until-ev.GetTime()) / 1e9
		switch ev.GetState() {
		case api.JobState_PEND:
			st.Pend += d
		case api.JobState_PSUSP:
			st.Psusp += d
		case api.JobState_RUN:
			st.Run += d
		case api.JobState_USUSP:
			st.Ususp += d
		case api.JobState_SSUSP:
			st.Ssusp += d
		case api.JobState_UNKWN:
			st.Unkwn += d
		}
	}
	return st
}

const histHeader = "Summary of time in seconds spent in various states:\n" +
	"JOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL\n"

// WriteHistory writes bhist's default summary table, one row per job
// (OpenLava's "%-7.7s %-7.7s %-9.9s %-8.0f..." layout; with opt.Wide, bhist
// -w, the job ID, user and job name are not cut); a longer job name is cut
// from the left to "*" and its last 8 characters, as bjobs cuts it (LSF
// bhist: "*" marks a truncated name); events holds each job's
// log, keyed by JobIDString.
func WriteHistory(w io.Writer, jobs []*api.Job, events map[string][]*api.Event, opt JobsOptions) error {
	var b bytes.Buffer
	b.WriteString(histHeader)
	row := "%-7.7s %-7.7s %-9s "
	if opt.Wide {
		row = "%-7s %-7s %-9s "
	}
	for _, j := range jobs {
		st := TimeInStates(j, events[JobIDString(j)], opt.Now)
		name := DisplayName(j)
		if !opt.Wide {
			name = tailName(name, 9) // its end, as bjobs keeps it
		}
		fmt.Fprintf(&b, row+"%-8.0f%-8.0f%-8.0f%-8.0f%-8.0f%-8.0f%-10.0f\n",
			JobIDString(j), submitted(j).GetUser(), name,
			st.Pend, st.Psusp, st.Run, st.Ususp, st.Ssusp, st.Unkwn, st.Total())
	}
	return flush(w, &b)
}

// WriteHistoryLong writes bhist -l: for each job its header, one line per
// event (wrapped like bjobs -l unless opt.Unformatted), and the summary of
// time spent in each state.
func WriteHistoryLong(w io.Writer, jobs []*api.Job, events map[string][]*api.Event, opt JobsOptions) error {
	return writeHistoryEvents(w, jobs, events, opt, false)
}

// WriteHistoryBrief writes bhist -b: the layout of bhist -l with each
// event said in short (where it was submitted and dispatched, not the
// files, resources and directories).
func WriteHistoryBrief(w io.Writer, jobs []*api.Job, events map[string][]*api.Event, opt JobsOptions) error {
	return writeHistoryEvents(w, jobs, events, opt, true)
}

func writeHistoryEvents(w io.Writer, jobs []*api.Job, events map[string][]*api.Event, opt JobsOptions, brief bool) error {
	var b bytes.Buffer
	loc := opt.loc()
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	wrap := Wrap
	if opt.Unformatted {
		wrap = func(s string) string { return s }
	}
	for i, j := range jobs {
		if i > 0 {
			b.WriteString(LongSeparator)
		}
		s := submitted(j)
		head := "Job <" + JobIDString(j) + ">"
		if s.GetJobName() != "" {
			head += ", Job Name <" + DisplayName(j) + ">"
		}
		head += ", User <" + s.GetUser() + ">, Project <" + effective(j).GetProject() + ">"
		if app := effective(j).GetApp(); app != "" {
			head += ", Application <" + app + ">"
		}
		head += ", Command <" + CommandString(j) + ">"
		b.WriteString("\n" + wrap(head) + "\n")
		evs := events[JobIDString(j)]
		for _, ev := range evs {
			for _, text := range historyTexts(j, ev, brief) {
				b.WriteString(wrap(FormatEventTime(ev.GetTime(), loc)+": "+text) + "\n")
			}
		}
		st := TimeInStates(j, evs, now)
		by := now
		if j.GetEndTime() > 0 {
			by = time.Unix(0, j.GetEndTime())
		}
		fmt.Fprintf(&b, "\nSummary of time in seconds spent in various states by  %s\n", FormatEventTime(by.UnixNano(), loc))
		b.WriteString("  PEND     PSUSP    RUN      USUSP    SSUSP    UNKWN    TOTAL\n")
		fmt.Fprintf(&b, "  %-9.0f%-9.0f%-9.0f%-9.0f%-9.0f%-9.0f%-9.0f\n",
			st.Pend, st.Psusp, st.Run, st.Ususp, st.Ssusp, st.Unkwn, st.Total())
		b.WriteString("\n")
	}
	return flush(w, &b)
}

// historyTexts is what bhist -l says of one event; one event may give
// several lines (a start is "Dispatched ..." then, once the process runs,
// "Starting ..." and "Running with ..."). brief (bhist -b) leaves out the
// files, resources and directories.
func historyTexts(j *api.Job, ev *api.Event, brief bool) []string {
	s, e := submitted(j), effective(j)
	switch ev.GetType() {
	case api.EventType_SUBMIT:
		t := "Submitted from host <" + s.GetSubmitHost() + ">"
		if ev.GetState() == api.JobState_PSUSP {
			t += " with hold"
		}
		t += ", to Queue <" + e.GetQueue() + ">, CWD <" + DisplayCWD(s.GetSubmitCwd(), s.GetHome()) + ">"
		if brief {
			return []string{t + ";"}
		}
		if f := s.GetOutputFile(); f != "" {
			t += ", Output File <" + f + ">"
		}
		if f := s.GetErrorFile(); f != "" {
			t += ", Error File <" + f + ">"
		}
		if n := e.GetMinTasks(); n > 1 {
			t += fmt.Sprintf(", %d Task(s)", n)
		}
		if rr := strings.Join(s.GetResReq(), " "); rr != "" {
			t += ", Requested Resources <" + rr + ">"
		}
		return []string{t + ";"}
	case api.EventType_START:
		if ev.GetPid() != 0 {
			if brief {
				return []string{fmt.Sprintf("Starting (Pid %d);", ev.GetPid())}
			}
			return []string{
				fmt.Sprintf("Starting (Pid %d);", ev.GetPid()),
				fmt.Sprintf("Running with execution home <%s>, Execution CWD <%s>, Execution Pid <%d>;",
					ev.GetExecHome(), ev.GetExecCwd(), ev.GetPid()),
			}
		}
		hosts := strings.Join(hostSlotNames(ev.GetHosts()), " ")
		if brief {
			return []string{"Dispatched to <" + hosts + ">;"}
		}
		n := 0
		for _, h := range ev.GetHosts() {
			n += int(max(h.GetSlots(), 1))
		}
		t := fmt.Sprintf("Dispatched %d Task(s) on Host(s) <%s>, Allocated %d Slot(s) on Host(s) <%s>", n, hosts, n, hosts)
		// LSF prints the requirement the job was dispatched with, its
		// defaults filled in, also for a job that gave none: the same text
		// as bjobs -l's "Effective:".
		t += ", Effective RES_REQ <" + combinedResReq(e.GetResReq()) + ">"
		for _, a := range instanceAllocs(ev.GetHosts()) {
			t += ", Instances <" + a + ">"
		}
		return []string{t + ";"}
	case api.EventType_SIGNAL:
		return []string{"Signal <" + ev.GetDetail() + "> requested by user or administrator <" + ev.GetUser() + ">;"}
	case api.EventType_SUSPEND:
		if ev.GetUser() == "" && ev.GetDetail() != "" {
			return []string{"Suspended by the LSF system: " + ev.GetDetail() + ";"} // preemption
		}
		return []string{"Suspended by the user or administrator <" + ev.GetUser() + ">;"}
	case api.EventType_RESUME:
		if ev.GetUser() == "" && ev.GetDetail() != "" {
			return []string{"Resumed by the LSF system: " + ev.GetDetail() + ";"}
		}
		return []string{"Resumed by the user or administrator <" + ev.GetUser() + ">;"}
	case api.EventType_PEND_AGAIN:
		return []string{"Pending: " + ev.GetDetail() + ";"}
	case api.EventType_HOST_STATUS:
		if ev.GetState() == api.JobState_UNKWN {
			return []string{"Unknown; unable to reach the execution host;"}
		}
		return []string{"Running; the execution host is reachable again;"}
	case api.EventType_MODIFY:
		// "Parameters of Job are changed", "Switched to Queue <q>", ...
		t := ev.GetDetail()
		if u := ev.GetUser(); u != "" {
			t += " by user or administrator <" + u + ">"
		}
		return []string{t + ";"}
	case api.EventType_FINISH:
		cpu := fmt.Sprintf("The CPU time used is %.1f seconds", float64(ev.GetCpuTimeMs())/1000)
		var out []string
		switch {
		case ev.GetState() == api.JobState_DONE:
			out = append(out, "Done successfully. "+cpu+";")
		case ev.GetExitStatus() != 0:
			out = append(out, fmt.Sprintf("Exited with exit code %d. %s;", ev.GetExitStatus(), cpu))
		default:
			out = append(out, "Exited; "+cpu+";")
		}
		if ev.GetState() == api.JobState_EXIT && ev.GetTermReason() != api.TermReason_TERM_UNKNOWN {
			out = append(out, "Completed <exit>; "+TermReasonText(ev.GetTermReason())+".")
		}
		switch d := ev.GetDetail(); {
		case strings.Contains(d, "POST_DONE"):
			out = append(out, "Post job process done successfully;")
		case strings.Contains(d, "POST_ERR"):
			out = append(out, "Post job process failed;")
		}
		return out
	}
	return nil
}
