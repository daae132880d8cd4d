package policy

import (
	"strings"
	"time"

	"xce/lib/config"
	"xce/lib/sched"
)

// queuePreempt is a queue's preemption policy for lib/sched: its
// preemptive and preemptable lists, and its MAX_JOB_PREEMPT,
// NO_PREEMPT_*_TIME (the queue's own, else the cluster's) and
// PREEMPT_DELAY.
func queuePreempt(conf *config.Config, q *config.Queue) sched.QueuePreempt {
	cl := &conf.Cluster.Preemption
	p := sched.QueuePreempt{
		Preemptive: q.Preemptive, Preemptable: q.Preemptable,
		MaxJobPreempt: q.MaxJobPreempt,
		Delay:         time.Duration(q.PreemptDelay) * time.Second,
	}
	if p.MaxJobPreempt == 0 {
		p.MaxJobPreempt = cl.MaxJobPreempt
	}
	run, fin := q.NoPreemptRunTime, q.NoPreemptFinishTime
	if run == "" {
		run = cl.NoPreemptRunTime
	}
	if fin == "" {
		fin = cl.NoPreemptFinishTime
	}
	// Checked when the configuration was loaded.
	p.NoPreemptRunTime, p.NoPreemptRunPercent, _ = config.PreemptTime(run)
	p.NoPreemptFinishTime, p.NoPreemptFinishPercent, _ = config.PreemptTime(fin)
	return p
}

// PreemptParams are the cluster's preemption parameters for lib/sched.
func PreemptParams(conf *config.Config) sched.PreemptParams {
	cl := &conf.Cluster.Preemption
	p := sched.PreemptParams{Resources: cl.PreemptableResources}
	for _, w := range cl.PreemptJobtype {
		switch strings.ToLower(w) {
		case "exclusive":
			p.Exclusive = true
		case "backfill":
			p.Backfill = true
		}
	}
	for _, w := range cl.PreemptFor {
		switch strings.ToLower(w) {
		case "least_run_time":
			p.LeastRunTime = true
		case "group_max":
			p.GroupMax = true
		case "group_jlp":
			p.GroupJLP = true
		case "user_jlp":
			p.UserJLP = true
		case "host_jlu":
			p.HostJLU = true
		case "mini_job":
			p.MiniJob = true
		case "optimal_mini_job":
			p.OptimalMiniJob = true
		}
	}
	return p
}
