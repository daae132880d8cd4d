package worker

// A parallel job's tasks (blaunch; LSF's RES task manager).
//
// # The task socket
//
// Each running job has a task socket in its root-owned directory,
// RunDir/ID.IDX/task.sock: the user reaches it by name (the directory is
// 0711) but cannot replace it. Its path is in the job's environment as
// XCE_TASK_SOCKET (api.Launch.task_socket), and the worker accepts a
// connection on it only from the job's uid (SO_PEERCRED); any other is
// closed at once and the refusal logged. On it the Tasks gRPC service
// (lib/api/grpcapi/services.proto) takes one blaunch per stream: a
// TaskLaunch, then signals; it answers with the tasks' ids, their output
// and their ends.
//
// # Where tasks run
//
// The worker of blaunch's host hands out the task ids (LSF_PM_TASKID,
// 1-based, unique per job while that worker runs), checks each host is
// one of the job's (its allocation, as dispatched), starts the tasks of
// its own host itself and hands the others to its TaskRelay: the agent's
// stream to the controller, or the controller itself for the embedded
// worker. The controller checks again and passes them to the worker of
// the task's host (StartTask), whose output and end come back to
// TaskResult here.
//
// A task runs as the job's user (uid, gid and the user's groups, as the
// shepherd is started), in a session of its own, under a subreaper of
// its own (lib/exec's TaskMain, run by the shepherd's binary), with
// blaunch's environment and LSF_PM_TASKID, in blaunch's working directory
// when the user can enter it there, else in the user's home. When the
// task's command ends, what is left under its subreaper and in its
// session is killed (setsid children included); when the job ends (or its
// blaunch goes), its tasks on every host are killed, each with every
// process under its subreaper. A task's output reaches its blaunch a
// window at a time (taskout.go).
//
// # Usage
//
// A task's CPU time and peak memory (its rusage when it ends) are added
// to the job's usage by the worker of blaunch's host: Usage and the
// job's finish event include the ended tasks of the job, local or remote
// (the remote ones' usage comes back in their TaskExit).

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/cgroup"
	jobexec "xce/lib/exec"
)

// TaskRelay carries tasks to the other hosts of a job and their signals;
// the tasks' output and ends come back through Worker.TaskResult.
type TaskRelay interface {
	RelayTaskStart(*rpc.TaskStart)
	RelayTaskSignal(*rpc.TaskSignal)
}

// TaskSocketName is the task socket's name in the job's directory.
const TaskSocketName = "task.sock"

// taskExitLaunch is blaunch's status for a task that could not be
// launched (OpenLava's exit(-1)).
const taskExitLaunch = 255

// taskEndGrace is how long a blaunch may still hear of its tasks' ends
// once its job has ended.
const taskEndGrace = 5 * time.Second

// taskKey names a task of a job.
type taskKey struct {
	job  jobKey
	task int32
}

// tasks is the worker's task table (Worker.tmu guards it).
type tasks struct {
	next    map[jobKey]int32              // last task id handed out
	running map[taskKey]*task             // the tasks running on this host
	waiting map[taskKey]*launch           // tasks of this host's blaunches, wherever they run
	remote  map[jobKey]map[string]bool    // hosts this host's blaunches sent tasks to
	usage   map[jobKey]*api.ResourceUsage // the ended tasks' usage, of this host's blaunches
	servers map[jobKey]*grpc.Server
	windows map[jobKey]*outWindow // the jobs' task output in flight from this host (taskout.go)
	cgroups map[jobKey]cgroup.Job // the cgroups made here for jobs whose shepherd runs elsewhere (contain.go)
}

// TaskCount is how many blaunch tasks run on this host now.
func (w *Worker) TaskCount() int {
	w.tmu.Lock()
	defer w.tmu.Unlock()
	return len(w.tk.running)
}

// task is a task running on this host.
type task struct {
	pid    int // leads its own session
	ts     *rpc.TaskStart
	send   func(*rpc.TaskEvent)
	win    *outWindow
	killed bool // win.mu guards it

	reap   sync.RWMutex // held to signal pid, and to reap it
	reaped bool
}

