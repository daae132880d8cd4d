package trace

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// ReadLSBAcct reads IBM LSF's job log, lsb.acct: one JOB_FINISH record a
// line, fields separated by blanks, strings in double quotes (a quote
// inside doubled), lists preceded by their counts. Other records
// (EVENT_ADRSV_FINISH, JOB_RESIZE) are passed over.
//
// Mapping: jobId → ID, idx → Index; submitTime → Submit; the record's
// event time (when the job finished) less startTime → Run; numProcessors
// → Slots; ru_utime + ru_stime (the usage's first two fields, those of
// them not -1) → CPU; userName → User; queue → Queue; resReq → ResReq, its
// rusage[mem] → MemMB; runLimit (seconds; 0 or -1: none) → Limit; a
// dependCond on one job (done(N), ended(N), N) → DependsOn. Times are
// made relative to the earliest submission, which Header["UnixStartTime"]
// keeps. A job that never started (startTime 0) or whose end is before
// its start is Skipped.
//
// Fields up to the command are required; later ones (added release by
// release: maxRMem, runLimit, ...) are read while the record has them.
func ReadLSBAcct(r io.Reader, name string) (*Trace, error) {
	t := &Trace{Format: LSBAcct, Header: map[string]string{}}
	p := lsbParser{t: t, name: name, names: map[string]string{}, mem: map[string]float64{}}
	if err := eachLine(r, name, t, p.line); err != nil {
		return nil, err
	}
	rebase(t)
	sortJobs(t.Jobs)
	return t, nil
}

// rebase makes the jobs' submission times (since the epoch, as Durations)
// relative to the earliest one, and records that in the header.
func rebase(t *Trace) {
	if len(t.Jobs) == 0 {
		return
	}
	first := t.Jobs[0].Submit
	for _, j := range t.Jobs {
		first = min(first, j.Submit)
	}
	for i := range t.Jobs {
		t.Jobs[i].Submit -= first
	}
	t.Header["UnixStartTime"] = strconv.FormatInt(int64(first/time.Second), 10)
}

type lsbParser struct {
	t     *Trace
	name  string
	names map[string]string  // interned user and queue names
	mem   map[string]float64 // rusage[mem] of each resReq seen
	f     fields
}

// fields walks the tokens of one record.
type fields struct {
	rest []byte
	n    int   // fields read
	err  error // the first problem
}

// next returns the next field, unquoted; ok is false at the end of the
// record.
func (f *fields) next() (tok []byte, ok bool) {
	i := 0
	for i < len(f.rest) && (f.rest[i] == ' ' || f.rest[i] == '\t') {
		i++
	}
	f.rest = f.rest[i:]
	f.n++ // counted when missing too, for the message
	if len(f.rest) == 0 {
		return nil, false
	}
	if f.rest[0] != '"' {
		j := 0
		for j < len(f.rest) && f.rest[j] != ' ' && f.rest[j] != '\t' {
			j++
		}
		tok, f.rest = f.rest[:j], f.rest[j:]
		return tok, true
	}
	// A quoted string: "" inside it is one quote.
	var out []byte
	j := 1
	start := 1
	for {
		k := bytes.IndexByte(f.rest[j:], '"')
		if k < 0 {
			f.fail("a string without its closing quote")
			f.rest = nil
			return nil, false
		}
		j += k
		if j+1 < len(f.rest) && f.rest[j+1] == '"' {
			out = append(out, f.rest[start:j+1]...)
			j += 2
			start = j
			continue
		}
		if out == nil {
			tok = f.rest[start:j]
		} else {
			tok = append(out, f.rest[start:j]...)
		}
		f.rest = f.rest[j+1:]
		return tok, true
	}
}

func (f *fields) fail(why string) {
	if f.err == nil {
		f.err = fmt.Errorf("field %d: %s", f.n, why)
	}
}

// str reads a string field; a required one missing is an error.
func (f *fields) str(what string) []byte {
	tok, ok := f.next()
	if !ok {
		f.fail(what + " is missing")
	}
	return tok
}

// num reads a numeric field.
func (f *fields) num(what string) float64 {
	tok, ok := f.next()
	if !ok {
		f.fail(what + " is missing")
		return 0
	}
	v, ok := parseNum(tok)
	if !ok {
		f.fail(fmt.Sprintf("%s: %q is not a number", what, truncate(tok)))
	}
	return v
}

// opt reads an optional numeric field: one that is not a number is
// passed over (ok false) without refusing the record.
func (f *fields) opt(what string) (float64, bool) {
	tok, ok := f.next()
	if !ok {
		f.fail(what + " is missing")
		return 0, false
	}
	return parseNum(tok)
}

