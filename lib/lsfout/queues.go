package lsfout

import (
	"bytes"
	"fmt"
	"io"

	"xce/lib/api"
)

// queuesHeader is the bqueues header, byte for byte (trailing space included).
const queuesHeader = "QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP \n"

// WriteQueues writes the default bqueues table for queues in the order given:
// QUEUE_NAME cut to 15, PRIO as "%3d" in a 4-wide cell, STATUS
// (Open|Closed:Active|Inact) cut to 14, the limits MAX JL/U JL/P JL/H as
// "%4s" ("-" for none), then NJOBS PEND RUN SUSP as "%5d" with SUSP the sum
// of SSUSP and USUSP.
func WriteQueues(w io.Writer, queues []*api.Queue, noheader bool) error {
	return writeQueues(w, queues, noheader, 15, fixed)
}

// WriteQueuesWide writes bqueues -w: the default table with QUEUE_NAME
// neither cut nor narrower than the longest name (at least 15 columns).
func WriteQueuesWide(w io.Writer, queues []*api.Queue, noheader bool) error {
	width := 15
	for _, q := range queues {
		width = max(width, runeLen(q.GetName()))
	}
	return writeQueues(w, queues, noheader, width, padRight)
}

func writeQueues(w io.Writer, queues []*api.Queue, noheader bool, width int, name func(string, int) string) error {
	var b bytes.Buffer
	if !noheader {
		b.WriteString(padRight("QUEUE_NAME", width) + queuesHeader[15:])
	}
	for _, q := range queues {
		fmt.Fprintf(&b, "%s %-4s %s %4s %4s %4s %4s %5d %5d %5d %5d\n",
			name(q.GetName(), width),
			fmt.Sprintf("%3d", q.GetPriority()),
			fixed(QueueStatus(q), 14),
			dashIfZero(q.GetMaxSlots()),
			dashIfZero(q.GetUserSlotLimit()),
			dashIfZero(q.GetProcLimit()),
			dashIfZero(q.GetHostSlotLimit()),
			q.GetNjobs(), q.GetPend(), q.GetRun(), q.GetSsusp()+q.GetUsusp())
	}
	return flush(w, &b)
}

// QueueStatus is a queue's STATUS: Open or Closed (accepting submissions),
// then Active or Inact (dispatching): "Open:Active".
func QueueStatus(q *api.Queue) string {
	s := "Closed"
	if q.GetOpen() {
		s = "Open"
	}
	if q.GetActive() {
		return s + ":Active"
	}
	return s + ":Inact"
}