// SetTaskRelay sets where tasks for other hosts go (the embedded worker's
// relay is the controller, made after the worker).
func (w *Worker) SetTaskRelay(r TaskRelay) {
	w.tmu.Lock()
	w.relay = r
	w.tmu.Unlock()
}

func (w *Worker) taskTable() *tasks {
	if w.tk.running == nil {
		w.tk = tasks{
			next: map[jobKey]int32{}, running: map[taskKey]*task{}, waiting: map[taskKey]*launch{},
			remote: map[jobKey]map[string]bool{}, usage: map[jobKey]*api.ResourceUsage{}, servers: map[jobKey]*grpc.Server{},
		}
	}
	return &w.tk
}

// serveTasks opens the job's task socket and serves blaunch on it, for
// the job's uid only.
func (w *Worker) serveTasks(k jobKey, uid int) error {
	path := filepath.Join(w.JobDir(k.id, k.idx), TaskSocketName)
	os.Remove(path) // a reattached job's, from before the restart
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("task socket: %w", err)
	}
	// In root's own directory, which the user cannot write: the path is
	// root's to change.
	if err := os.Chmod(path, 0o666); err != nil {
		l.Close()
		return fmt.Errorf("task socket: %w", err)
	}
	s := grpc.NewServer()
	grpcapi.RegisterTasksServer(s, &taskServer{w: w, k: k})
	w.tmu.Lock()
	t := w.taskTable()
	if old := t.servers[k]; old != nil {
		old.Stop()
	}
	t.servers[k] = s
	w.tmu.Unlock()
	go s.Serve(peerListener{Listener: l, uid: uid, k: k})
	return nil
}

// peerListener accepts connections of one uid only.
type peerListener struct {
	net.Listener
	uid int
	k   jobKey
}

func (l peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && uid == l.uid {
			return c, nil
		}
		slog.Warn("refused a connection to a job's task socket: not the job's user", "job", l.k.id, "index", l.k.idx,
			"peer_uid", uid, "job_uid", l.uid, "err", err)
		c.Close()
	}
}

func peerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, errors.New("not a Unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if serr != nil {
		return -1, serr
	}
	return int(cred.Uid), nil
}

// endTasks is the job's end on this host: its task socket closes, its
// tasks here are killed, and so are those its blaunches started on other
// hosts. It returns the ended tasks' usage of this host's blaunches.
func (w *Worker) endTasks(k jobKey) *api.ResourceUsage {
	w.tmu.Lock()
	t := w.taskTable()
	s := t.servers[k]
	delete(t.servers, k)
	hosts := slices.Sorted(mapKeys(t.remote[k]))
	delete(t.remote, k)
	u := t.usage[k]
	delete(t.usage, k)
	delete(t.next, k)
	relay := w.relay
	w.tmu.Unlock()
	w.SignalTask(&rpc.TaskSignal{JobId: k.id, Index: k.idx, Signal: int32(syscall.SIGKILL)})
	for _, h := range hosts {
		if relay != nil {
			relay.RelayTaskSignal(&rpc.TaskSignal{JobId: k.id, Index: k.idx, Host: h, Signal: int32(syscall.SIGKILL)})
		}
	}
	if s != nil {
		// No new blaunch (the socket's name goes at once; the server
		// stops in the background); those running hear their tasks' ends
		// first.
		os.Remove(filepath.Join(w.JobDir(k.id, k.idx), TaskSocketName))
		go func() {
			t := time.AfterFunc(taskEndGrace, s.Stop)
			s.GracefulStop()
			t.Stop()
		}()
	}
	return u
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// taskUsage is the ended tasks' usage of the job's blaunches here.
func (w *Worker) taskUsage(k jobKey) *api.ResourceUsage {
	w.tmu.Lock()
	defer w.tmu.Unlock()
	if u := w.taskTable().usage[k]; u != nil {
		return &api.ResourceUsage{CpuTimeMs: u.CpuTimeMs, MaxMemKb: u.MaxMemKb}
	}
	return nil
}

// addUsage adds the usage of ended tasks to a job's.
func addUsage(to *api.ResourceUsage, tasks *api.ResourceUsage) *api.ResourceUsage {
	if tasks == nil {
		return to
	}
	if to == nil {
		to = &api.ResourceUsage{}
	}
	to.CpuTimeMs += tasks.CpuTimeMs
	to.MaxMemKb = max(to.MaxMemKb, tasks.MaxMemKb)
	return to
}

// taskServer is the Tasks service of one job's socket.
type taskServer struct {
	grpcapi.UnimplementedTasksServer
	w *Worker
	k jobKey
}

// launch is one blaunch: its tasks' events are queued for its stream.
type launch struct {
	mu      sync.Mutex
	events  []*rpc.TaskEvent
	queued  int // bytes of output in events
	gone    bool
	dropped bool // output was dropped (and logged)
	wake    chan struct{}
	left    map[int32]string // the tasks not ended yet, and their hosts
}

// push queues a task's event for blaunch; an output the launch does not
// take is given back to its host at once.
func (w *Worker) push(l *launch, k jobKey, ev *rpc.TaskEvent) {
	if o := ev.GetOutput(); o != nil {
		if !l.queueOutput(ev, k) {
			w.giveBack(k, o.TaskId, l.host(o.TaskId), len(o.Data))
			return
		}
	} else {
		l.mu.Lock()
		l.events = append(l.events, ev)
		l.mu.Unlock()
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *launch) take() []*rpc.TaskEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs := l.events
	l.events = nil
	l.queued = 0
	return evs
}

// host is the host of task id of the launch.
func (l *launch) host(id int32) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.left[id]
}

