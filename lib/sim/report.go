package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Tau is the bound of the bounded slowdown: a job shorter than this
// counts as this long, so that a short job's wait does not dominate.
const Tau = 10.0

// Figures summarise a set of jobs. Times are in seconds.
type Figures struct {
	Jobs       int     `json:"jobs"`
	Killed     int     `json:"killed_at_run_limit"`
	MeanWait   float64 `json:"mean_wait_s"`
	MedianWait float64 `json:"median_wait_s"`
	P95Wait    float64 `json:"p95_wait_s"`
	MeanBSLD   float64 `json:"mean_bounded_slowdown"`
	// SlotSeconds is what the jobs used (slots times run time); Share
	// its part of every job's.
	SlotSeconds float64 `json:"slot_seconds"`
	Share       float64 `json:"share"`
}

// Group is the figures of one queue or user.
type Group struct {
	Name string `json:"name"`
	Figures
}

// Summary is the figures of a run: what stdout shows and summary.json
// holds.
type Summary struct {
	Format     string `json:"trace_format"`
	TraceJobs  int    `json:"trace_jobs"`
	Malformed  int    `json:"malformed_lines"`
	Skipped    int    `json:"skipped"`
	Unfinished int    `json:"unfinished"`
	Hosts      int    `json:"hosts"`
	Slots      int    `json:"slots"`
	Cycles     int    `json:"cycles"`
	// Preemptions counts the jobs suspended by preemption.
	Preemptions int     `json:"preemptions,omitempty"`
	Makespan    float64 `json:"makespan_s"`
	// Utilisation is the slot-seconds used over the cluster's slots times
	// the makespan.
	Utilisation float64 `json:"utilisation"`
	Figures
	Queues []Group `json:"queues"`
	Users  []Group `json:"users"`
	// Templates are the instances of the configuration's templates; absent
	// without templates.
	Templates []TemplateFigures `json:"templates,omitempty"`
	// Borrowed are the shared resources a provider lends more of; absent
	// without them.
	Borrowed []BorrowFigures `json:"borrowed,omitempty"`
}

// BorrowFigures is what one shared resource's provider lent.
type BorrowFigures struct {
	Name      string  `json:"name"`
	BorrowMax int     `json:"borrow_max"`
	Loans     int     `json:"loans"`
	Units     int     `json:"units_borrowed"`
	UnitHours float64 `json:"unit_hours"`
}

// TemplateFigures is what one template's instances did and cost.
type TemplateFigures struct {
	Name          string  `json:"name"`
	Max           int     `json:"max"`
	Started       int     `json:"instances_started"`
	InstanceHours float64 `json:"instance_hours"`
	Price         float64 `json:"price"`
	Cost          float64 `json:"cost"`
}

// Summarise computes a run's figures over the jobs that ended.
func Summarise(r *Result) *Summary {
	s := &Summary{
		Format: string(r.Trace.Format), TraceJobs: len(r.Trace.Jobs) + len(r.Trace.Skipped),
		Malformed: len(r.Trace.Malformed), Skipped: len(r.Trace.Skipped),
		Hosts: r.Hosts, Slots: r.TotalSlots, Cycles: r.Cycles,
		Preemptions: r.Preemptions,
	}
	var all acc
	queues, users := map[string]*acc{}, map[string]*acc{}
	first, last := math.Inf(1), math.Inf(-1)
	for i := range r.Jobs {
		j := &r.Jobs[i]
		switch j.Outcome {
		case Skipped:
			s.Skipped++
			continue
		case Unfinished:
			s.Unfinished++
			continue
		}
		submit, start, end := j.Submit.Seconds(), j.Start.Seconds(), j.End.Seconds()
		first, last = min(first, submit), max(last, end)
		all.add(j, start-submit, end-start)
		for _, g := range []struct {
			m    map[string]*acc
			name string
		}{{queues, j.Queue}, {users, r.Trace.Jobs[j.Trace].User}} {
			a := g.m[g.name]
			if a == nil {
				a = &acc{}
				g.m[g.name] = a
			}
			a.add(j, start-submit, end-start)
		}
	}
	if all.n > 0 {
		s.Makespan = last - first
		if s.Makespan > 0 && s.Slots > 0 {
			s.Utilisation = all.slotSec / (float64(s.Slots) * s.Makespan)
		}
	}
	s.Figures = all.figures(all.slotSec)
	s.Queues = groups(queues, all.slotSec)
	s.Users = groups(users, all.slotSec)
	for _, t := range r.Templates {
		s.Templates = append(s.Templates, TemplateFigures{Name: t.Name, Max: t.Max, Started: t.Started,
			InstanceHours: t.Hours(), Price: t.Price, Cost: t.Cost()})
	}
	for _, b := range r.Borrows {
		s.Borrowed = append(s.Borrowed, BorrowFigures{Name: b.Name, BorrowMax: b.BorrowMax, Loans: b.Loans, Units: b.Units, UnitHours: b.UnitHours()})
	}
	return s
}

// acc accumulates one group's jobs.
type acc struct {
	n, killed     int
	waits         []float64
	bsld, slotSec float64
}

