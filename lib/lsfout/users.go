package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"

	"xce/lib/api"
)

// UserSlots is one line of busers: a user's job slots by state, and (for
// -w) the number of pending jobs.
type UserSlots struct {
	PJobs                               int
	User                                string
	NJobs, Pend, Run, Ssusp, Ususp, Rsv int
	// Max is the user's cluster-wide slot limit (busers MAX); 0 = none.
	Max int
}

// CountUserSlots adds up the slots of jobs by user (the submitting user),
// the way busers counts them: a pending job counts the slots it asks for
// (its -n minimum), a started one those it holds. PSUSP counts as pending
// and UNKWN as running; finished jobs count nothing. NJOBS is the sum of
// the other columns. The result is sorted by user name.
func CountUserSlots(jobs []*api.Job) []UserSlots {
	by := map[string]*UserSlots{}
	for _, j := range jobs {
		if isFinished(j.GetState()) {
			continue
		}
		n := jobSlots(j)
		u := submitted(j).GetUser()
		if u == "" {
			u = effective(j).GetUser()
		}
		c := by[u]
		if c == nil {
			c = &UserSlots{User: u}
			by[u] = c
		}
		switch j.GetState() {
		case api.JobState_PEND, api.JobState_PSUSP:
			c.Pend += n
			c.PJobs++
		case api.JobState_RUN, api.JobState_UNKWN:
			c.Run += n
		case api.JobState_SSUSP:
			c.Ssusp += n
		case api.JobState_USUSP:
			c.Ususp += n
		default:
			continue
		}
		c.NJobs += n
	}
	out := make([]UserSlots, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].User < out[b].User })
	return out
}

// jobSlots is a job's slots: those allocated, or the requested minimum
// before dispatch (the SLOTS field of bjobs -o).
func jobSlots(j *api.Job) int {
	if n := allocSlots(j); n > 0 {
		return n
	}
	lo, _ := taskRange(submitted(j))
	return lo
}

// WriteUsers writes busers: USER/GROUP in 18 columns (cut; not cut with
// wide), JL/P "%5s", then MAX NJOBS PEND RUN SSUSP USUSP RSV as "%6s"
// (OpenLava); the header ends in a space as LSF's does. Wide (-w) adds
// MPEND PJOBS MPJOBS, "%6s" each: the pending slot and pending job
// thresholds and the number of pending jobs. XCE has no per-user limits,
// so JL/P, MAX, MPEND and MPJOBS are "-".
func WriteUsers(w io.Writer, users []UserSlots, wide bool) error {
	var b bytes.Buffer
	name := fixed
	if wide {
		name = padRight
	}
	fmt.Fprintf(&b, "%s %5s %6s %6s %6s %6s %6s %6s %6s ",
		padRight("USER/GROUP", 18), "JL/P", "MAX", "NJOBS", "PEND", "RUN", "SSUSP", "USUSP", "RSV")
	if wide {
		b.WriteString(" MPEND  PJOBS MPJOBS ")
	}
	b.WriteByte('\n')
	for _, u := range users {
		maxText := "-"
		if u.Max > 0 {
			maxText = strconv.Itoa(u.Max)
		}
		fmt.Fprintf(&b, "%s %5s %6s %6d %6d %6d %6d %6d %6d",
			name(u.User, 18), "-", maxText, u.NJobs, u.Pend, u.Run, u.Ssusp, u.Ususp, u.Rsv)
		if wide {
			fmt.Fprintf(&b, " %6s %6d %6s", "-", u.PJobs, "-")
		}
		b.WriteByte('\n')
	}
	return flush(w, &b)
}
