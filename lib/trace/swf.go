package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// The 18 fields of an SWF line, 1-based as the format's definition
// numbers them.
const (
	swfJob       = 1
	swfSubmit    = 2
	swfWait      = 3
	swfRun       = 4
	swfAllocProc = 5
	swfAvgCPU    = 6
	swfUsedMem   = 7
	swfReqProc   = 8
	swfReqTime   = 9
	swfReqMem    = 10
	swfStatus    = 11
	swfUser      = 12
	swfGroup     = 13
	swfExec      = 14
	swfQueue     = 15
	swfPartition = 16
	swfPrecJob   = 17
	swfThink     = 18
	swfFields    = 18
)

// maxLine bounds one line of a text trace; a longer one is malformed
// rather than a reason to hold the whole file in memory.
const maxLine = 1 << 20

// ReadSWF reads a trace in the Standard Workload Format from r; name is
// the file name its Problems carry. Only an error reading r fails it.
//
// Mapping (issue 29): job number → ID; field 8 (requested processors) if
// > 0 else field 5 (allocated) → Slots; field 9 if > 0 → Limit; field 4 →
// Run; field 10 (KB per processor) → MemMB; field 12 → User "u<N>"
// ("unknown" when -1); field 13 → Group "g<N>" ("" when absent); field
// 15 → Queue "q<N>" ("" — the default queue — when 0 or absent); field
// 17/18 → DependsOn/Think. A job with a negative run time, a negative
// submit time or no processor count is Skipped.
func ReadSWF(r io.Reader, name string) (*Trace, error) {
	t := &Trace{Format: SWF, Header: map[string]string{}}
	p := swfParser{
		t:      t,
		name:   name,
		users:  map[int64]string{},
		groups: map[int64]string{},
		queues: map[int64]string{},
	}
	if err := eachLine(r, name, t, p.line); err != nil {
		return nil, err
	}
	sortJobs(t.Jobs)
	return t, nil
}

var errLongLine = fmt.Errorf("line too long")

// readLine returns the next line without its end (\n or \r\n). A line
// longer than maxLine is consumed and reported as errLongLine. The slice
// is valid until the next call.
func readLine(br *bufio.Reader) ([]byte, error) {
	b, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// Longer than the buffer: gather it, up to maxLine.
		buf := append([]byte(nil), b...)
		for err == bufio.ErrBufferFull {
			b, err = br.ReadSlice('\n')
			if len(buf) <= maxLine {
				buf = append(buf, b...)
			}
		}
		if len(buf) > maxLine {
			if err == nil || err == io.EOF {
				err = errLongLine // a following call finds EOF
			}
			return nil, err
		}
		b = buf
	}
	b = bytes.TrimSuffix(b, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	return b, err
}

type swfParser struct {
	t                     *Trace
	name                  string
	users, groups, queues map[int64]string
	f                     [swfFields]float64
	sized                 bool
}

func (p *swfParser) line(b []byte, n int) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	if b[0] == ';' {
		p.header(b[1:])
		return
	}
	k := 0
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != ' ' && b[i] != '\t' {
			i++
		}
		if k == swfFields {
			p.malformed(n, "more than 18 fields")
			return
		}
		v, ok := parseNum(b[:i])
		if !ok {
			p.malformed(n, fmt.Sprintf("field %d: %q is not a number", k+1, truncate(b[:i])))
			return
		}
		p.f[k] = v
		k++
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		b = b[i:]
	}
	if k != swfFields {
		p.malformed(n, fmt.Sprintf("%d fields, SWF has 18", k))
		return
	}
	f := &p.f
	get := func(i int) float64 { return f[i-1] }
	switch {
	case get(swfRun) < 0:
		p.skip(n, "negative run time")
		return
	case get(swfSubmit) < 0:
		p.skip(n, "negative submit time")
		return
	}
	// Processor counts are whole: a fraction is cut off.
	slots := math.Trunc(get(swfReqProc))
	if slots <= 0 {
		slots = math.Trunc(get(swfAllocProc))
	}
	if slots <= 0 {
		p.skip(n, "no processor count")
		return
	}
	if slots > 1<<31-1 || get(swfJob) > 1<<62 || get(swfPrecJob) > 1<<62 {
		p.malformed(n, "number out of range")
		return
	}
	if !p.sized {
		p.sized = true
		if c := p.capHint(); c > 0 {
			p.t.Jobs = make([]Job, 0, c)
		}
	}
	j := Job{
		ID:     toInt(get(swfJob)),
		Submit: seconds(get(swfSubmit)),
		Run:    seconds(get(swfRun)),
		Slots:  int(slots),
		User:   intern(p.users, toInt(get(swfUser)), 0, "u", "unknown"),
		Group:  intern(p.groups, toInt(get(swfGroup)), 1, "g", ""),
		Queue:  intern(p.queues, toInt(get(swfQueue)), 1, "q", ""),
		Line:   n,
	}
	if v := get(swfReqTime); v > 0 {
		j.Limit = seconds(v)
	}
	if v := get(swfReqMem); v > 0 {
		j.MemMB = v / 1024
	}
	if v := get(swfAvgCPU); v > 0 {
		// Field 6 is the average over the allocated processors.
		n := math.Trunc(get(swfAllocProc))
		if n <= 0 {
			n = slots
		}
		j.CPU = seconds(v * n)
	}
	if n := toInt(get(swfPrecJob)); n > 0 {
		j.DependsOn = n
		if th := get(swfThink); th > 0 {
			j.Think = seconds(th)
		}
	}
	p.t.Jobs = append(p.t.Jobs, j)
}