// skip passes over n fields.
func (f *fields) skip(n int, what string) {
	for range n {
		if _, ok := f.next(); !ok {
			f.fail(what + " is missing")
			return
		}
	}
}

// count reads a list's length, bounded by what the record can hold.
func (f *fields) count(what string) int {
	v := f.num(what)
	if v < 0 || v > float64(len(f.rest)) || v != float64(int(v)) {
		f.fail(fmt.Sprintf("%s: %v is not a list length", what, v))
		return 0
	}
	return int(v)
}

func (p *lsbParser) line(b []byte, n int) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == '#' {
		return
	}
	p.f = fields{rest: b}
	f := &p.f
	kind := f.str("the record type")
	if f.err == nil && !bytes.Equal(kind, []byte("JOB_FINISH")) {
		if len(kind) > 0 && b[0] == '"' {
			return // another kind of record
		}
		p.malformed(n, "not an lsb.acct record")
		return
	}
	f.str("the version")
	end := f.num("the event time")
	id := f.num("jobId")
	f.skip(2, "userId, options")
	procs := f.num("numProcessors")
	submit := f.num("submitTime")
	f.skip(2, "beginTime, termTime")
	start := f.num("startTime")
	user := f.str("userName")
	queue := f.str("queue")
	resReq := f.str("resReq")
	depend := f.str("dependCond")
	f.skip(7, "preExecCmd ... jobFile")
	f.skip(f.count("numAskedHosts"), "askedHosts")
	f.skip(f.count("numExHosts"), "execHosts")
	f.skip(4, "jStatus ... command")
	if f.err != nil {
		p.malformed(n, f.err.Error())
		return
	}
	// Optional from here: the fields later releases added. A record
	// that ends (or stops making sense) early keeps what was read.
	index, limit := 0.0, 0.0
	// The resource usage (lsfRusage) starts with ru_utime and ru_stime,
	// seconds, -1 where LSF had none: their sum is the job's CPU time.
	cpu := 0.0
	for _, what := range []string{"ru_utime", "ru_stime"} {
		if v, ok := f.opt(what); ok && v > 0 {
			cpu += v
		}
	}
	f.skip(17+4, "the resource usage ... maxNumProcessors")
	f.skip(2, "loginShell, timeEvent")
	if v := f.num("idx"); f.err == nil {
		index = v
	}
	f.skip(23, "maxRMem ... jobDescription")
	f.skip(2*f.count("the submitEXT count"), "submitEXT")
	f.skip(5*f.count("numHostRusage"), "hostRusage")
	f.skip(1, "options3")
	if v := f.num("runLimit"); f.err == nil {
		limit = v
	}
	switch {
	case id < 1 || id > 1<<62 || index < 0 || index > 1<<31-1 || procs > 1<<31-1:
		p.malformed(n, "a number out of range")
		return
	case start <= 0:
		p.skip(n, "never started")
		return
	case end < start:
		p.skip(n, "ended before it started")
		return
	case procs < 1:
		p.skip(n, "no processor count")
		return
	}
	j := Job{
		ID:     int64(id),
		Index:  int64(index),
		Submit: seconds(submit),
		Run:    seconds(end - start),
		Slots:  int(procs),
		User:   p.intern(user),
		Queue:  p.intern(queue),
		ResReq: p.intern(resReq),
		MemMB:  p.memOf(resReq),
		Line:   n,
	}
	if cpu > 0 && !math.IsInf(cpu, 0) {
		j.CPU = seconds(cpu)
	}
	if limit > 0 {
		j.Limit = seconds(limit)
	}
	j.DependsOn = dependsOn(string(depend))
	p.t.Jobs = append(p.t.Jobs, j)
}

func (p *lsbParser) intern(b []byte) string {
	if s, ok := p.names[string(b)]; ok {
		return s
	}
	s := string(b)
	p.names[s] = s
	return s
}

// memOf returns the rusage[mem] (MB) of a resource requirement, parsed
// once per distinct string.
func (p *lsbParser) memOf(resReq []byte) float64 {
	if len(resReq) == 0 {
		return 0
	}
	if v, ok := p.mem[string(resReq)]; ok {
		return v
	}
	v := rusageMem(string(resReq))
	p.mem[string(resReq)] = v
	return v
}

func (p *lsbParser) malformed(n int, why string) {
	p.t.Malformed = append(p.t.Malformed, Problem{p.name, n, why})
}

func (p *lsbParser) skip(n int, why string) {
	p.t.Skipped = append(p.t.Skipped, Problem{p.name, n, why})
}
