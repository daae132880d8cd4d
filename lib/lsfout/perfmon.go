package lsfout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"xce/lib/api"
)

// WritePerfmon is badmin perfmon view, LSF's layout: the monitor's start,
// the end of its last sample period and the period, then one row per
// counter with its last, largest, smallest and average count per period
// and the total, then the controller's file descriptors.
func WritePerfmon(w io.Writer, r *api.PerfmonReply, loc *time.Location) error {
	var b bytes.Buffer
	if !r.GetRunning() {
		b.WriteString("The performance monitor has not been started: run badmin perfmon start [sample_period]\n")
		_, err := w.Write(b.Bytes())
		return err
	}
	rule := strings.Repeat("-", 90) + "\n"
	fmt.Fprintf(&b, "Performance monitor start time:  %s\n", FormatEventTime(r.GetStartTime(), loc))
	if r.GetSampledTime() != 0 {
		fmt.Fprintf(&b, "End time of last sample period:  %s\n", FormatEventTime(r.GetSampledTime(), loc))
	} else {
		b.WriteString("End time of last sample period:  -\n")
	}
	fmt.Fprintf(&b, "Sample period :                  %d Seconds\n", r.GetPeriodSec())
	b.WriteString(rule)
	fmt.Fprintf(&b, "%-40s %9s %9s %9s %9s %9s\n", "Metrics", "Last", "Max", "Min", "Avg", "Total")
	b.WriteString(rule)
	for _, row := range r.GetRows() {
		fmt.Fprintf(&b, "%-40s %9d %9d %9d %9d %9d\n", row.GetName(), row.GetLast(), row.GetMax(), row.GetMin(), row.GetAvg(), row.GetTotal())
	}
	b.WriteString(rule)
	fmt.Fprintf(&b, "%-40s %9s %9s %9s\n", "File Descriptor Metrics", "Free", "Used", "Total")
	b.WriteString(rule)
	fmt.Fprintf(&b, "%-40s %9d %9d %9d\n", "MBD file descriptor usage", max(r.GetFdLimit()-r.GetFdUsed(), 0), r.GetFdUsed(), r.GetFdLimit())
	_, err := w.Write(b.Bytes())
	return err
}

// WritePerfmonJSON is badmin perfmon view -json: the same figures, one
// object per counter keyed by its JSON name, times in RFC 3339.
func WritePerfmonJSON(w io.Writer, r *api.PerfmonReply) error {
	type row struct {
		Name  string `json:"name"`
		Last  int64  `json:"last"`
		Max   int64  `json:"max"`
		Min   int64  `json:"min"`
		Avg   int64  `json:"avg"`
		Total int64  `json:"total"`
	}
	out := struct {
		Running       bool             `json:"running"`
		StartTime     string           `json:"start_time,omitempty"`
		LastSampleEnd string           `json:"last_sample_end,omitempty"`
		PeriodSeconds int32            `json:"sample_period_seconds"`
		Periods       int64            `json:"periods"`
		Metrics       map[string]row   `json:"metrics"`
		FD            map[string]int32 `json:"file_descriptors"`
	}{
		Running: r.GetRunning(), PeriodSeconds: r.GetPeriodSec(), Periods: r.GetPeriods(),
		Metrics: map[string]row{},
		FD:      map[string]int32{"free": max(r.GetFdLimit()-r.GetFdUsed(), 0), "used": r.GetFdUsed(), "total": r.GetFdLimit()},
	}
	if t := r.GetStartTime(); t != 0 {
		out.StartTime = time.Unix(0, t).Format(time.RFC3339)
	}
	if t := r.GetSampledTime(); t != 0 {
		out.LastSampleEnd = time.Unix(0, t).Format(time.RFC3339)
	}
	for _, x := range r.GetRows() {
		out.Metrics[x.GetKey()] = row{x.GetName(), x.GetLast(), x.GetMax(), x.GetMin(), x.GetAvg(), x.GetTotal()}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
