package worker

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"xce/lib/api"
	"xce/lib/cgroup"
	jobexec "xce/lib/exec"
)

// A shepherd that has recorded its job's end can take its user's next job
// on this host (lib/exec/reuse.go): a process start is about two thirds
// of a short job's CPU. The worker keeps such a shepherd idle for a short
// while, out of every job's cgroup, and hands it the next job of the same
// uid, gid and groups that will have a cgroup of its own. Only such a
// job's shepherd is kept: its cgroup is where whatever the job left
// behind is killed, after the shepherd has been moved out of it and before
// the shepherd can be handed anything else. A job with a container, an
// exec_driver or an interactive terminal gets a shepherd of its own, as
// does every job on a host without cgroups.
//
// The guarantees of one shepherd per job hold for each job a shepherd
// runs: the job starts only on the worker's go (the handover is the go),
// its end is the shepherd's record, and a worker restart closes every
// socket, so an idle shepherd exits and a busy one exits after its job.

const (
	// shepherdIdle is how long an idle shepherd waits for a job.
	shepherdIdle = 10 * time.Second
	// maxIdleShepherds bounds the idle shepherds a worker keeps.
	maxIdleShepherds = 16
	// idleCgroupPrefix names the cgroup in xce/<cluster> where idle
	// shepherds wait, followed by the worker's host: workers that share a
	// machine (hosts a provider runs side by side) keep theirs apart.
	idleCgroupPrefix = "shepherds."
)

// shepherdProc is a shepherd process the worker started, and the worker's
// end of its socket.
type shepherdProc struct {
	cmd    *exec.Cmd
	pid    int
	sock   *os.File
	said   *bufio.Reader // what the shepherd writes on sock, a line at a time
	waited chan struct{} // closed once the process is reaped
	cred   credKey
	timer  *time.Timer // while idle: when it is let go
}

// credKey is who a shepherd runs as.
type credKey struct {
	uid, gid int
	groups   string
}

func newCredKey(uid, gid int, groups []uint32) credKey {
	g := slices.Clone(groups)
	slices.Sort(g)
	return credKey{uid: uid, gid: gid, groups: fmt.Sprint(g)}
}

// idleShepherds are the shepherds waiting for a job.
type idleShepherds struct {
	mu     sync.Mutex
	byCred map[credKey][]*shepherdProc
	cg     cgroup.Job // where they wait; made at the first need
	closed bool
}

// startShepherd starts cmd, whose descriptor 3 is ready, the other end of
// sock.
func startShepherd(cmd *exec.Cmd, sock *os.File, cred credKey) (*shepherdProc, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &shepherdProc{cmd: cmd, pid: cmd.Process.Pid, sock: sock, said: bufio.NewReaderSize(sock, 64),
		waited: make(chan struct{}), cred: cred}
	go func() {
		cmd.Wait()
		close(s.waited)
		// The socket's other end may live on in a process the user
		// gave it to: stop waiting for it soon after the shepherd.
		sock.SetReadDeadline(time.Now().Add(time.Second))
	}()
	return s, nil
}

// read returns the shepherd's next line: a job's pid, or IdleWord. An
// error: the socket closed (the shepherd went) or said something else.
func (s *shepherdProc) read() (string, error) {
	b, err := s.said.ReadSlice('\n')
	if err != nil {
		if len(b) > 0 {
			slog.Warn("the shepherd's socket said something that is no line", "said", fmt.Sprintf("%q", b))
		}
		return "", err
	}
	return string(b[:len(b)-1]), nil
}

// how says how the shepherd's process ended, once it has.
func (s *shepherdProc) how() string {
	<-s.waited
	ps := s.cmd.ProcessState
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "was killed by signal " + strconv.Itoa(int(ws.Signal()))
	}
	return "ended with exit code " + strconv.Itoa(ps.ExitCode())
}

// alive reports whether the process has not been reaped.
func (s *shepherdProc) alive() bool {
	select {
	case <-s.waited:
		return false
	default:
		return true
	}
}

// letGo closes the worker's end: the shepherd exits once it is idle.
func (s *shepherdProc) letGo() { s.sock.Close() }