// Launch runs one blaunch.
func (s *taskServer) Launch(stream grpcapi.Tasks_LaunchServer) error {
	w, k := s.w, s.k
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	req := first.GetLaunch()
	if req == nil || len(req.Argv) == 0 {
		return status.Error(codes.InvalidArgument, "no command to launch")
	}
	w.mu.Lock()
	p := w.jobs[k]
	w.mu.Unlock()
	if p == nil {
		return status.Errorf(codes.FailedPrecondition, "job <%d> is not running on this host", k.id)
	}
	var hosts []string
	var drv *driverUser
	var starter string
	if req.DriverStarter {
		// The job's exec_driver starter, here only (driver.go).
		if drv, starter, err = w.driverStarter(k); err != nil {
			return status.Error(codes.PermissionDenied, err.Error())
		}
		hosts = []string{w.cfg.Host}
	} else {
		if hosts, err = taskHosts(req.Hosts, p.hosts, k.id); err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
	}
	l := &launch{wake: make(chan struct{}, 1), left: map[int32]string{}}
	w.tmu.Lock()
	t := w.taskTable()
	relay := w.relay
	starts := make([]*rpc.TaskStart, len(hosts))
	reply := &rpc.TaskLaunched{}
	for i, h := range hosts {
		t.next[k]++
		id := t.next[k]
		starts[i] = &rpc.TaskStart{JobId: k.id, Index: k.idx, TaskId: id, Host: h, Argv: req.Argv, Env: req.Env,
			Cwd: req.Cwd, Shell: req.Shell, User: p.user, Uid: uint32(p.uid), Gid: uint32(p.gid)}
		if drv != nil {
			driverTaskStart(starts[i], drv, starter)
		}
		t.waiting[taskKey{k, id}] = l
		l.left[id] = h
		if h != w.cfg.Host {
			if t.remote[k] == nil {
				t.remote[k] = map[string]bool{}
			}
			t.remote[k][h] = true
		}
		reply.TaskIds = append(reply.TaskIds, id)
		reply.Hosts = append(reply.Hosts, h)
	}
	w.tmu.Unlock()
	if err := stream.Send(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Launched{Launched: reply}}); err != nil {
		s.abandon(l, nil)
		return err
	}
	for _, ts := range starts {
		switch {
		case ts.Host == w.cfg.Host:
			w.StartTask(ts, w.TaskResult)
		case relay == nil:
			w.TaskResult(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: &rpc.TaskExit{JobId: k.id, Index: k.idx, TaskId: ts.TaskId,
				Host: ts.Host, ExitCode: taskExitLaunch, Error: "no way to the other hosts from this worker"}}})
		default:
			// The controller's word on the user, not this worker's.
			relay.RelayTaskStart(&rpc.TaskStart{JobId: ts.JobId, Index: ts.Index, TaskId: ts.TaskId, Host: ts.Host,
				Argv: ts.Argv, Env: ts.Env, Cwd: ts.Cwd, Shell: ts.Shell})
		}
	}
	// blaunch's signals, to all its tasks; its going kills them.
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			if sig := m.GetSignal(); sig > 0 {
				s.signal(l, syscall.Signal(sig))
			}
		}
	}()
	for {
		evs := l.take()
		for i, ev := range evs {
			if err := stream.Send(ev); err != nil {
				s.abandon(l, evs[i:])
				return err
			}
			if o := ev.GetOutput(); o != nil {
				// blaunch has it: the task's host may send more.
				w.giveBack(k, o.TaskId, l.host(o.TaskId), len(o.Data))
			}
			if x := ev.GetExit(); x != nil {
				l.mu.Lock()
				delete(l.left, x.TaskId)
				l.mu.Unlock()
			}
		}
		l.mu.Lock()
		done := len(l.left) == 0 && len(l.events) == 0
		l.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-l.wake:
		case <-gone:
			s.abandon(l, nil)
			return status.Error(codes.Canceled, "blaunch went")
		case <-stream.Context().Done():
			s.abandon(l, nil)
			return stream.Context().Err()
		}
	}
}

