package agent

// blaunch's tasks between this host and the others (lib/worker/task.go):
// the worker's TaskRelay sends a task for another host, or its signal, up
// the stream; a task the controller sends here runs on the worker, and
// its output and end go up the stream; the output and end of a task this
// host's blaunch started elsewhere come down and go to the worker.
//
// A task run here for another host's blaunch lives on the connection that
// brought it: its route to the blaunch is the controller's, in memory, and
// ends with the connection (the controller, when it is the one that goes,
// forgets it; when this connection breaks, it tells the blaunch's host the
// task was lost). So when the connection ends, those tasks are killed
// with their sessions, rather than left running with nobody reading them,
// and what they still write is dropped with one log line per job.

import (
	"context"
	"sync"
	"syscall"

	"xce/lib/api/rpc"
	"xce/lib/worker"
)

type taskKey struct {
	job  int64
	idx  int32
	task int32
}

// relayedTasks are the tasks running here for other hosts' blaunches.
type relayedTasks struct {
	mu      sync.Mutex
	running map[taskKey]bool
	lost    map[[2]int64]bool // jobs whose lost output was logged since the last cut-off
}

// startTask runs a task for another host's blaunch.
func (a *agent) startTask(w *worker.Worker, ts *rpc.TaskStart) {
	a.tk.mu.Lock()
	if a.tk.running == nil {
		a.tk.running = map[taskKey]bool{}
	}
	a.tk.running[taskKey{ts.JobId, ts.Index, ts.TaskId}] = true
	a.tk.mu.Unlock()
	w.StartTask(ts, a.taskEvent)
}

// tasksCutOff is a connection's end: the tasks it brought are killed,
// and this host's blaunches stop waiting for their tasks on other hosts
// (the controller kills those as it sees the connection end).
func (a *agent) tasksCutOff(w *worker.Worker) {
	w.RemoteTasksLost("lost contact with the controller, the way to the task's host")
	a.tk.mu.Lock()
	cut := a.tk.running
	a.tk.running = nil
	a.tk.lost = nil
	a.tk.mu.Unlock()
	jobs := map[[2]int64]bool{}
	for k := range cut {
		w.SignalTask(&rpc.TaskSignal{JobId: k.job, Index: k.idx, TaskId: k.task, Signal: int32(syscall.SIGKILL)})
		jobs[[2]int64{k.job, int64(k.idx)}] = true
	}
	for j := range jobs {
		// The output in flight went with the connection: no credit comes.
		w.ResetTaskWindow(j[0], int32(j[1]))
		a.log.Warn("tasks of another host's blaunch killed: the connection to the controller, their only way to it, ended",
			"job", j[0], "index", j[1])
	}
}

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
	if a.emit(m) {
		if x := ev.GetExit(); x != nil {
			a.tk.mu.Lock()
			delete(a.tk.running, taskKey{x.JobId, x.Index, x.TaskId})
			a.tk.mu.Unlock()
		}
		return
	}
	id, idx := ev.GetOutput().GetJobId(), ev.GetOutput().GetIndex()
	if x := ev.GetExit(); x != nil {
		id, idx = x.JobId, x.Index
	}
	if w := a.w.Load(); w != nil && ev.GetOutput() != nil {
		// Dropped: the task may write on (until it is killed).
		w.SignalTask(&rpc.TaskSignal{JobId: id, Index: idx, Credit: int64(len(ev.GetOutput().GetData()))})
	}
	a.tk.mu.Lock()
	if x := ev.GetExit(); x != nil {
		delete(a.tk.running, taskKey{x.JobId, x.Index, x.TaskId})
	}
	j := [2]int64{id, int64(idx)}
	first := !a.tk.lost[j]
	if first {
		if a.tk.lost == nil {
			a.tk.lost = map[[2]int64]bool{}
		}
		a.tk.lost[j] = true
	}
	a.tk.mu.Unlock()
	if first {
		a.log.Warn("task output lost: no connection to the controller (logged once per job)", "job", id, "index", idx)
	}
}
