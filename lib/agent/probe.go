package agent

import (
	"sync/atomic"
)

// Probe reads a running agent's state from outside (the worker's
// metrics): set Config.Probe, then call Read at any time.
type Probe struct{ a atomic.Pointer[agent] }

// State is what Read returns.
type State struct {
	Started        bool    // Run has made its agent
	Connected      bool    // a session with the controller is up
	PendingReports int     // reports the controller has not acknowledged
	Slots          int     // the host's job slots
	Jobs           int     // jobs the worker watches (running or suspended)
	Tasks          int     // blaunch tasks running on this host
	CPUSeconds     float64 // the jobs' CPU time, from their latest samples
	MemBytes       int64   // the jobs' resident memory, from their latest samples
}

// Read returns the agent's state: a pass over this host's jobs, which
// are few.
func (p *Probe) Read() State {
	a := p.a.Load()
	if a == nil {
		return State{}
	}
	s := State{Started: true, Connected: a.cur.Load() != nil, PendingReports: a.pendingCount(), Slots: a.cfg.Slots}
	w := a.w.Load()
	if w == nil {
		return s
	}
	refs := w.Running()
	s.Jobs = len(refs)
	s.Tasks = w.TaskCount()
	for _, r := range refs {
		if u := w.Usage(r.JobId, r.ArrayIndex); u != nil {
			s.CPUSeconds += float64(u.CpuTimeMs) / 1000
			s.MemBytes += u.MemKb << 10
		}
	}
	return s
}
