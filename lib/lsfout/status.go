package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"xce/lib/api"
)

// WriteShowStatus writes badmin showstatus: LSF's summary of the cluster
// as mbatchd sees it now. Labels are indented as LSF prints them and every
// value starts in column 39.
//
// XCE keeps no history of peaks: the "peak" of the available hosts is the
// number of hosts the controller knows, and CPUs and cores are both the
// hosts' ncpus. Jobs are counted as bqueues counts them (Pending includes
// PSUSP, Suspended is USUSP and SSUSP; Finished are the DONE and EXIT jobs
// the controller still keeps, within CLEAN_PERIOD). Users are those with
// jobs, active users those with unfinished jobs. The "Latest mbatchd
// reconfig" line is left out: the controller does not report it.
func WriteShowStatus(w io.Writer, hosts []*api.Host, jobs []*api.Job, info *api.ClusterInfo, loc *time.Location) error {
	var b bytes.Buffer
	line := func(indent int, label string, value any) {
		fmt.Fprintf(&b, "%-38s%v\n", fmt.Sprintf("%*s%s", indent, "", label), value)
	}
	var up, cpus, slots, upCPUs, upSlots int
	var ok, closed, unreach, unavail int
	for _, h := range hosts {
		cpus += int(h.GetNcpus())
		slots += int(h.GetMaxSlots())
		switch h.GetState() {
		case api.HostState_HOST_UNAVAIL:
			unavail++
			continue
		case api.HostState_HOST_UNREACH:
			unreach++
			continue
		case api.HostState_HOST_CLOSED:
			closed++
		default:
			ok++
		}
		up++
		upCPUs += int(h.GetNcpus())
		upSlots += int(h.GetMaxSlots())
	}
	var run, susp, pend, finished int
	users, active := map[string]bool{}, map[string]bool{}
	for _, j := range jobs {
		u := effective(j).GetUser()
		users[u] = true
		switch j.GetState() {
		case api.JobState_RUN:
			run++
		case api.JobState_USUSP, api.JobState_SSUSP:
			susp++
		case api.JobState_PEND, api.JobState_PSUSP:
			pend++
		case api.JobState_DONE, api.JobState_EXIT:
			finished++
			continue
		}
		active[u] = true
	}
	b.WriteString("LSF runtime mbatchd information\n")
	b.WriteString("     Available local hosts (current/peak):\n")
	line(8, "Clients:", "0/0")
	line(8, "Servers:", fmt.Sprintf("%d/%d", up, len(hosts)))
	line(10, "CPUs:", fmt.Sprintf("%d/%d", upCPUs, cpus))
	line(10, "Cores:", fmt.Sprintf("%d/%d", upCPUs, cpus))
	line(10, "Slots:", fmt.Sprintf("%d/%d", upSlots, slots))
	b.WriteString("\n")
	line(5, "Number of servers:", len(hosts))
	line(10, "Ok:", ok)
	line(10, "Closed:", closed)
	line(10, "Unreachable:", unreach)
	line(10, "Unavailable:", unavail)
	b.WriteString("\n")
	line(5, "Number of jobs:", len(jobs))
	line(10, "Running:", run)
	line(10, "Suspended:", susp)
	line(10, "Pending:", pend)
	line(10, "Finished:", finished)
	b.WriteString("\n")
	line(5, "Number of users:", len(users))
	line(5, "Number of user groups:", len(info.GetUserGroups()))
	line(5, "Number of active users:", len(active))
	b.WriteString("\n")
	started := "-"
	if ns := info.GetStarted(); ns > 0 {
		started = time.Unix(0, ns).In(locOrLocal(loc)).Format("Mon Jan _2 15:04:05 2006")
	}
	line(5, "Latest mbatchd start:", started)
	line(5, "Active mbatchd PID:", info.GetPid())
	if cs := info.GetCandidates(); len(cs) > 0 {
		// A highly available controller: every candidate's state, as the
		// leader sees it.
		b.WriteString("\n")
		line(5, "Master candidates:", len(cs))
		for _, c := range cs {
			state := c.GetState()
			if ns := c.GetLastContact(); ns > 0 && state == "unreachable" {
				state += " since " + time.Unix(0, ns).In(locOrLocal(loc)).Format("Mon Jan _2 15:04:05 2006")
			}
			line(10, c.GetAddress()+":", state)
		}
	}
	return flush(w, &b)
}
