package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Preemption holds the cluster's preemption parameters (lsb.params), as
// keys of [cluster].
type Preemption struct {
	// PreemptFor (PREEMPT_FOR): "least_run_time" takes victims by the
	// shortest run first; "group_max", "group_jlp", "user_jlp" and
	// "host_jlu" leave suspended jobs out of a user group's total, a
	// user group's and a user's per-processor, and a user's or group's
	// per-host slot limits; "optimal_mini_job" suspends the fewest jobs
	// for a parallel job; "mini_job" (only enough jobs) is what XCE always
	// does.
	PreemptFor []string `toml:"preempt_for"`
	// PreemptJobtype (PREEMPT_JOBTYPE): "exclusive" lets exclusive jobs
	// be preempted; "backfill" and "affinity" are accepted.
	PreemptJobtype []string `toml:"preempt_jobtype"`
	// PreemptableResources (PREEMPTABLE_RESOURCES): what a suspended
	// victim gives back besides its slots: "mem", "ngpus_physical" (GPUs),
	// licence tokens (shared resources) or other counters.
	PreemptableResources []string `toml:"preemptable_resources"`
	// MaxJobPreempt (MAX_JOB_PREEMPT): a job preempted that many times
	// runs to completion; queues may set their own. 0 = no limit.
	MaxJobPreempt int `toml:"max_job_preempt"`
	// NoPreemptRunTime and NoPreemptFinishTime (NO_PREEMPT_RUN_TIME,
	// NO_PREEMPT_FINISH_TIME): jobs that have run less, or would reach
	// their run limit sooner, are not preempted: a duration ("30m") or a
	// percentage of the job's run limit ("10%"); queues may set their own.
	NoPreemptRunTime    string `toml:"no_preempt_run_time"`
	NoPreemptFinishTime string `toml:"no_preempt_finish_time"`
	// PreemptionWaitTime (PREEMPTION_WAIT_TIME): accepted for imported
	// configurations, without effect. LSF (with License Scheduler) waits
	// that long after preempting for the victims' resources to come
	// back; XCE counts a victim's slots and preemptable resources free in
	// the same decision that starts the preemptor, so there is no wait to
	// bound.
	PreemptionWaitTime Duration `toml:"preemption_wait_time"`
}

// QueuePreemption holds a queue's preemption settings besides its
// preemptive and preemptable lists.
type QueuePreemption struct {
	// TerminateWhen (TERMINATE_WHEN): "preempt" ends preempted jobs
	// instead of suspending them (TERM_PREEMPT); a rerunnable job (the
	// queue's or profile's rerunnable, bsub -r) goes back to pending.
	TerminateWhen []string `toml:"terminate_when"`
	// MaxJobPreempt, NoPreemptRunTime, NoPreemptFinishTime: the
	// cluster's keys, for this queue's jobs.
	MaxJobPreempt       int    `toml:"max_job_preempt"`
	NoPreemptRunTime    string `toml:"no_preempt_run_time"`
	NoPreemptFinishTime string `toml:"no_preempt_finish_time"`
	// PreemptDelay (PREEMPT_DELAY): this queue's jobs preempt only once
	// they have pended that long.
	PreemptDelay Duration `toml:"preempt_delay"`
}

// TerminateOnPreempt reports whether the queue ends preempted jobs.
func (q *Queue) TerminateOnPreempt() bool {
	for _, w := range q.TerminateWhen {
		if strings.EqualFold(w, "preempt") {
			return true
		}
	}
	return false
}

// PreemptTime reads a no_preempt_*_time value: a duration, or a
// percentage of the run limit. Both zero for "".
func PreemptTime(s string) (time.Duration, float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, 0, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v < 0 || v > 100 {
			return 0, 0, fmt.Errorf("%q: a percentage is 0%% to 100%%", s)
		}
		return 0, v, nil
	}
	var d Duration
	if err := d.UnmarshalText([]byte(s)); err != nil {
		return 0, 0, err
	}
	return time.Duration(d) * time.Second, 0, nil
}

var (
	preemptForWords = []string{"group_max", "group_jlp", "user_jlp", "host_jlu", "least_run_time", "mini_job", "optimal_mini_job"}
	jobtypeWords    = []string{"exclusive", "backfill", "affinity"}
)

// checkPreemptParams checks the cluster's and the queues' preemption
// keys.
func (c *Config) checkPreemptParams(k *checker) {
	p := &c.Cluster.Preemption
	for _, w := range p.PreemptFor {
		if !slices.Contains(preemptForWords, strings.ToLower(w)) {
			k.add("cluster.preempt_for", "%q: use %s", w, strings.Join(preemptForWords, ", "))
		}
	}
	for _, w := range p.PreemptJobtype {
		if !slices.Contains(jobtypeWords, strings.ToLower(w)) {
			k.add("cluster.preempt_jobtype", "%q: use %s", w, strings.Join(jobtypeWords, ", "))
		}
	}
	if p.MaxJobPreempt < 0 {
		k.add("cluster.max_job_preempt", "%d: cannot be negative", p.MaxJobPreempt)
	}
	for key, v := range map[string]string{"no_preempt_run_time": p.NoPreemptRunTime, "no_preempt_finish_time": p.NoPreemptFinishTime} {
		if _, _, err := PreemptTime(v); err != nil {
			k.add("cluster."+key, "%v", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Queues)) {
		q := c.Queues[name]
		key := "queues." + name
		for _, w := range q.TerminateWhen {
			switch strings.ToLower(w) {
			case "preempt", "load", "window":
			default:
				k.add(key+".terminate_when", "%q: use \"preempt\"", w)
			}
		}
		if q.MaxJobPreempt < 0 {
			k.add(key+".max_job_preempt", "%d: cannot be negative", q.MaxJobPreempt)
		}
		for sub, v := range map[string]string{"no_preempt_run_time": q.NoPreemptRunTime, "no_preempt_finish_time": q.NoPreemptFinishTime} {
			if _, _, err := PreemptTime(v); err != nil {
				k.add(key+"."+sub, "%v", err)
			}
		}
	}
}

// printPreemptParams writes the cluster's preemption keys.
func (w *printer) printPreemptParams(p *Preemption) {
	w.kv("preempt_for", p.PreemptFor)
	w.kv("preempt_jobtype", p.PreemptJobtype)
	w.kv("preemptable_resources", p.PreemptableResources)
	w.kv("max_job_preempt", p.MaxJobPreempt)
	w.kv("no_preempt_run_time", p.NoPreemptRunTime)
	w.kv("no_preempt_finish_time", p.NoPreemptFinishTime)
	w.kv("preemption_wait_time", p.PreemptionWaitTime)
}

// printQueuePreempt writes a queue's preemption keys.
func (w *printer) printQueuePreempt(q *QueuePreemption) {
	w.kv("terminate_when", q.TerminateWhen)
	w.kv("max_job_preempt", q.MaxJobPreempt)
	w.kv("no_preempt_run_time", q.NoPreemptRunTime)
	w.kv("no_preempt_finish_time", q.NoPreemptFinishTime)
	w.kv("preempt_delay", q.PreemptDelay)
}

// splitPreemptPref splits a preemptive list entry "queue+N" into the
// queue and its preference level.
func splitPreemptPref(e string) (string, bool) {
	name, n, ok := strings.Cut(e, "+")
	if !ok {
		return e, true
	}
	v, err := strconv.Atoi(n)
	return name, err == nil && v >= 0
}
