package agent

// blaunch's tasks between this host and the others (lib/worker/task.go):
// the worker's TaskRelay sends a task for another host, or its signal, up
// the stream; a task the controller sends here runs on the worker, and
// its output and end go up the stream; the output and end of a task this
// host's blaunch started elsewhere come down and go to the worker.

import (
	"context"

	"xce/lib/api/rpc"
)

// sessionOut is the current connection's way up.
type sessionOut struct {
	ctx context.Context
	out chan<- *rpc.WorkerMessage
}

// emit sends m on the current connection; false when there is none.
func (a *agent) emit(m *rpc.WorkerMessage) bool {
	s := a.cur.Load()
	if s == nil {
		return false
	}
	select {
	case s.out <- m:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// RelayTaskStart is the worker's TaskRelay: a task for another host.
func (a *agent) RelayTaskStart(ts *rpc.TaskStart) {
	if a.emit(&rpc.WorkerMessage{Msg: &rpc.WorkerMessage_TaskStart{TaskStart: ts}}) {
		return
	}
	if w := a.w.Load(); w != nil {
		w.TaskResult(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: &rpc.TaskExit{JobId: ts.JobId, Index: ts.Index,
			TaskId: ts.TaskId, Host: ts.Host, ExitCode: 255, Error: "the controller is not reachable from this host"}}})
	}
}

// RelayTaskSignal is the worker's TaskRelay: a signal for a task on
// another host.
func (a *agent) RelayTaskSignal(s *rpc.TaskSignal) {
	if !a.emit(&rpc.WorkerMessage{Msg: &rpc.WorkerMessage_TaskSignal{TaskSignal: s}}) {
		a.log.Warn("task signal not sent: no connection", "job", s.JobId, "task", s.TaskId, "host", s.Host)
	}
}

// taskEvent sends the output or end of a task running here up.
func (a *agent) taskEvent(ev *rpc.TaskEvent) {
	var m *rpc.WorkerMessage
	switch {
	case ev.GetOutput() != nil:
		m = &rpc.WorkerMessage{Msg: &rpc.WorkerMessage_TaskOutput{TaskOutput: ev.GetOutput()}}
	case ev.GetExit() != nil:
		m = &rpc.WorkerMessage{Msg: &rpc.WorkerMessage_TaskExit{TaskExit: ev.GetExit()}}
	default:
		return
	}
	if !a.emit(m) {
		a.log.Warn("task output or end lost: no connection", "job", ev.GetExit().GetJobId(), "task", ev.GetExit().GetTaskId())
	}
}
