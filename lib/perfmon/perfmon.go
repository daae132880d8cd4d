// Package perfmon is badmin perfmon's sampler: LSF's scheduler
// performance counters (requests, queries, submissions, dispatches,
// completions) counted per sample period, each shown with the last
// period's count, the largest and smallest of the periods, their
// average and the total since the monitor started. It owns no clock and
// no counters of its own: the controller hands it its running totals
// and the time, so it is tested without waiting.
package perfmon

import (
	"sync"
	"time"
)

// Counter is one row of badmin perfmon view.
type Counter int

// The rows, in LSF's order.
const (
	Requests Counter = iota
	JobQueries
	HostQueries
	QueueQueries
	SubmitRequests
	JobsSubmitted
	JobsDispatched
	JobsCompleted
	NumCounters
)

// Names are the rows' labels, LSF's wording.
var Names = [NumCounters]string{
	"Processed requests: mbatchd",
	"Jobs information queries",
	"Hosts information queries",
	"Queue information queries",
	"Job submission requests",
	"Jobs submitted",
	"Jobs dispatched",
	"Jobs completed",
}

// Keys are the rows' names in JSON.
var Keys = [NumCounters]string{
	"requests", "job_queries", "host_queries", "queue_queries",
	"submission_requests", "jobs_submitted", "jobs_dispatched", "jobs_completed",
}

// Totals are the running totals of every counter.
type Totals [NumCounters]int64

// DefaultPeriod is LSF's SCHED_METRIC_SAMPLE_PERIOD default.
const DefaultPeriod = 60 * time.Second

// MinPeriod is the shortest sample period.
const MinPeriod = time.Second

// Monitor samples Totals by period. The zero Monitor is stopped.
type Monitor struct {
	mu sync.Mutex
	state
}

// state is what Start and Stop reset.
type state struct {
	running             bool
	period              time.Duration
	started             time.Time // when start was run
	begun               time.Time // the current period's start
	base                Totals    // the totals at begun
	sampled             time.Time // the last complete period's end
	periods             int64     // complete periods
	last, max, min, sum Totals
}

// Start starts sampling (again, from nothing) with the given period; 0
// keeps the period set before, or DefaultPeriod.
func (m *Monitor) Start(now time.Time, period time.Duration, cur Totals) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if period <= 0 {
		period = m.period
	}
	if period <= 0 {
		period = DefaultPeriod
	}
	m.state = state{running: true, period: period, started: now, begun: now, base: cur}
}

// Stop stops sampling and forgets the samples.
func (m *Monitor) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	period := m.period
	m.state = state{period: period}
}

// SetPeriod changes the sample period; the current period ends at once
// and the samples so far are kept.
func (m *Monitor) SetPeriod(now time.Time, period time.Duration, cur Totals) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running && now.After(m.begun) {
		m.close(now, cur)
	}
	m.period = period
}

// Running says whether the monitor samples.
func (m *Monitor) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running
}

// Tick ends the current period when it is over (call it every second or
// so). A period missed entirely (a stalled caller) is folded into the
// next one rather than counted as an empty one.
func (m *Monitor) Tick(now time.Time, cur Totals) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running && !now.Before(m.begun.Add(m.period)) {
		m.close(now, cur)
	}
}

// close ends the current period at now (m.mu held).
func (m *Monitor) close(now time.Time, cur Totals) {
	for i := range cur {
		d := cur[i] - m.base[i]
		m.last[i] = d
		if m.periods == 0 || d > m.max[i] {
			m.max[i] = d
		}
		if m.periods == 0 || d < m.min[i] {
			m.min[i] = d
		}
		m.sum[i] += d
	}
	m.periods++
	m.base, m.begun, m.sampled = cur, now, now
}

// Row is one counter's figures.
type Row struct {
	Name, Key                  string
	Last, Max, Min, Avg, Total int64
}

// View is what badmin perfmon view prints.
type View struct {
	Running bool
	Period  time.Duration
	Started time.Time // the monitor's start
	Sampled time.Time // the end of the last complete period (zero: none yet)
	Periods int64
	Rows    []Row
}

// View returns the figures now. Last, Max, Min and Avg are over the
// complete periods; Total also counts the period under way, so that what
// happened since the last period ended is seen at once.
func (m *Monitor) View(cur Totals) View {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := View{Running: m.running, Period: m.period, Started: m.started, Sampled: m.sampled, Periods: m.periods}
	if !m.running {
		return v
	}
	for i := range NumCounters {
		r := Row{Name: Names[i], Key: Keys[i], Last: m.last[i], Max: m.max[i], Min: m.min[i], Total: m.sum[i] + cur[i] - m.base[i]}
		if m.periods > 0 {
			r.Avg = m.sum[i] / m.periods
		}
		v.Rows = append(v.Rows, r)
	}
	return v
}
