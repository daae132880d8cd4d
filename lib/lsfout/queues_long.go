package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"xce/lib/api"
)

// QueueSeparator separates the records of bqueues -l: a line of 79 "-".
var QueueSeparator = strings.Repeat("-", 79) + "\n"

// queueStatsHeader is the PARAMETERS/STATISTICS title row of bqueues -l.
const queueStatsHeader = "PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV\n"

// shareInfoHeader is the title row of bqueues -r's SHARE_INFO_FOR table.
const shareInfoHeader = " USER/GROUP   SHARES  PRIORITY  STARTED  RESERVED  CPU_TIME  RUN_TIME   ADJUST\n"

// defaultQueueText follows the default queue's description.
const defaultQueueText = "This is the default queue."

// lostAndFoundText is LSF's description of its lost_and_found queue.
const lostAndFoundText = "This queue is created by the system to hold the jobs that were in the queues being removed from the configuration by the LSF Administrator.  Jobs in this queue will not be started unless they are switched to other queues."

// WriteQueuesLong writes bqueues -l for queues in the order given, records
// separated by a blank line and a line of 79 "-". A record holds: "QUEUE:
// name"; "  -- description" (followed by "  This is the default queue."
// for the default queue); the PARAMETERS/STATISTICS table; the limits (when
// the queue has defaults, under "DEFAULT LIMITS:" and "MAXIMUM LIMITS:",
// otherwise the maxima alone): RUNLIMIT, MEMLIMIT and TASKLIMIT; the
// SCHEDULING PARAMETERS thresholds; SCHEDULING POLICIES (FAIRSHARE,
// PREEMPTIVE, PREEMPTABLE, EXCLUSIVE) with USER_SHARES and the PREEMPTION
// lists; for a queue that carries its share accounts (bqueues -r), the
// SHARE_INFO_FOR table (USER/GROUP SHARES PRIORITY STARTED RESERVED
// CPU_TIME RUN_TIME ADJUST, groups as "name/", values right-aligned under
// their titles: priority with 3 decimals, CPU time in seconds with one,
// run time in whole slot-seconds); RUN_WINDOW and DISPATCH_WINDOW; USERS, HOSTS, ADMINISTRATORS; and
// the deprecated queue-level RES_REQ, PRE_EXEC and POST_EXEC.
func WriteQueuesLong(w io.Writer, queues []*api.Queue) error {
	var b bytes.Buffer
	for i, q := range queues {
		if i > 0 {
			b.WriteString(QueueSeparator + "\n")
		}
		queueLong(&b, q)
	}
	return flush(w, &b)
}

