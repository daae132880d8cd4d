package controller

// blaunch's tasks across hosts (lib/worker/task.go has the rest). The
// worker of the host where blaunch runs sends a task for another host up
// its stream; the controller checks that the job runs, that the sending
// host and the task's host are both among the job's execution hosts, puts
// the job's user (from its stored spec, never from the request) on the
// task, and passes it to the worker of the task's host. The task's output
// and end come back here and go to the sending host's worker (the route),
// and signals go the same way as the task. The embedded worker is called
// directly (localTasks); a remote one gets messages.
//
// Task output is flow-controlled by the workers (lib/worker/taskout.go):
// the credits the blaunch's host gives back travel as task signals. So a
// worker's send queue holds at most a window of output per job and task
// host; past outputCap (a worker that ignores the windows) output for it
// is dropped, with one log line per job, and its credit given back. A
// task the controller has no route for (it restarted, or the blaunch's
// host left) is killed on its host the first time it is heard of: nobody
// can hear it any more.

import (
	"fmt"
	"log/slog"
	"sync"
	"syscall"

	"xce/lib/api"
	"xce/lib/api/rpc"
)

// localTasks is the task API of the embedded worker (*worker.Worker).
type localTasks interface {
	StartTask(ts *rpc.TaskStart, send func(*rpc.TaskEvent))
	SignalTask(*rpc.TaskSignal)
	TaskResult(*rpc.TaskEvent)
}

type taskRef struct {
	job  key
	task int32
}

// taskRoutes: for each task running on another host than its blaunch's,
// the host of its blaunch and its own.
type taskRoutes struct {
	mu     sync.Mutex
	origin map[taskRef]taskRoute
	killed map[taskRef]string // tasks without a route, killed on their host, until their end
}

// outputCap caps the task output queued for one worker.
const outputCap = 64 << 20

type taskRoute struct{ from, host string }

// LocalTaskRelay is the embedded worker's way to the other hosts
// (worker.TaskRelay).
func (c *Controller) LocalTaskRelay() localRelay { return localRelay{c} }

type localRelay struct{ c *Controller }

func (r localRelay) RelayTaskStart(ts *rpc.TaskStart)  { r.c.taskStart(r.c.cfg.Host, ts) }
func (r localRelay) RelayTaskSignal(s *rpc.TaskSignal) { r.c.taskSignal(r.c.cfg.Host, s) }

// taskMessage handles a task message of a remote worker; false when m is
// none.
func (c *Controller) taskMessage(from string, m *rpc.WorkerMessage) bool {
	switch m := m.Msg.(type) {
	case *rpc.WorkerMessage_TaskStart:
		c.taskStart(from, m.TaskStart)
	case *rpc.WorkerMessage_TaskSignal:
		c.taskSignal(from, m.TaskSignal)
	case *rpc.WorkerMessage_TaskOutput:
		c.taskResult(from, &rpc.TaskEvent{Msg: &rpc.TaskEvent_Output{Output: m.TaskOutput}})
	case *rpc.WorkerMessage_TaskExit:
		c.taskResult(from, &rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: m.TaskExit}})
	default:
		return false
	}
	return true
}

// taskJob checks that a job runs and that from and host are among its
// execution hosts.
func (c *Controller) taskJob(id int64, idx int32, from, host string) (*api.Job, error) {
	c.mu.Lock()
	r := c.jobs[key{id, idx}]
	var j *api.Job
	if r != nil {
		j = r.job
	}
	c.mu.Unlock()
	if j == nil {
		return nil, fmt.Errorf("job <%d>: No matching job found", id)
	}
	switch j.State {
	case api.JobState_RUN, api.JobState_USUSP, api.JobState_SSUSP:
	default:
		return nil, fmt.Errorf("job <%d> is not running", id)
	}
	in := func(h string) bool {
		for _, hs := range j.ExecHosts {
			if hs.Host == h {
				return true
			}
		}
		return false
	}
	if !in(from) {
		return nil, fmt.Errorf("host <%s> is not allocated to job <%d>", from, id)
	}
	if !in(host) {
		return nil, fmt.Errorf("host <%s> is not allocated to job <%d>", host, id)
	}
	return j, nil
}