// signal sends sig to the tasks of l that have not ended.
func (s *taskServer) signal(l *launch, sig syscall.Signal) {
	w, k := s.w, s.k
	l.mu.Lock()
	left := make(map[int32]string, len(l.left))
	for id, h := range l.left {
		left[id] = h
	}
	l.mu.Unlock()
	w.tmu.Lock()
	relay := w.relay
	w.tmu.Unlock()
	for id, h := range left {
		ts := &rpc.TaskSignal{JobId: k.id, Index: k.idx, TaskId: id, Signal: int32(sig), Host: h}
		if h == w.cfg.Host {
			w.SignalTask(ts)
		} else if relay != nil {
			relay.RelayTaskSignal(ts)
		}
	}
}

// abandon kills the tasks of a blaunch that went; their output not sent
// (unsent, and what is queued) is given back to their hosts.
func (s *taskServer) abandon(l *launch, unsent []*rpc.TaskEvent) {
	s.signal(l, syscall.SIGKILL)
	l.mu.Lock()
	l.gone = true
	l.mu.Unlock()
	for _, ev := range append(unsent, l.take()...) {
		if o := ev.GetOutput(); o != nil {
			s.w.giveBack(s.k, o.TaskId, l.host(o.TaskId), len(o.Data))
		}
	}
}

// taskHosts is where a launch's tasks run: the hosts asked for, each of
// which must be one of the job's, or one per slot of the job.
func taskHosts(asked []string, alloc []*api.HostSlots, id int64) ([]string, error) {
	if len(asked) == 0 {
		var hosts []string
		for _, h := range alloc {
			for range max(h.GetSlots(), 1) {
				hosts = append(hosts, h.GetHost())
			}
		}
		return hosts, nil
	}
	for _, h := range asked {
		if !slices.ContainsFunc(alloc, func(a *api.HostSlots) bool { return a.GetHost() == h }) {
			return nil, fmt.Errorf("host <%s> is not allocated to job <%d>", h, id)
		}
	}
	return asked, nil
}

// TaskResult takes an event of a task of one of this host's blaunches
// (from the task's host, or from this one): it goes to that blaunch, and
// an end's usage is added to the job's.
func (w *Worker) TaskResult(ev *rpc.TaskEvent) {
	var id int64
	var idx, task int32
	var usage *api.ResourceUsage
	exit := ev.GetExit()
	switch {
	case ev.GetOutput() != nil:
		o := ev.GetOutput()
		id, idx, task = o.JobId, o.Index, o.TaskId
	case exit != nil:
		id, idx, task, usage = exit.JobId, exit.Index, exit.TaskId, exit.Usage
	default:
		return
	}
	tk := taskKey{jobKey{id, idx}, task}
	w.tmu.Lock()
	t := w.taskTable()
	l := t.waiting[tk]
	if exit != nil {
		delete(t.waiting, tk)
		if usage != nil {
			t.usage[tk.job] = addUsage(t.usage[tk.job], usage)
		}
	}
	w.tmu.Unlock()
	if l != nil {
		w.push(l, tk.job, ev)
	}
}