func queueLong(b *bytes.Buffer, q *api.Queue) {
	b.WriteString("QUEUE: " + q.GetName() + "\n")
	desc := q.GetDescription()
	if q.GetLostAndFound() {
		desc = lostAndFoundText
	}
	if desc == "" {
		desc = "No description provided."
	}
	b.WriteString("  -- " + desc)
	// The shipped default queue's description already says it.
	if q.GetIsDefault() && !strings.HasSuffix(desc, defaultQueueText) {
		b.WriteString("  " + defaultQueueText)
	}
	b.WriteString("\n\n")

	b.WriteString("PARAMETERS/STATISTICS\n" + queueStatsHeader)
	fmt.Fprintf(b, "%3d %4d  %-14s %4s %4s %4s %4s %5d %5d %5d %5d %5d %4d\n",
		q.GetPriority(), q.GetNice(), QueueStatus(q),
		dashIfZero(q.GetMaxSlots()), dashIfZero(q.GetUserSlotLimit()),
		dashIfZero(q.GetProcLimit()), dashIfZero(q.GetHostSlotLimit()),
		q.GetNjobs(), q.GetPend(), q.GetRun(), q.GetSsusp(), q.GetUsusp(), q.GetRsv())
	// XCE has no JOB_ACCEPT_INTERVAL: a host takes the next job at once.
	b.WriteString("Interval for a host to accept two jobs is 0 seconds\n")

	defaults := limitTables(q.GetDefaultRunLimitSec(), q.GetDefaultMemKb(), "")
	maxima := limitTables(q.GetRunLimitSec(), q.GetMaxMemKb(),
		taskLimit(q.GetMinTasks(), q.GetDefaultTasks(), q.GetMaxTasks()))
	if defaults != "" {
		b.WriteString("\nDEFAULT LIMITS:" + defaults)
		if maxima != "" {
			b.WriteString("\nMAXIMUM LIMITS:" + maxima)
		}
	} else {
		b.WriteString(maxima)
	}

	b.WriteString("\nSCHEDULING PARAMETERS\n" + thresholdTable)

	var policies []string
	if len(q.GetUserShares()) > 0 {
		policies = append(policies, "FAIRSHARE")
	}
	if len(q.GetPreemptive()) > 0 {
		policies = append(policies, "PREEMPTIVE")
	}
	if len(q.GetPreemptable()) > 0 {
		policies = append(policies, "PREEMPTABLE")
	}
	if q.GetExclusive() {
		policies = append(policies, "EXCLUSIVE")
	}
	if len(policies) > 0 {
		b.WriteString("\nSCHEDULING POLICIES:  " + strings.Join(policies, "  ") + "\n")
		if s := userShares(q.GetUserShares()); s != "" {
			b.WriteString("USER_SHARES:  " + s + "\n")
		}
		var pre []string
		if l := q.GetPreemptive(); len(l) > 0 {
			pre = append(pre, "PREEMPTIVE["+strings.Join(l, " ")+"]")
		}
		if l := q.GetPreemptable(); len(l) > 0 {
			pre = append(pre, "PREEMPTABLE["+strings.Join(l, " ")+"]")
		}
		if len(pre) > 0 {
			b.WriteString("PREEMPTION = " + strings.Join(pre, " ") + "\n")
		}
	}

	if accts := q.GetShareAccounts(); len(accts) > 0 {
		b.WriteString("\nSHARE_INFO_FOR: " + q.GetName() + "/\n")
		b.WriteString(shareInfoHeader)
		for _, a := range accts {
			name := a.GetName()
			if a.GetGroup() {
				name += "/"
			}
			fmt.Fprintf(b, " %-10s%9d%10.3f%9d%10d%10.1f%10.0f%9.3f\n", name, a.GetShares(), a.GetPriority(),
				a.GetStarted(), a.GetReserved(), a.GetCpuTimeSec(), a.GetRunTimeSec(), a.GetAdjust())
		}
	}

	if rw, dw := q.GetRunWindows(), q.GetDispatchWindows(); len(rw) > 0 || len(dw) > 0 {
		b.WriteByte('\n')
		if len(rw) > 0 {
			b.WriteString("RUN_WINDOW:  " + strings.Join(rw, " ") + "\n")
		}
		if len(dw) > 0 {
			b.WriteString("DISPATCH_WINDOW:  " + strings.Join(dw, " ") + "\n")
		}
	}

	b.WriteString("\nUSERS: " + allIfEmpty(q.GetUsers()) + "\n")
	b.WriteString("HOSTS:  " + allIfEmpty(q.GetHosts()) + "\n")
	if a := q.GetAdministrators(); len(a) > 0 {
		b.WriteString("ADMINISTRATORS:  " + strings.Join(a, " ") + "\n")
	}
	if g := q.GetGpuReq(); g != "" {
		b.WriteString("GPU_REQ:  " + g + "\n")
	}
	for _, kv := range [][2]string{{"RES_REQ", q.GetResReq()}, {"PRE_EXEC", q.GetPreExec()}, {"POST_EXEC", q.GetPostExec()}} {
		if kv[1] != "" {
			b.WriteString(kv[0] + ":  " + kv[1] + "  (deprecated)\n")
		}
	}
	b.WriteByte('\n')
}

func allIfEmpty(l []string) string {
	if len(l) == 0 {
		return "all"
	}
	return strings.Join(l, " ")
}

// userShares writes a fairshare map as LSF does: "[groupA, 70] [default,
// 1]", by name with "default" last.
func userShares(m map[string]int32) string {
	names := slices.Sorted(maps.Keys(m))
	if i := slices.Index(names, "default"); i >= 0 {
		names = append(slices.Delete(names, i, i+1), "default")
	}
	var parts []string
	for _, n := range names {
		parts = append(parts, "["+n+", "+strconv.Itoa(int(m[n]))+"]")
	}
	return strings.Join(parts, " ")
}

// limitTables is the limit tables of a queue or a profile, each starting
// with a blank line: RUNLIMIT (" 60.0 min"), MEMLIMIT ("      4 G") and
// TASKLIMIT (tasks as given by taskLimit); "" when none is set.
func limitTables(runSec, memKB int64, tasks string) string {
	var b strings.Builder
	if runSec > 0 {
		b.WriteString("\n RUNLIMIT\n " + fmt.Sprintf("%.1f min", float64(runSec)/60) + "\n")
	}
	if memKB > 0 {
		num, unit := scaleKB(memKB)
		b.WriteString("\n MEMLIMIT\n " + padLeft(num, 6) + " " + unit + "\n")
	}
	if tasks != "" {
		b.WriteString("\n TASKLIMIT\n " + tasks + "\n")
	}
	return b.String()
}

// taskLimit writes a task range as TASKLIMIT is configured: "max", "min
// max" or "min default max" ("-" for an unlimited maximum); "" when none
// of them is set.
func taskLimit(lo, def, hi int32) string {
	if lo <= 0 && def <= 0 && hi <= 0 {
		return ""
	}
	maxS := "-"
	if hi > 0 {
		maxS = strconv.Itoa(int(hi))
	}
	switch {
	case def > 0:
		return fmt.Sprintf("%d %d %s", max(lo, 1), def, maxS)
	case lo > 0:
		return fmt.Sprintf("%d %s", lo, maxS)
	}
	return maxS
}
