package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"xce/lib/api"
)

// Advance reservation listings (brsvs).

const rsvHeader = "RSVID        TYPE   USER        NCPUS       RSV_HOSTS            TIME_WINDOW\n"

// WriteRsvs writes brsvs: one row per reservation (RSVID cut at 11
// characters unless wide), NCPUS and RSV_HOSTS as used/reserved slots,
// the further hosts on lines of their own under RSV_HOSTS; TIME_WINDOW
// is month/day/hour/minute-month/day/hour/minute for a one-time window
// and the recurring window followed by " *". With long, each reservation
// has its header and is followed by its status, next active period,
// creator, type, the queues that may use its slots before its window
// (-q), whether other jobs on its slots are suspended for its jobs
// (-nosusp: No), description and jobs by state, as brsvs -l prints them.
// loc is the time zone the windows are shown in.
func WriteRsvs(w io.Writer, rsvs []*api.Reservation, long, wide bool, loc *time.Location) error {
	var b bytes.Buffer
	if len(rsvs) == 0 {
		b.WriteString("No reservation found\n")
		return flush(w, &b)
	}
	if !long {
		b.WriteString(rsvHeader)
	}
	for i, r := range rsvs {
		if long {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(rsvHeader)
		}
		id := r.GetId()
		if !wide && !long && len(id) > 11 {
			id = id[:11]
		}
		used, total := int32(0), int32(0)
		for _, h := range r.GetHosts() {
			used += h.GetUsed()
			total += h.GetSlots()
		}
		users := strings.Join(r.GetUsers(), ",")
		if r.GetType() == "sys" && users == "" {
			users = "system" // as LSF's brsvs shows a system reservation
		}
		var hosts []string
		for _, h := range r.GetHosts() {
			hosts = append(hosts, fmt.Sprintf("%s:%d/%d", h.GetHost(), h.GetUsed(), h.GetSlots()))
		}
		if len(hosts) == 0 {
			hosts = []string{"-"}
		}
		fmt.Fprintf(&b, "%-12s %-6s %-11s %-11s %-20s %s\n", id, r.GetType(), users, fmt.Sprintf("%d/%d", used, total),
			hosts[0], rsvWindow(r, loc))
		for _, h := range hosts[1:] {
			fmt.Fprintf(&b, "%43s %s\n", "", h)
		}
		if long {
			writeRsvLong(&b, r, loc)
		}
	}
	return flush(w, &b)
}

// rsvWindow is a reservation's TIME_WINDOW column.
func rsvWindow(r *api.Reservation, loc *time.Location) string {
	if tw := r.GetTimeWindow(); tw != "" {
		return tw + " *"
	}
	f := func(sec int64) string {
		t := time.Unix(sec, 0).In(loc)
		return fmt.Sprintf("%d/%d/%d/%d", int(t.Month()), t.Day(), t.Hour(), t.Minute())
	}
	return f(r.GetBegin()) + "-" + f(r.GetEnd())
}

func writeRsvLong(b *bytes.Buffer, r *api.Reservation, loc *time.Location) {
	status := "Inactive"
	if r.GetActive() {
		status = "Active"
	}
	fmt.Fprintf(b, "Reservation Status: %s\n", status)
	if r.GetNextBegin() > 0 {
		const layout = "Mon Jan _2 15:04:05 2006"
		fmt.Fprintf(b, "Next Active Period:\n  %s - %s\n", time.Unix(r.GetNextBegin(), 0).In(loc).Format(layout),
			time.Unix(r.GetNextEnd(), 0).In(loc).Format(layout))
	}
	fmt.Fprintf(b, "Creator: %s\n", r.GetCreator())
	typ := "CLOSED"
	if r.GetOpen() {
		typ = "OPEN"
	}
	fmt.Fprintf(b, "Reservation Type: %s\n", typ)
	// brsvadd -q and -nosusp. LSF's brsvs -l shows both ("queues that can
	// use the advance reservation hosts before the advance reservation
	// starts", "whether non-advance reservation jobs are allowed to
	// continue running"); its manual prints no example of the lines, so
	// they are written in the style of the lines around them.
	if qs := r.GetQueues(); len(qs) > 0 {
		fmt.Fprintf(b, "Reservation Queues: %s\n", strings.Join(qs, " "))
	}
	if r.GetType() != "sys" {
		susp := "Yes"
		if r.GetNoSusp() {
			susp = "No"
		}
		fmt.Fprintf(b, "Suspend Non-AR Jobs: %s\n", susp)
	}
	if d := r.GetDescription(); d != "" {
		fmt.Fprintf(b, "Description: %s\n", d)
	}
	groups := []struct {
		title  string
		states []api.JobState
	}{
		{"FINISHED", []api.JobState{api.JobState_DONE, api.JobState_EXIT}},
		{"PEND", []api.JobState{api.JobState_PEND, api.JobState_PSUSP}},
		{"RUN", []api.JobState{api.JobState_RUN}},
		{"SUSP", []api.JobState{api.JobState_SSUSP, api.JobState_USUSP}},
	}
	for _, g := range groups {
		var ids []string
		for _, j := range r.GetJobs() {
			for _, s := range g.states {
				if j.GetState() == s {
					ids = append(ids, jobRefString(j.GetJobId(), j.GetArrayIndex()))
				}
			}
		}
		if len(ids) > 0 {
			fmt.Fprintf(b, "%s Jobs: %s\n", g.title, strings.Join(ids, " "))
		}
	}
}

