package sim

import (
	"container/heap"
	"time"

	"xce/lib/sched"
)

// Preemption in the replay: the cycle's victims are suspended (their run
// time stops until they resume, their slots are free) and its resumes
// continue where they stopped, as the controller does with the decision
// of lib/sched. A preempted job's end event already in the heap is
// stale once it is suspended: end events are checked against the job's
// current end.

// simPre is a job's preemption state during the run.
type simPre struct {
	susp  bool
	left  int64 // run time left when suspended
	endAt int64 // the end event that counts
}

// preemptOn reports whether the cycle must run even with no free slot.
func (e *eng) preemptOn() bool {
	for i := range e.snap.Queues {
		if p := &e.snap.Queues[i].Preempt; len(p.Preemptive) > 0 || len(p.Preemptable) > 0 {
			return true
		}
	}
	return false
}

// current reports whether an end event is the job's current end.
func (e *eng) current(ev event) bool {
	sj := &e.jobs[ev.job]
	return sj.running >= 0 && !sj.pre.susp && sj.pre.endAt == ev.at
}

// applyPreempt suspends the decision's victims and resumes its resumed
// jobs at now.
func (e *eng) applyPreempt(d *sched.Decision, now int64) {
	for _, pl := range d.Placements {
		for _, v := range pl.Victims {
			sj := &e.jobs[v.ID]
			if sj.running < 0 || sj.pre.susp {
				continue
			}
			a := &e.snap.Running[sj.running]
			a.Preempt.Suspended = true
			a.Preempt.Count++
			sj.pre.susp, sj.pre.left = true, sj.pre.endAt-now
			e.free += slotsOf(a)
			e.res.Preemptions++
		}
	}
	for _, k := range d.Resumes {
		sj := &e.jobs[k.ID]
		if sj.running < 0 || !sj.pre.susp {
			continue
		}
		a := &e.snap.Running[sj.running]
		a.Preempt.Suspended = false
		sj.pre.susp = false
		sj.pre.endAt = now + sj.pre.left
		e.res.Jobs[k.ID].End = time.Duration(sj.pre.endAt) // later by the time it was suspended
		e.free -= slotsOf(a)
		heap.Push(&e.ends, event{at: sj.pre.endAt, job: int32(k.ID)})
	}
}

func slotsOf(a *sched.Alloc) int {
	n := 0
	for _, h := range a.Hosts {
		n += h.Slots
	}
	return n
}
