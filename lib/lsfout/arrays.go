package lsfout

import (
	"io"
	"strconv"
	"sync"
	"time"
)

// ArraysFormat is a parsed bjobs -A -o specification: one record per job
// array. Its fields are bjobs -A's columns (jobid, array_spec, owner,
// njobs, pend, done, run, exit, ssusp, ususp, psusp) and every bjobs -o
// field, which takes the value of the array's first element listed (the
// queue, project, submission time and the like, that all elements
// share). Set Now before writing.
type ArraysFormat struct {
	table[*ArrayCounts]
	Now time.Time
}

// ArraysColumns is the specification bjobs -A -json uses without -o:
// bjobs -A's columns.
const ArraysColumns = "jobid array_spec owner njobs pend done run exit ssusp ususp psusp"

// ParseArraysFormat parses a bjobs -A -o specification (see ParseFormat
// for the syntax).
func ParseArraysFormat(spec string) (*ArraysFormat, error) {
	t, err := parseColumns(spec, arrayFields(), arrayFieldByName())
	if err != nil {
		return nil, err
	}
	return &ArraysFormat{table: t}, nil
}

func (f *ArraysFormat) ctx() *fieldCtx {
	return &fieldCtx{now: unixNano(f.Now), loc: time.Local}
}

// Write prints the arrays as a table, as Format.Write prints jobs.
func (f *ArraysFormat) Write(w io.Writer, arrays []*ArrayCounts, noheader bool) error {
	return f.write(w, f.ctx(), arrays, noheader)
}

// WriteJSON prints bjobs -A -json: {"COMMAND":"bjobs","JOBS":n,
// "RECORDS":[...]}, one record per array, every value a string.
func (f *ArraysFormat) WriteJSON(w io.Writer, arrays []*ArrayCounts) error {
	return writeJSON(w, "bjobs", "JOBS", f.records(f.ctx(), arrays))
}

func acount(get func(a *ArrayCounts) int) func(*fieldCtx, *ArrayCounts) string {
	return func(_ *fieldCtx, a *ArrayCounts) string { return strconv.Itoa(get(a)) }
}

// arrayFields are bjobs -A's columns, then the bjobs fields.
var arrayFields = sync.OnceValue(func() []*fieldDef[*ArrayCounts] {
	list := []*fieldDef[*ArrayCounts]{
		{name: "jobid", aliases: []string{"id"}, width: 7, text: func(_ *fieldCtx, a *ArrayCounts) string { return strconv.FormatInt(a.Job.GetJobId(), 10) }},
		{name: "array_spec", width: 10, text: func(_ *fieldCtx, a *ArrayCounts) string {
			return submitted(a.Job).GetJobName() + submitted(a.Job).GetArraySpec()
		}},
		{name: "owner", width: 8, text: func(_ *fieldCtx, a *ArrayCounts) string { return submitted(a.Job).GetUser() }},
		{name: "njobs", width: 5, text: acount(func(a *ArrayCounts) int { return a.NJobs })},
		{name: "pend", width: 4, text: acount(func(a *ArrayCounts) int { return a.Pend })},
		{name: "done", width: 4, text: acount(func(a *ArrayCounts) int { return a.Done })},
		{name: "run", width: 4, text: acount(func(a *ArrayCounts) int { return a.Run })},
		{name: "exit", width: 4, text: acount(func(a *ArrayCounts) int { return a.Exit })},
		{name: "ssusp", width: 5, text: acount(func(a *ArrayCounts) int { return a.Ssusp })},
		{name: "ususp", width: 5, text: acount(func(a *ArrayCounts) int { return a.Ususp })},
		{name: "psusp", width: 5, text: acount(func(a *ArrayCounts) int { return a.Psusp })},
	}
	for _, f := range fields() {
		if f.name == "jobid" {
			continue
		}
		d := &fieldDef[*ArrayCounts]{name: f.name, aliases: f.aliases, width: f.width, cutFront: f.cutFront}
		if f.text != nil {
			text := f.text
			d.text = func(c *fieldCtx, a *ArrayCounts) string { return text(c, a.Job) }
		}
		if f.kb != nil {
			kb := f.kb
			d.kb = func(a *ArrayCounts) (int64, bool) { return kb(a.Job) }
		}
		list = append(list, d)
	}
	return list
})

var arrayFieldByName = sync.OnceValue(func() map[string]*fieldDef[*ArrayCounts] { return indexFields(arrayFields()) })
