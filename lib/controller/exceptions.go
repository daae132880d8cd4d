package controller

import (
	"time"

	"xce/lib/api"
	"xce/lib/config"
)

// Job exceptions (bjobs -x, the EXCEPTION STATUS of bjobs -l, the
// exception_status field) are computed when a query asks, never stored:
// they follow from the job's times, its CPU time and its queue's
// thresholds, so a reconfiguration applies to them at once.
const (
	excOverrun  = "overrun"
	excUnderrun = "underrun"
	excIdle     = "idle"
	excEstimate = "runtime_est_exceeded"
)

// exceptionRules are the thresholds a queue sets (lsb.queues JOB_OVERRUN,
// JOB_UNDERRUN, JOB_IDLE); zero detects nothing.
type exceptionRules struct {
	overrun, underrun time.Duration
	idle              float64       // CPU time / run time
	idleAfter         time.Duration // run time before idle is judged (EADMIN_TRIGGER_DURATION)
}

// rulesOf reads a queue's thresholds from the configuration; an unknown
// queue (lost_and_found) has none.
func rulesOf(conf *config.Config, queue string) exceptionRules {
	q := conf.Queues[queue]
	if q == nil {
		return exceptionRules{}
	}
	sec := func(d config.Duration) time.Duration { return time.Duration(d) * time.Second }
	return exceptionRules{
		overrun:   sec(q.JobOverrun),
		underrun:  sec(q.JobUnderrun),
		idle:      q.JobIdle,
		idleAfter: sec(conf.Cluster.EadminTriggerDuration),
	}
}

// jobExceptions returns the exceptions a job shows at now, in LSF's order
// (overrun, underrun, idle, runtime_est_exceeded). Its run time runs from
// its start to its end, or to now while it is unfinished; cpuMs is its CPU
// time; estimate is its -We (0 = none). A job that never started has
// none. The rules, each judged over the whole run so that bjobs -x -a
// still shows a finished job that triggered one:
//   - overrun: the run time is longer than the queue's job_overrun;
//   - underrun: the job exited abnormally (EXIT) with a run time shorter
//     than job_underrun (LSF detects underrun when a job exits abnormally);
//   - idle: after running at least idleAfter, CPU time / run time is below
//     job_idle; a suspended job is not judged while it is suspended;
//   - runtime_est_exceeded: the run time is longer than the -We estimate.
func jobExceptions(j *api.Job, cpuMs int64, estimate time.Duration, rules exceptionRules, now time.Time) []string {
	if j.GetStartTime() == 0 {
		return nil
	}
	state := j.GetState()
	if state == api.JobState_PEND || state == api.JobState_PSUSP {
		return nil // requeued: the last run is over
	}
	end := now
	finished := isFinished(state)
	if finished && j.GetEndTime() != 0 {
		end = time.Unix(0, j.GetEndTime())
	}
	run := end.Sub(time.Unix(0, j.GetStartTime()))
	if run < 0 {
		run = 0
	}
	var out []string
	if rules.overrun > 0 && run > rules.overrun {
		out = append(out, excOverrun)
	}
	if rules.underrun > 0 && state == api.JobState_EXIT && run < rules.underrun {
		out = append(out, excUnderrun)
	}
	judged := state == api.JobState_RUN || finished
	if rules.idle > 0 && judged && run > 0 && run >= rules.idleAfter {
		if float64(cpuMs)*float64(time.Millisecond)/float64(run) < rules.idle {
			out = append(out, excIdle)
		}
	}
	if estimate > 0 && run > estimate {
		out = append(out, excEstimate)
	}
	return out
}
