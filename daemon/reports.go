package main

import (
	"sync"

	"xce/lib/worker"
)

// reporter is what receives the worker's reports: the controller.
type reporter interface {
	Report(worker.Report)
}

// reportGate stands between the worker and the controller while the
// controller is being built. The worker starts first (the controller
// reattaches running jobs through it), and a job that ended while xced
// was down reports at once: until open is called its reports wait here,
// in order, so that nothing reaches a controller that does not exist yet.
type reportGate struct {
	mu     sync.Mutex
	to     reporter
	queued []worker.Report
}

// Report forwards a report, or queues it until open.
func (g *reportGate) Report(r worker.Report) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.to == nil {
		g.queued = append(g.queued, r)
		return
	}
	g.to.Report(r)
}

// open delivers the queued reports, in order, then forwards the next ones.
// The lock is held while delivering so that a report arriving meanwhile
// cannot overtake the queued ones.
func (g *reportGate) open(to reporter) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.queued {
		to.Report(r)
	}
	g.queued = nil
	g.to = to
}