// taskExecutor is the connected worker of a host.
func (c *Controller) taskExecutor(host string) Executor {
	if ex, ok := c.execs.Load(host); ok {
		return ex.(Executor)
	}
	return nil
}

// taskStart passes a task of from's blaunch to its host's worker.
func (c *Controller) taskStart(from string, ts *rpc.TaskStart) {
	fail := func(err error) {
		slog.Warn("task refused", "job", ts.JobId, "index", ts.Index, "task", ts.TaskId, "host", ts.Host, "from", from, "err", err)
		c.deliverTask(from, &rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: &rpc.TaskExit{JobId: ts.JobId, Index: ts.Index,
			TaskId: ts.TaskId, Host: ts.Host, ExitCode: 255, Error: err.Error()}}})
	}
	j, err := c.taskJob(ts.JobId, ts.Index, from, ts.Host)
	if err != nil {
		fail(err)
		return
	}
	spec, _, err := c.store.Spec(ts.JobId)
	if err != nil {
		fail(fmt.Errorf("job <%d>: %w", ts.JobId, err))
		return
	}
	start := &rpc.TaskStart{JobId: ts.JobId, Index: ts.Index, TaskId: ts.TaskId, Host: ts.Host, Argv: ts.Argv, Env: ts.Env,
		Cwd: ts.Cwd, Shell: ts.Shell, User: spec.GetUser(), Uid: spec.GetUid(), Gid: spec.GetGid()}
	start.Containment, start.Cpus = taskContainment(j, ts.Host)
	c.taskContainer(start) // taskcontainer.go
	start.Env = taskBindEnv(start.Env, start.Cpus)
	ex := c.taskExecutor(ts.Host)
	if ex == nil {
		fail(fmt.Errorf("host <%s> is not connected", ts.Host))
		return
	}
	ref := taskRef{key{ts.JobId, ts.Index}, ts.TaskId}
	c.tasks.mu.Lock()
	if c.tasks.origin == nil {
		c.tasks.origin = map[taskRef]taskRoute{}
	}
	c.tasks.origin[ref] = taskRoute{from, ts.Host}
	c.tasks.mu.Unlock()
	switch ex := ex.(type) {
	case *workerConn:
		ex.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_TaskStart{TaskStart: start}})
	case localTasks:
		ex.StartTask(start, func(ev *rpc.TaskEvent) { c.taskResult(ts.Host, ev) })
	default:
		c.tasks.mu.Lock()
		delete(c.tasks.origin, ref)
		c.tasks.mu.Unlock()
		fail(fmt.Errorf("host <%s> cannot run tasks", ts.Host))
	}
}

// taskSignal passes a signal of from's blaunch to the task's host.
func (c *Controller) taskSignal(from string, s *rpc.TaskSignal) {
	if _, err := c.taskJob(s.JobId, s.Index, from, s.Host); err != nil {
		// The job has ended: its tasks are being killed anyway.
		slog.Debug("task signal not passed on", "job", s.JobId, "task", s.TaskId, "host", s.Host, "err", err)
		if s.TaskId != 0 {
			return
		}
	}
	c.sendTaskSignal(s)
}

// sendTaskSignal gives a task signal to the worker of its host.
func (c *Controller) sendTaskSignal(s *rpc.TaskSignal) {
	switch ex := c.taskExecutor(s.Host).(type) {
	case *workerConn:
		ex.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_TaskSignal{TaskSignal: s}})
	case localTasks:
		ex.SignalTask(s)
	}
}