// StartTask runs a task on this host, as ts's user; its output and end go
// to send (which must not block for long).
func (w *Worker) StartTask(ts *rpc.TaskStart, send func(*rpc.TaskEvent)) {
	tk := taskKey{jobKey{ts.JobId, ts.Index}, ts.TaskId}
	fail := func(err error) {
		slog.Warn("task not started", "job", ts.JobId, "index", ts.Index, "task", ts.TaskId, "err", err)
		send(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: &rpc.TaskExit{JobId: ts.JobId, Index: ts.Index, TaskId: ts.TaskId,
			Host: w.cfg.Host, ExitCode: taskExitLaunch, Error: err.Error()}}})
	}
	argv, err := taskArgv(ts)
	if err != nil {
		fail(err)
		return
	}
	var hc *hostContainer
	if !ts.DriverStarter {
		if argv, hc, err = w.containerTaskArgv(ts, argv); err != nil { // containertask.go
			fail(err)
			return
		}
	}
	// The worker reads the task's pipes itself, a window at a time
	// (taskout.go): a task whose blaunch takes nothing blocks on them.
	var pipes [4]*os.File // stdout's read and write ends, stderr's
	for i := 0; i < 4; i += 2 {
		if pipes[i], pipes[i+1], err = os.Pipe(); err != nil {
			for _, f := range pipes[:i] {
				f.Close()
			}
			fail(fmt.Errorf("output pipe: %w", err))
			return
		}
	}
	cg, local := w.taskCgroup(ts)
	var gate *os.File
	cmd, err := w.startTaskCmd(ts, argv, pipes[1], pipes[3], cg != nil, &gate)
	pipes[1].Close()
	pipes[3].Close()
	if err != nil {
		pipes[0].Close()
		pipes[2].Close()
		fail(err)
		return
	}
	if gate != nil {
		// Into the job's cgroup before the task's command runs.
		if err := cg.Add(cmd.Process.Pid); err != nil {
			slog.Warn("the task runs outside its job's cgroup", "job", ts.JobId, "index", ts.Index, "task", ts.TaskId, "err", err)
			local = false
		}
		gate.Write([]byte{jobexec.GoByte})
		gate.Close()
	}
	w.tmu.Lock()
	t := w.taskTable()
	rt := &task{pid: cmd.Process.Pid, ts: ts, send: send, win: t.window(tk.job)}
	t.running[tk] = rt
	w.tmu.Unlock()
	drain := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); w.copyTaskOutput(pipes[0], rt, false, drain) }()
	go func() { defer readers.Done(); w.copyTaskOutput(pipes[2], rt, true, drain) }()
	go func() {
		jobexec.WaitExited(rt.pid)
		// What the task left behind in its session goes with it, while
		// its pid is still the worker's (not reaped); no signal to it is
		// under way meanwhile (rt.reap).
		rt.reap.Lock()
		killSession(rt.pid, syscall.SIGKILL)
		err := cmd.Wait()
		rt.reaped = true
		rt.reap.Unlock()
		w.endHostContainer(hc, ts) // containerhost.go
		w.tmu.Lock()
		delete(w.taskTable().running, tk)
		w.tmu.Unlock()
		// The last task here of a job whose shepherd runs elsewhere
		// takes the cgroup made for them with it.
		w.endIdleTaskCgroup(tk.job)
		// What it wrote before is sent before its end.
		close(drain)
		readers.Wait()
		x := &rpc.TaskExit{JobId: ts.JobId, Index: ts.Index, TaskId: ts.TaskId, Host: w.cfg.Host}
		if st := cmd.ProcessState; st != nil {
			x.ExitCode = int32(st.ExitCode())
			if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				x.Signal = int32(ws.Signal())
				x.ExitCode = 128 + x.Signal
			}
			if ru, ok := st.SysUsage().(*syscall.Rusage); ok && !local {
				// (A task in the cgroup of a job that runs here is
				// measured with the job.)
				x.Usage = &api.ResourceUsage{
					CpuTimeMs: (ru.Utime.Sec+ru.Stime.Sec)*1000 + int64(ru.Utime.Usec+ru.Stime.Usec)/1000,
					MaxMemKb:  ru.Maxrss,
				}
			}
		} else if err != nil {
			x.ExitCode, x.Error = taskExitLaunch, err.Error()
		}
		send(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: x}})
	}()
}