// capHint sizes the job list from the header's record count, so that a
// large trace is not copied as it grows. Bounded: a header may lie.
func (p *swfParser) capHint() int {
	for _, k := range []string{"MaxRecords", "MaxJobs"} {
		if v, ok := p.t.HeaderInt(k); ok && v > 0 {
			return int(min(v, 10_000_000))
		}
	}
	return 0
}

// header records a "; Key: value" comment. A key given more than once
// (Note) keeps every value, one per line.
func (p *swfParser) header(b []byte) {
	s := strings.TrimSpace(string(b))
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return
	}
	k, v := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
	if k == "" || strings.ContainsAny(k, " \t") {
		return // prose, not a header field
	}
	if old, ok := p.t.Header[k]; ok {
		v = old + "\n" + v
	}
	p.t.Header[k] = v
}

func (p *swfParser) malformed(n int, why string) {
	p.t.Malformed = append(p.t.Malformed, Problem{p.name, n, why})
}

func (p *swfParser) skip(n int, why string) {
	p.t.Skipped = append(p.t.Skipped, Problem{p.name, n, why})
}

// intern returns prefix+N, made once per N, or none when N < least
// (SWF's -1, "unknown"; 0 for a queue or group: none given).
func intern(m map[int64]string, n, least int64, prefix, none string) string {
	if n < least {
		return none
	}
	if s, ok := m[n]; ok {
		return s
	}
	s := prefix + strconv.FormatInt(n, 10)
	m[n] = s
	return s
}

// seconds converts a count of seconds to a Duration, saturating rather
// than overflowing.
func seconds(v float64) time.Duration {
	const maxSec = float64(1<<63-1) / 1e9
	if v >= maxSec {
		return 1<<63 - 1
	}
	if v <= -maxSec {
		return -1 << 63
	}
	return time.Duration(v * 1e9)
}

// parseNum reads a decimal number (sign, digits, an optional fraction
// and exponent) without allocating: SWF fields are integers but some
// archive traces carry fractions in the CPU-time and memory fields.
func parseNum(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	i := 0
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i++
	}
	var n uint64
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n < 1<<60 {
			n = n*10 + uint64(b[i]-'0')
		} else {
			// Too many digits for the fast path.
			return parseSlow(b)
		}
		digits++
	}
	if i == len(b) {
		if digits == 0 {
			return 0, false
		}
		v := float64(n)
		if neg {
			v = -v
		}
		return v, true
	}
	return parseSlow(b)
}

func parseSlow(b []byte) (float64, bool) {
	for _, c := range b {
		// Only decimal notation: ParseFloat would also take "inf",
		// "nan", hexadecimal and underscores.
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// toInt converts a parsed field to an integer, saturating.
func toInt(v float64) int64 {
	switch {
	case v >= 1<<63:
		return 1<<63 - 1
	case v < -1<<63:
		return -1 << 63
	}
	return int64(v)
}

// truncate keeps a quoted field short in a message.
func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
