package worker

import (
	"sync/atomic"
	"time"
)

// stepTracer, when set (benchmarks), gets the wall time of each step of a
// job's start and end that containment adds: cgroup-create,
// shepherd-start, cgroup-add, cgroup-end-usage, cgroup-kill-left,
// cgroup-remove.
var stepTracer atomic.Pointer[func(step string, d time.Duration)]

// traceStep passes the time since t0 to the step tracer, if any.
func traceStep(step string, t0 time.Time) {
	if f := stepTracer.Load(); f != nil {
		(*f)(step, time.Since(t0))
	}
}