// startTaskCmd starts the task's process as its user: in the working
// directory asked for, else (the user cannot enter it here) in the
// user's home, else in /.
func (w *Worker) startTaskCmd(ts *rpc.TaskStart, argv []string, stdout, stderr *os.File, gated bool, gate **os.File) (*exec.Cmd, error) {
	uid, gid := int(ts.Uid), int(ts.Gid)
	var cred *syscall.Credential
	if os.Geteuid() == 0 && uid != 0 {
		groups, err := supplementaryGroups(ts.User)
		if err != nil {
			slog.Warn("supplementary groups", "user", ts.User, "err", err)
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}
	} else if os.Geteuid() != 0 && uid != os.Geteuid() {
		return nil, fmt.Errorf("this worker runs as uid %d and cannot run tasks as uid %d", os.Geteuid(), uid)
	}
	env := taskEnv(ts)
	if len(w.cfg.Shepherd) > 0 {
		// Under the task's own subreaper (jobexec.TaskMain), as a job is
		// under its shepherd: what the task starts stays the task's, even
		// outside its session.
		env = append(env, jobexec.TaskArgv(argv))
		argv = []string{w.cfg.Shepherd[0], jobexec.TaskArg}
		if gated {
			env = append(env, jobexec.TaskGateEnv+"=1")
		}
	} else {
		gated = false
	}
	var err error
	for _, dir := range []string{ts.Cwd, taskHome(ts, env), "/"} {
		if dir == "" {
			continue
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: cred}
		var gr, gw *os.File
		if gated {
			if gr, gw, err = os.Pipe(); err != nil {
				return nil, fmt.Errorf("task gate: %w", err)
			}
			cmd.ExtraFiles = []*os.File{gr}
		}
		err = cmd.Start()
		if gr != nil {
			gr.Close()
		}
		if err == nil {
			*gate = gw
			return cmd, nil
		}
		if gw != nil {
			gw.Close()
		}
		// The child's chdir failing reads as "fork/exec": try the next
		// directory on the errors chdir gives.
		if !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.EACCES) && !errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("start task: %w", err)
		}
	}
	return nil, fmt.Errorf("start task: %w", err)
}

// taskHome is the task's user's home: HOME in the environment blaunch
// sent, else the user's entry.
func taskHome(ts *rpc.TaskStart, env []string) string {
	if ts.User != "" {
		if u, err := user.Lookup(ts.User); err == nil && u.HomeDir != "" {
			return u.HomeDir
		}
	}
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			return h
		}
	}
	return ""
}

// taskEnv is blaunch's environment with the task's id.
func taskEnv(ts *rpc.TaskStart) []string {
	env := make([]string, 0, len(ts.Env)+1)
	for _, kv := range ts.Env {
		if !strings.HasPrefix(kv, "LSF_PM_TASKID=") && !strings.HasPrefix(kv, jobexec.TaskArgvEnv+"=") {
			env = append(env, kv)
		}
	}
	return append(env, "LSF_PM_TASKID="+strconv.Itoa(int(ts.TaskId)))
}