func jobRefString(id int64, idx int32) string {
	if idx == 0 {
		return fmt.Sprint(id)
	}
	return fmt.Sprintf("%d[%d]", id, idx)
}

// WriteRsvPolicies writes brsvs -c: each advance reservation policy as
// LSF prints one (Policy Name, Users, Hosts, Time Window lines), a blank
// line between them. An empty list is every user or host, or any time.
func WriteRsvPolicies(w io.Writer, ps []*api.RsvPolicy) error {
	var b bytes.Buffer
	if len(ps) == 0 {
		b.WriteString("No reservation policy found\n")
		return flush(w, &b)
	}
	list := func(l []string, none string) string {
		if len(l) == 0 {
			return none
		}
		return strings.Join(l, " ")
	}
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "Policy Name: %s\nUsers: %s\nHosts: %s\nTime Window: %s\n",
			p.Name, list(p.Users, "all"), list(p.Hosts, "all"), list(p.TimeWindows, "any"))
	}
	return flush(w, &b)
}

// PlannerPeriods is the number of 10-minute periods of a planner's week.
const PlannerPeriods = 7 * 144

// WriteRsvPlanners writes brsvs -p (and, with omitEmpty, -z): for each
// host, "HOST: name (MAX = n)", the week shown ("Week: mm/dd/yyyy -
// mm/dd/yyyy", Sunday to Saturday) and a table of the slots the
// reservations hold in each 10-minute period, one row per period of the
// day (Hour:Min, as LSF divides a day into 144 periods) and one column
// per day; -z leaves out the rows where every day is 0. LSF's manual
// names the planner and its 10-minute periods but prints no example:
// the layout follows brsvs -l's plain style, columns of 8 characters
// with the numbers right-aligned. A blank line separates the hosts.
func WriteRsvPlanners(w io.Writer, ps []*api.RsvPlanner, omitEmpty bool, loc *time.Location) error {
	var b bytes.Buffer
	days := []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		start := time.Unix(p.GetWeekStart(), 0).In(loc)
		end := start.AddDate(0, 0, 6)
		fmt.Fprintf(&b, "HOST: %s (MAX = %d)\nWeek: %s - %s\n", p.GetHost(), p.GetMaxSlots(),
			start.Format("01/02/2006"), end.Format("01/02/2006"))
		fmt.Fprintf(&b, "%-8s", "Hour:Min")
		for _, d := range days {
			fmt.Fprintf(&b, "%8s", d)
		}
		b.WriteString("\n" + strings.Repeat("-", 8+8*len(days)) + "\n")
		slots := p.GetSlots()
		at := func(day, period int) int32 {
			if k := day*144 + period; k < len(slots) {
				return slots[k]
			}
			return 0
		}
		for period := range 144 {
			if omitEmpty {
				empty := true
				for d := range days {
					empty = empty && at(d, period) == 0
				}
				if empty {
					continue
				}
			}
			fmt.Fprintf(&b, "%8s", fmt.Sprintf("%d:%d", period/6, period%6*10))
			for d := range days {
				fmt.Fprintf(&b, "%8d", at(d, period))
			}
			b.WriteByte('\n')
		}
	}
	return flush(w, &b)
}
