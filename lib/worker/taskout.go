package worker

// A task's output, from its pipe to its blaunch, is flow-controlled end to
// end, so that nothing between a job and the controller queues without
// bound (a job that stops its own blaunch while its tasks write must not
// make the worker or the controller hold what they write).
//
//   - The worker of the task's host reads the task's stdout and stderr
//     pipes itself, and may have sent at most taskWindow bytes of a job's
//     task output that its blaunches have not taken yet. Past that it
//     stops reading: the task's pipe fills and its writes block.
//   - The worker of blaunch's host gives the bytes back (a TaskSignal with
//     signal 0 and credit, the same way as blaunch's signals) once it has
//     handed them to blaunch's stream, or when it drops them (the blaunch
//     went). A stopped blaunch takes nothing: its stream's window fills
//     and, with it, the window of the job's tasks.
//   - So the queues between (the blaunch's events, the controller's
//     per-worker send queue, the agent's) hold at most a window per job
//     and task host. Each still has a cap of its own (taskQueueCap,
//     the controller's) for a peer that does not play by this: what is
//     over it is dropped, with one log line per job.
//
// The window is the job's on each host, shared by its tasks there: a
// stopped blaunch holds back the other blaunches of the same job whose
// tasks share a host with its own, until it is continued or killed.

import (
	"log/slog"
	"os"
	"sync"
	"time"

	"xce/lib/api/rpc"
)

const (
	// taskWindow is how much of a job's task output a host may have sent
	// that its blaunches have not taken.
	taskWindow = 1 << 20
	// taskQueueCap caps the output a blaunch's event queue holds (a
	// window per task host, unless a peer ignores the windows).
	taskQueueCap = 16 << 20
	// taskDrain is how long a task's pipes are still read, once its
	// process and what it left have been killed, for what is in them
	// (longer while the window is full).
	taskDrain = time.Second
	// taskChunk is the most one read of a task's pipe takes.
	taskChunk = 32 << 10
)

// outWindow is a job's task output in flight from this host.
type outWindow struct {
	mu       sync.Mutex
	cond     *sync.Cond
	inflight int64
}

// window returns the job's output window on this host, made on first use
// (w.tmu held).
func (t *tasks) window(k jobKey) *outWindow {
	if t.windows == nil {
		t.windows = map[jobKey]*outWindow{}
	}
	win := t.windows[k]
	if win == nil {
		win = &outWindow{}
		win.cond = sync.NewCond(&win.mu)
		t.windows[k] = win
	}
	return win
}

// acquire waits until n more bytes may be sent, or the task is killed
// (false: its output is dropped).
func (win *outWindow) acquire(n int, killed func() bool) bool {
	win.mu.Lock()
	defer win.mu.Unlock()
	for win.inflight >= taskWindow && !killed() {
		win.cond.Wait()
	}
	if killed() {
		return false
	}
	win.inflight += int64(n)
	return true
}

// credit gives back n bytes (they were taken or dropped further on).
func (win *outWindow) credit(n int64) {
	win.mu.Lock()
	win.inflight = max(0, win.inflight-n)
	win.mu.Unlock()
	win.cond.Broadcast()
}

// kill marks a task killed: its output is dropped from now on, and a
// read of it waiting on the window stops waiting.
func (rt *task) kill() {
	rt.win.mu.Lock()
	rt.killed = true
	rt.win.mu.Unlock()
	rt.win.cond.Broadcast()
}

// isKilled reports whether the task was killed (rt.win.mu held).
func (rt *task) isKilled() bool { return rt.killed }

// creditTask is flow control for this host's tasks: n bytes of the job's
// output were taken or dropped.
func (w *Worker) creditTask(k jobKey, n int64) {
	w.tmu.Lock()
	win := w.taskTable().windows[k]
	w.tmu.Unlock()
	if win != nil {
		win.credit(n)
	}
}

// ResetTaskWindow forgets the job's output in flight from this host (its
// way to the blaunch was lost with the connection: no credit will come).
func (w *Worker) ResetTaskWindow(id int64, idx int32) {
	w.tmu.Lock()
	win := w.taskTable().windows[jobKey{id, idx}]
	w.tmu.Unlock()
	if win != nil {
		win.credit(taskWindow * 1024)
	}
}

// giveBack returns the credit for output of a task of k on host that
// this host took or dropped.
func (w *Worker) giveBack(k jobKey, task int32, host string, n int) {
	if n <= 0 {
		return
	}
	s := &rpc.TaskSignal{JobId: k.id, Index: k.idx, TaskId: task, Host: host, Credit: int64(n)}
	if host == w.cfg.Host {
		w.SignalTask(s)
		return
	}
	w.tmu.Lock()
	relay := w.relay
	w.tmu.Unlock()
	if relay != nil {
		relay.RelayTaskSignal(s)
	}
}

// copyTaskOutput sends what the task writes on f to its blaunch, a
// window at a time, until f ends or, once the task has ended (drain
// closed), no more comes for taskDrain.
func (w *Worker) copyTaskOutput(f *os.File, rt *task, stderr bool, drain <-chan struct{}) {
	defer f.Close()
	ts := rt.ts
	buf := make([]byte, taskChunk)
	ended := false
	for {
		if !ended {
			select {
			case <-drain:
				ended = true
			default:
			}
		}
		if ended {
			f.SetReadDeadline(time.Now().Add(taskDrain))
		}
		n, err := f.Read(buf)
		if n > 0 && rt.win.acquire(n, rt.isKilled) {
			rt.send(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Output{Output: &rpc.TaskOutput{JobId: ts.JobId, Index: ts.Index,
				TaskId: ts.TaskId, Stderr: stderr, Data: append([]byte(nil), buf[:n]...)}}})
		}
		if err != nil {
			return
		}
	}
}

// queueOutput queues a task's output event for blaunch's stream unless
// the launch went or its queue is full; false: dropped (and logged
// once per launch).
func (l *launch) queueOutput(ev *rpc.TaskEvent, k jobKey) bool {
	n := len(ev.GetOutput().GetData())
	l.mu.Lock()
	if l.gone || l.queued+n > taskQueueCap {
		warn := !l.gone && !l.dropped
		l.dropped = true
		l.mu.Unlock()
		if warn {
			slog.Warn("task output dropped: its blaunch does not take it and a task's host does not wait", "job", k.id,
				"index", k.idx, "queued_bytes", taskQueueCap)
		}
		return false
	}
	l.queued += n
	l.events = append(l.events, ev)
	l.mu.Unlock()
	return true
}