func (a *acc) add(j *JobResult, wait, run float64) {
	a.n++
	if j.Outcome == Killed {
		a.killed++
	}
	a.waits = append(a.waits, wait)
	a.bsld += max(1, (wait+run)/max(run, Tau))
	a.slotSec += float64(j.Slots) * run
}

func (a *acc) figures(total float64) Figures {
	f := Figures{Jobs: a.n, Killed: a.killed, SlotSeconds: a.slotSec}
	if a.n == 0 {
		return f
	}
	slices.Sort(a.waits)
	sum := 0.0
	for _, w := range a.waits {
		sum += w
	}
	f.MeanWait = sum / float64(a.n)
	f.MedianWait = quantile(a.waits, 0.5)
	f.P95Wait = quantile(a.waits, 0.95)
	f.MeanBSLD = a.bsld / float64(a.n)
	if total > 0 {
		f.Share = a.slotSec / total
	}
	return f
}

// quantile is the q-quantile of sorted values (nearest rank).
func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func groups(m map[string]*acc, total float64) []Group {
	names := mapsKeys(m)
	slices.Sort(names)
	out := make([]Group, 0, len(names))
	for _, n := range names {
		out = append(out, Group{Name: n, Figures: m[n].figures(total)})
	}
	return out
}

// WriteText prints the summary as `xced simulate` shows it (without the
// speed line, which is the caller's: it is the one figure that differs
// between runs).
func (s *Summary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "Trace:          %s, %d jobs, %d malformed lines\n", s.Format, s.TraceJobs, s.Malformed)
	fmt.Fprintf(w, "Cluster:        %d hosts, %d slots\n", s.Hosts, s.Slots)
	fmt.Fprintf(w, "Jobs:           %d done, %d killed at their run limit, %d skipped, %d unfinished\n",
		s.Jobs-s.Killed, s.Killed, s.Skipped, s.Unfinished)
	fmt.Fprintf(w, "Makespan:       %s s\n", num(s.Makespan))
	fmt.Fprintf(w, "Utilisation:    %s %%\n", num(100*s.Utilisation))
	fmt.Fprintf(w, "Wait:           mean %s s, median %s s, p95 %s s\n", num(s.MeanWait), num(s.MedianWait), num(s.P95Wait))
	fmt.Fprintf(w, "Slowdown:       mean bounded (tau %g s) %s\n", Tau, num(s.MeanBSLD))
	fmt.Fprintf(w, "Cycles:         %d\n", s.Cycles)
	if s.Preemptions > 0 {
		fmt.Fprintf(w, "Preemptions:    %d\n", s.Preemptions)
	}
	for _, g := range []struct {
		title string
		gs    []Group
	}{{"QUEUE", s.Queues}, {"USER", s.Users}} {
		fmt.Fprintf(w, "\n%-12s %8s %12s %12s %12s %10s %8s\n", g.title, "JOBS", "MEAN_WAIT", "MEDIAN_WAIT", "P95_WAIT", "MEAN_BSLD", "SHARE%")
		for _, q := range g.gs {
			fmt.Fprintf(w, "%-12s %8d %12s %12s %12s %10s %8s\n", q.Name, q.Jobs, num(q.MeanWait), num(q.MedianWait),
				num(q.P95Wait), num(q.MeanBSLD), num(100*q.Share))
		}
	}
	if len(s.Templates) > 0 {
		fmt.Fprintf(w, "\n%-12s %5s %8s %15s %10s %12s\n", "TEMPLATE", "MAX", "STARTED", "INSTANCE_HOURS", "PRICE", "COST")
		for _, t := range s.Templates {
			fmt.Fprintf(w, "%-12s %5d %8d %15s %10s %12s\n", t.Name, t.Max, t.Started, num(t.InstanceHours), num(t.Price), num(t.Cost))
		}
	}
	if len(s.Borrowed) > 0 {
		fmt.Fprintf(w, "\n%-12s %10s %6s %14s %11s\n", "RESOURCE", "BORROW_MAX", "LOANS", "UNITS_BORROWED", "UNIT_HOURS")
		for _, b := range s.Borrowed {
			fmt.Fprintf(w, "%-12s %10d %6d %14d %11s\n", b.Name, b.BorrowMax, b.Loans, b.Units, num(b.UnitHours))
		}
	}
}

// num prints a figure with two decimals.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// WriteFiles writes DIR/jobs.csv and DIR/summary.json.
func WriteFiles(dir string, r *Result, s *Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if err := writeCSV(filepath.Join(dir, "jobs.csv"), r); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), append(b, '\n'), 0o644)
}

// CSVHeader is jobs.csv's header.
const CSVHeader = "job_id,user,queue,slots,submit_time,start_time,end_time,wait_s,run_s,hosts"