// taskResult passes a task's output or end, from the task's host, to the
// host of its blaunch.
func (c *Controller) taskResult(host string, ev *rpc.TaskEvent) {
	var ref taskRef
	exit := ev.GetExit()
	if o := ev.GetOutput(); o != nil {
		ref = taskRef{key{o.JobId, o.Index}, o.TaskId}
	} else if exit != nil {
		ref = taskRef{key{exit.JobId, exit.Index}, exit.TaskId}
	} else {
		return
	}
	c.tasks.mu.Lock()
	route, ok := c.tasks.origin[ref]
	ok = ok && route.host == host // a host speaks for its own tasks only
	if ok && exit != nil {
		delete(c.tasks.origin, ref)
	}
	kill := false
	if !ok {
		_, known := c.tasks.origin[ref]
		if exit != nil {
			delete(c.tasks.killed, ref)
		} else if _, done := c.tasks.killed[ref]; !done && !known {
			if c.tasks.killed == nil {
				c.tasks.killed = map[taskRef]string{}
			}
			c.tasks.killed[ref] = host
			kill = true
		}
	}
	c.tasks.mu.Unlock()
	switch {
	case ok && c.overCap(route, ev):
	case ok:
		c.deliverTask(route.from, ev)
	case kill:
		slog.Warn("task killed: its blaunch is not known here (the controller or the blaunch's worker restarted)",
			"job", ref.job.id, "index", ref.job.idx, "task", ref.task, "host", host)
		c.sendTaskSignal(&rpc.TaskSignal{JobId: ref.job.id, Index: ref.job.idx, TaskId: ref.task, Host: host,
			Signal: int32(syscall.SIGKILL)})
	}
}

// overCap drops a task's output when the send queue to its blaunch's
// host is over outputCap (logged once per job), and gives its credit
// back to the task's host.
func (c *Controller) overCap(route taskRoute, ev *rpc.TaskEvent) bool {
	o := ev.GetOutput()
	wc, _ := c.taskExecutor(route.from).(*workerConn)
	if o == nil || wc == nil {
		return false
	}
	k := key{o.JobId, o.Index}
	wc.mu.Lock()
	over := wc.outBytes+len(o.Data) > outputCap
	first := over && !wc.dropped[k]
	if first {
		if wc.dropped == nil {
			wc.dropped = map[key]bool{}
		}
		wc.dropped[k] = true
	}
	wc.mu.Unlock()
	if !over {
		return false
	}
	if first {
		slog.Warn("task output dropped: the send queue to the blaunch's host is full", "job", o.JobId, "index", o.Index,
			"host", route.from, "queued_bytes", outputCap)
	}
	c.sendTaskSignal(&rpc.TaskSignal{JobId: o.JobId, Index: o.Index, TaskId: o.TaskId, Host: route.host,
		Credit: int64(len(o.Data))})
	return true
}

// deliverTask gives a task's output or end to the worker of host.
func (c *Controller) deliverTask(host string, ev *rpc.TaskEvent) {
	switch ex := c.taskExecutor(host).(type) {
	case *workerConn:
		m := &rpc.ControllerMessage{}
		if o := ev.GetOutput(); o != nil {
			m.Msg = &rpc.ControllerMessage_TaskOutput{TaskOutput: o}
		} else {
			m.Msg = &rpc.ControllerMessage_TaskExit{TaskExit: ev.GetExit()}
		}
		ex.send(m)
	case localTasks:
		ex.TaskResult(ev)
	}
}

// tasksHostLeft is a worker's connection ending: the tasks it ran for
// other hosts' blaunches end for them (their output is lost with it), and
// the tasks its own blaunches ran elsewhere are killed (nobody hears them
// any more).
func (c *Controller) tasksHostLeft(host string, conn *workerConn) {
	if ex, ok := c.taskExecutor(host).(*workerConn); ok && ex != conn {
		return // a newer connection of the same worker carries on
	}
	type end struct {
		ref   taskRef
		route taskRoute
	}
	var ends []end
	c.tasks.mu.Lock()
	for ref, r := range c.tasks.origin {
		if r.host == host || r.from == host {
			ends = append(ends, end{ref, r})
			delete(c.tasks.origin, ref)
		}
	}
	for ref, h := range c.tasks.killed {
		if h == host {
			delete(c.tasks.killed, ref) // killed with the connection (lib/agent)
		}
	}
	c.tasks.mu.Unlock()
	for _, e := range ends {
		if e.route.host == host {
			c.deliverTask(e.route.from, &rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: &rpc.TaskExit{JobId: e.ref.job.id,
				Index: e.ref.job.idx, TaskId: e.ref.task, Host: host, ExitCode: 255,
				Error: "lost contact with the task's host"}}})
			continue
		}
		c.sendTaskSignal(&rpc.TaskSignal{JobId: e.ref.job.id, Index: e.ref.job.idx, TaskId: e.ref.task,
			Host: e.route.host, Signal: int32(syscall.SIGKILL)})
	}
}