// taskArgv is the task's command line: its words joined with spaces, as
// rsh and ssh join them, run by /bin/sh -c or the login shell (MPI
// launchers quote for that: hydra passes "\"/path/proxy\"" as a word),
// or argv as it is (-no-shell).
func taskArgv(ts *rpc.TaskStart) ([]string, error) {
	if len(ts.Argv) == 0 {
		return nil, errors.New("no command")
	}
	line := strings.Join(ts.Argv, " ")
	switch ts.Shell {
	case rpc.TaskShell_TASK_SHELL_NONE:
		// env finds the command on the task's PATH, as the task's user:
		// root looks at no path the user names.
		return append([]string{"/usr/bin/env", "--"}, ts.Argv...), nil
	case rpc.TaskShell_TASK_SHELL_LOGIN:
		shell := "/bin/sh"
		for _, kv := range ts.Env {
			if s, ok := strings.CutPrefix(kv, "SHELL="); ok && filepath.IsAbs(s) {
				shell = s
			}
		}
		return []string{shell, "-l", "-c", line}, nil
	}
	return []string{"/bin/sh", "-c", line}, nil
}

// SignalTask signals a task running here (task_id > 0: its process
// group), or kills every task of the job here (task_id 0: their sessions).
func (w *Worker) SignalTask(s *rpc.TaskSignal) {
	k := jobKey{s.JobId, s.Index}
	if s.Signal == 0 {
		if s.Credit > 0 {
			w.creditTask(k, s.Credit)
		}
		return
	}
	sig := syscall.Signal(s.Signal)
	w.tmu.Lock()
	var hit []*task
	for tk, t := range w.taskTable().running {
		if tk.job == k && (s.TaskId == 0 || tk.task == s.TaskId) {
			hit = append(hit, t)
		}
	}
	if s.TaskId == 0 && sig == syscall.SIGKILL {
		delete(w.taskTable().windows, k) // the job's end here
	}
	w.tmu.Unlock()
	for _, t := range hit {
		if sig == syscall.SIGKILL {
			t.kill()
		}
		w.signalTask(t, s.TaskId == 0, sig)
	}
	if s.TaskId == 0 && sig == syscall.SIGKILL {
		w.endTaskCgroup(k)
	}
}

// signalTask signals a task's process group (all: its session), unless
// its process has been reaped: until then its pid, leading the session it
// made, is the worker's own child.
func (w *Worker) signalTask(t *task, all bool, sig syscall.Signal) {
	t.reap.RLock()
	defer t.reap.RUnlock()
	if t.reaped {
		return
	}
	if all {
		killSession(t.pid, sig)
		return
	}
	if sig == syscall.SIGKILL {
		jobexec.KillDescendants(t.pid) // those outside its group too
	}
	if err := syscall.Kill(-t.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		slog.Warn("signal task", "job", t.ts.JobId, "task", t.ts.TaskId, "signal", int(sig), "err", err)
	}
}

// killSession sends sig to every process of session sid: a session the
// worker's child made, whose id no other process can take while one of
// its members lives. SIGKILL goes first to every descendant of the
// session's leader, in the session or not (the leader, the task's
// subreaper, has them all while it lives).
func killSession(sid int, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		jobexec.KillDescendants(sid)
	}
	syscall.Kill(-sid, sig)
	pids, _ := jobexec.Pids()
	for _, pid := range pids {
		if ids, err := jobexec.ReadProcIDs(pid); err == nil && ids.Session == sid {
			syscall.Kill(pid, sig)
		}
	}
}

// RemoteTasksLost is the end of this host's link to the controller, the
// only way to the tasks its blaunches started on other hosts: each such
// task ends for its blaunch now (exit 255, with why), rather than
// leaving blaunch to wait for an end that cannot come. The controller
// kills the tasks on their hosts when it sees the link end; and a task
// whose end does come later, on a new link, is no longer waited for.
func (w *Worker) RemoteTasksLost(why string) {
	w.tmu.Lock()
	t := w.taskTable()
	lost := map[taskKey]string{}
	for tk, l := range t.waiting {
		l.mu.Lock()
		h := l.left[tk.task]
		l.mu.Unlock()
		if h != "" && h != w.cfg.Host {
			lost[tk] = h
		}
	}
	w.tmu.Unlock()
	for tk, h := range lost {
		w.TaskResult(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: &rpc.TaskExit{JobId: tk.job.id, Index: tk.job.idx,
			TaskId: tk.task, Host: h, ExitCode: taskExitLaunch, Error: why}}})
	}
	if len(lost) > 0 {
		slog.Warn("blaunch tasks on other hosts ended for their blaunch: the link to the controller ended", "tasks", len(lost))
	}
}
