package trace

import (
	"bufio"
	"cmp"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// headerOrder is the order the SWF definition lists its header fields in;
// WriteSWF writes known ones in this order, others after them by name, so
// that the same header always gives the same bytes.
var headerOrder = []string{
	"Version", "Computer", "Installation", "Acknowledge", "Information",
	"Conversion", "MaxJobs", "MaxRecords", "Preemption", "UnixStartTime",
	"TimeZone", "TimeZoneString", "StartTime", "EndTime", "MaxNodes",
	"MaxProcs", "MaxRuntime", "MaxMemory", "AllowOveruse", "MaxQueues",
	"Queues", "Queue", "MaxPartitions", "Partitions", "Partition", "Note",
}

// WriteSWF writes jobs in the Standard Workload Format, after header's
// "; Key: value" lines. What a Job does not hold (wait, CPU time, used
// memory, executable, partition) is -1; status is 1 (completed); the
// allocated and the requested processors are both Slots. Users, groups
// and queues named as ReadSWF names them ("u3", "g2", "q1") keep their
// numbers; other names get numbers above those, in order of appearance.
// ReadSWF of the output gives the jobs back (less Index, ResReq and
// whole-second rounding of times).
func WriteSWF(w io.Writer, header map[string]string, jobs []Job) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	keys := slices.Collect(maps.Keys(header))
	rank := func(k string) int {
		if i := slices.Index(headerOrder, k); i >= 0 {
			return i
		}
		return len(headerOrder)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
	for _, k := range keys {
		for v := range strings.SplitSeq(header[k], "\n") {
			bw.WriteString("; " + k + ": " + v + "\n")
		}
	}
	users := numbering(jobs, func(j *Job) string { return j.User }, "u", map[string]int64{"unknown": -1})
	groups := numbering(jobs, func(j *Job) string { return j.Group }, "g", map[string]int64{"": -1})
	queues := numbering(jobs, func(j *Job) string { return j.Queue }, "q", map[string]int64{"": -1})
	var b []byte
	for i := range jobs {
		j := &jobs[i]
		b = b[:0]
		b = strconv.AppendInt(b, j.ID, 10)
		b = appendSec(b, j.Submit)
		b = append(b, " -1"...)
		b = appendSec(b, j.Run)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(j.Slots), 10)
		b = append(b, " -1 -1 "...)
		b = strconv.AppendInt(b, int64(j.Slots), 10)
		if j.Limit > 0 {
			b = appendSec(b, j.Limit)
		} else {
			b = append(b, " -1"...)
		}
		b = append(b, ' ')
		if j.MemMB > 0 {
			b = strconv.AppendFloat(b, j.MemMB*1024, 'f', -1, 64)
		} else {
			b = append(b, "-1"...)
		}
		b = append(b, " 1 "...)
		b = strconv.AppendInt(b, users[j.User], 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, groups[j.Group], 10)
		b = append(b, " -1 "...)
		b = strconv.AppendInt(b, queues[j.Queue], 10)
		b = append(b, " -1 "...)
		if j.DependsOn > 0 {
			b = strconv.AppendInt(b, j.DependsOn, 10)
			b = appendSec(b, j.Think)
		} else {
			b = append(b, "-1 -1"...)
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendSec appends " " and d in seconds: whole seconds as an integer,
// otherwise in decimal to the nanosecond, without trailing zeros.
func appendSec(b []byte, d time.Duration) []byte {
	b = append(b, ' ')
	if d < 0 {
		b = append(b, '-')
		if d == -1<<63 {
			d++ // cannot be negated; a nanosecond does not matter here
		}
		d = -d
	}
	b = strconv.AppendInt(b, int64(d/time.Second), 10)
	if ns := int64(d % time.Second); ns != 0 {
		frac := strconv.AppendInt(nil, 1e9+ns, 10)[1:] // 9 digits
		b = append(b, '.')
		b = append(b, strings.TrimRight(string(frac), "0")...)
	}
	return b
}

// numbering gives each name its SWF number: prefix+N keeps N, fixed
// names their fixed number, others the next numbers above the largest
// kept one, in order of first appearance.
func numbering(jobs []Job, name func(*Job) string, prefix string, fixed map[string]int64) map[string]int64 {
	m := maps.Clone(fixed)
	var others []string
	top := int64(0)
	for i := range jobs {
		s := name(&jobs[i])
		if _, ok := m[s]; ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimPrefix(s, prefix), 10, 64); err == nil && n >= 0 &&
			strings.HasPrefix(s, prefix) && prefix+strconv.FormatInt(n, 10) == s {
			m[s] = n
			top = max(top, n)
			continue
		}
		m[s] = 0 // placeholder, numbered below
		others = append(others, s)
	}
	for _, s := range others {
		top++
		m[s] = top
	}
	return m
}