// mayReuse reports whether a job's shepherd may be one that ran another
// job, and be kept for the next: see the comment at the top.
func (w *Worker) mayReuse(job *api.Job, relayed bool, c *api.Containment) bool {
	return !w.cfg.NoShepherdReuse && w.cg != nil && c.GetProcessTracking() && !relayed &&
		jobContainer(job) == "" && jobDriver(job) == nil
}

// takeIdle returns an idle shepherd of cred, nil when there is none.
func (w *Worker) takeIdle(cred credKey) *shepherdProc {
	w.idle.mu.Lock()
	defer w.idle.mu.Unlock()
	for {
		list := w.idle.byCred[cred]
		if len(list) == 0 {
			return nil
		}
		s := list[len(list)-1]
		w.idle.byCred[cred] = list[:len(list)-1]
		if s.timer.Stop() && s.alive() {
			return s
		}
		s.letGo()
	}
}

// keepIdle moves a shepherd that said it is idle out of its last job's
// cgroup, so that what the job left can be killed there; false when it
// cannot be kept (let go, then: it exits).
func (w *Worker) keepIdle(s *shepherdProc) bool {
	cg := w.idleCgroup()
	if cg == nil {
		return false
	}
	// Outside the lock: a write of cgroup.procs per hierarchy.
	if err := cg.Add(s.pid); err != nil {
		slog.Warn("a shepherd could not be moved out of its job's cgroup", "pid", s.pid, "err", err)
		return false
	}
	return true
}

// idleCgroup is where idle shepherds wait, made at the first need; nil
// when no more may wait (the worker closed, or keeps its most).
func (w *Worker) idleCgroup() cgroup.Job {
	w.idle.mu.Lock()
	defer w.idle.mu.Unlock()
	n := 0
	for _, list := range w.idle.byCred {
		n += len(list)
	}
	if w.idle.closed || n >= maxIdleShepherds {
		return nil
	}
	if w.idle.cg == nil {
		// In every hierarchy: a job's cgroup in one the idle cgroup
		// were not in would keep the shepherd, and could not be removed.
		name := idleCgroupPrefix + strings.ReplaceAll(w.cfg.Host, "/", "_")
		cg, err := w.cg.CreateNamed(name, cgroup.Limits{Everywhere: true})
		if err != nil {
			slog.Warn("no cgroup for idle shepherds: each job gets a shepherd of its own", "err", err)
			return nil
		}
		w.idle.cg = cg
	}
	return w.idle.cg
}

// putIdle offers a kept shepherd (keepIdle) for the next job of its user.
func (w *Worker) putIdle(s *shepherdProc) {
	w.idle.mu.Lock()
	defer w.idle.mu.Unlock()
	if w.idle.closed {
		s.letGo()
		return
	}
	if w.idle.byCred == nil {
		w.idle.byCred = map[credKey][]*shepherdProc{}
	}
	w.idle.byCred[s.cred] = append(w.idle.byCred[s.cred], s)
	s.timer = time.AfterFunc(shepherdIdle, func() {
		w.idle.mu.Lock()
		list := w.idle.byCred[s.cred]
		if i := slices.Index(list, s); i >= 0 {
			w.idle.byCred[s.cred] = slices.Delete(list, i, i+1)
		}
		w.idle.mu.Unlock()
		s.letGo()
	})
}

// closeIdle lets every idle shepherd go, waits for them to exit, and
// removes their cgroup.
func (w *Worker) closeIdle() {
	w.idle.mu.Lock()
	w.idle.closed = true
	var all []*shepherdProc
	for _, list := range w.idle.byCred {
		all = append(all, list...)
	}
	w.idle.byCred = nil
	cg := w.idle.cg
	w.idle.mu.Unlock()
	for _, s := range all {
		s.timer.Stop()
		s.letGo()
	}
	for _, s := range all {
		select {
		case <-s.waited:
		case <-time.After(5 * time.Second):
		}
	}
	if cg != nil {
		if err := cg.Remove(); err != nil {
			slog.Warn("the idle shepherds' cgroup was not removed", "cgroup", cg.Path(), "err", err)
		}
	}
}

// handOver gives an idle shepherd its job: the launch, log and records
// of files, with the go.
func (s *shepherdProc) handOver(goByte byte, launchFile string, files *jobFiles) error {
	if !s.alive() {
		return errors.New("the idle shepherd has gone")
	}
	return jobexec.SendJob(s.sock, goByte, launchFile, files.launch, files.log, files.result, files.usage)
}