// writeCSV writes one line per job the trace holds and the run did not
// skip, in the trace's order; a job that did not start or end has empty
// times.
func writeCSV(path string, r *Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("jobs.csv: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	w.WriteString(CSVHeader + "\n")
	var b []byte
	sec := func(b []byte, d float64) []byte { return strconv.AppendFloat(b, d, 'f', -1, 64) }
	for i := range r.Jobs {
		j := &r.Jobs[i]
		if j.Outcome == Skipped {
			continue
		}
		tj := &r.Trace.Jobs[j.Trace]
		b = b[:0]
		b = strconv.AppendInt(b, tj.ID, 10)
		b = append(b, ',')
		b = append(b, tj.User...)
		b = append(b, ',')
		b = append(b, j.Queue...)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(j.Slots), 10)
		b = append(b, ',')
		b = sec(b, j.Submit.Seconds())
		b = append(b, ',')
		if j.Start >= 0 {
			b = sec(b, j.Start.Seconds())
		}
		b = append(b, ',')
		if j.End >= 0 {
			b = sec(b, j.End.Seconds())
		}
		b = append(b, ',')
		if j.Start >= 0 {
			b = sec(b, (j.Start - j.Submit).Seconds())
		}
		b = append(b, ',')
		if j.End >= 0 {
			b = sec(b, (j.End - j.Start).Seconds())
		}
		b = append(b, ',')
		b = j.hosts.appendTo(b)
		b = append(b, '\n')
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("jobs.csv: %w", err)
	}
	return f.Close()
}

// WriteCompare prints two runs' figures side by side with the
// difference (b - a), overall, per queue and per user.
func WriteCompare(w io.Writer, nameA, nameB string, a, b *Summary) {
	fmt.Fprintf(w, "%-28s %14s %14s %14s\n", "", nameA, nameB, "DIFFERENCE")
	row := func(label string, x, y float64) {
		fmt.Fprintf(w, "%-28s %14s %14s %14s\n", label, num(x), num(y), signed(y-x))
	}
	row("jobs", float64(a.Jobs), float64(b.Jobs))
	row("killed at run limit", float64(a.Killed), float64(b.Killed))
	row("skipped", float64(a.Skipped), float64(b.Skipped))
	row("unfinished", float64(a.Unfinished), float64(b.Unfinished))
	row("makespan s", a.Makespan, b.Makespan)
	row("utilisation %", 100*a.Utilisation, 100*b.Utilisation)
	figs := func(prefix string, x, y Figures) {
		row(prefix+"jobs", float64(x.Jobs), float64(y.Jobs))
		row(prefix+"mean wait s", x.MeanWait, y.MeanWait)
		row(prefix+"median wait s", x.MedianWait, y.MedianWait)
		row(prefix+"p95 wait s", x.P95Wait, y.P95Wait)
		row(prefix+"mean bounded slowdown", x.MeanBSLD, y.MeanBSLD)
		row(prefix+"share %", 100*x.Share, 100*y.Share)
	}
	row("mean wait s", a.MeanWait, b.MeanWait)
	row("median wait s", a.MedianWait, b.MedianWait)
	row("p95 wait s", a.P95Wait, b.P95Wait)
	row("mean bounded slowdown", a.MeanBSLD, b.MeanBSLD)
	for _, g := range []struct {
		title  string
		ga, gb []Group
	}{{"queue", a.Queues, b.Queues}, {"user", a.Users, b.Users}} {
		for _, name := range unionNames(g.ga, g.gb, groupName) {
			fmt.Fprintf(w, "\n%s %s\n", g.title, name)
			figs("  ", named(g.ga, name, groupName).Figures, named(g.gb, name, groupName).Figures)
		}
	}
	templateName := func(t TemplateFigures) string { return t.Name }
	for _, name := range unionNames(a.Templates, b.Templates, templateName) {
		x, y := named(a.Templates, name, templateName), named(b.Templates, name, templateName)
		fmt.Fprintf(w, "\ntemplate %s\n", name)
		row("  instances started", float64(x.Started), float64(y.Started))
		row("  instance hours", x.InstanceHours, y.InstanceHours)
		row("  cost", x.Cost, y.Cost)
	}
	borrowName := func(b BorrowFigures) string { return b.Name }
	for _, name := range unionNames(a.Borrowed, b.Borrowed, borrowName) {
		x, y := named(a.Borrowed, name, borrowName), named(b.Borrowed, name, borrowName)
		fmt.Fprintf(w, "\nresource %s\n", name)
		row("  loans", float64(x.Loans), float64(y.Loans))
		row("  units borrowed", float64(x.Units), float64(y.Units))
		row("  unit hours", x.UnitHours, y.UnitHours)
	}
}

func signed(v float64) string {
	if v > 0 {
		return "+" + num(v)
	}
	return num(v)
}

func groupName(g Group) string { return g.Name }

// unionNames is the names of a's and b's entries, sorted, each once.
func unionNames[T any](a, b []T, name func(T) string) []string {
	var out []string
	for _, x := range append(slices.Clone(a), b...) {
		out = append(out, name(x))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// named is the entry of xs called want; the zero value when there is
// none (a figure one of the two compared runs lacks).
func named[T any](xs []T, want string, name func(T) string) T {
	for _, x := range xs {
		if name(x) == want {
			return x
		}
	}
	var zero T
	return zero
}
