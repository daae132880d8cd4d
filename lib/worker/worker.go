// Package worker owns a host's side of running jobs: it starts one shepherd
// process per job (lib/exec, run as `xced shepherd LAUNCHFILE`), reports
// when the job started and how it ended, delivers signals to the job's
// process group, and finds its jobs again after the controller restarts.
//
// The shepherd talks to the worker only through files in the job's run
// directory (launch, start, status, usage), never through pipes, so a job
// and its shepherd survive a `kill -9` of xced: after a restart Reattach
// watches the shepherd until it writes the job's status file, and the real
// exit status is recorded. A job whose shepherd is gone without a status
// file ends as EXIT with TERM_ORPHAN.
//
// In the single-host default the worker is embedded in xced and the
// controller calls it directly.
package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	jobexec "xce/lib/exec"
)

// Report is what the worker tells the controller about a job: that it
// started (Started set), that it ended (Finished set), or that it could not
// be started (Err set).
type Report struct {
	JobID    int64
	Index    int32
	Started  *api.Event
	Finished *api.Event
	Err      error
}

// Config describes the worker's host and where it keeps job files.
type Config struct {
	Host        string
	ClusterName string
	RunDir      string        // per-job directories live here
	Shepherd    []string      // command that runs a shepherd; LAUNCHFILE is appended
	KillGrace   time.Duration // run limit: SIGUSR2, then SIGKILL this much later
	// TerminateInterval separates the signals of bkill's default sequence
	// (JOB_TERMINATE_INTERVAL).
	TerminateInterval time.Duration
	Report            func(Report)
}

// Worker runs the jobs of one host.
type Worker struct {
	cfg Config

	mu   sync.Mutex
	jobs map[jobKey]*proc
	// Terminations asked for before the job's shepherd existed: the
	// controller records a dispatch, then launches; a bkill may come in
	// between.
	killPending map[jobKey]bool
}

type jobKey struct {
	id  int64
	idx int32
}

type proc struct {
	pgid     int
	shepherd int
	dir      string
	killing  bool
}

// New returns a worker.
func New(cfg Config) (*Worker, error) {
	if err := os.MkdirAll(cfg.RunDir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	return &Worker{cfg: cfg, jobs: map[jobKey]*proc{}, killPending: map[jobKey]bool{}}, nil
}

// JobDir is the run directory of a job: its launch, start, status and usage
// files, its script, and its spooled output.
func (w *Worker) JobDir(id int64, idx int32) string {
	return filepath.Join(w.cfg.RunDir, fmt.Sprintf("%d.%d", id, idx))
}

// SpoolOutput is where a job without -o writes its output.
func (w *Worker) SpoolOutput(id int64, idx int32) string {
	return filepath.Join(w.JobDir(id, idx), "output")
}

func (w *Worker) files(dir string) (launch, start, status, usage string) {
	return filepath.Join(dir, "launch"), filepath.Join(dir, "start"),
		filepath.Join(dir, "status"), filepath.Join(dir, "status.usage")
}

// Start launches a job: job carries its specs, with the environment
// filled in. It returns once the shepherd process exists; the job's start
// and end are reported later.
func (w *Worker) Start(job *api.Job) error {
	k := jobKey{job.JobId, job.ArrayIndex}
	dir := w.JobDir(job.JobId, job.ArrayIndex)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clear job directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create job directory: %w", err)
	}
	uid, gid := int(job.Spec.GetUid()), int(job.Spec.GetGid())
	asOther := os.Geteuid() == 0 && uid != 0
	if asOther {
		if err := os.Chown(dir, uid, gid); err != nil {
			return fmt.Errorf("give job directory to uid %d: %w", uid, err)
		}
	}
	launchFile, startFile, statusFile, _ := w.files(dir)
	l := &api.Launch{
		Job:         job,
		ClusterName: w.cfg.ClusterName,
		Host:        w.cfg.Host,
		JobFile:     filepath.Join(dir, fmt.Sprintf("%d.%d", job.SubmitTime/1e9, job.JobId)),
		StartFile:   startFile,
		StatusFile:  statusFile,
		KillGraceMs: w.cfg.KillGrace.Milliseconds(),
	}
	b, err := proto.Marshal(l)
	if err != nil {
		return fmt.Errorf("encode launch: %w", err)
	}
	if err := os.WriteFile(launchFile, b, 0o600); err != nil {
		return fmt.Errorf("write launch file: %w", err)
	}
	if asOther {
		if err := os.Chown(launchFile, uid, gid); err != nil {
			return fmt.Errorf("give launch file to uid %d: %w", uid, err)
		}
	}
	started, ready, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start pipe: %w", err)
	}
	args := append(append([]string{}, w.cfg.Shepherd[1:]...), launchFile)
	cmd := exec.Command(w.cfg.Shepherd[0], args...)
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{ready}
	// Its own session: the shepherd and the job outlive xced.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if asOther {
		groups, err := supplementaryGroups(job.Spec.GetUser())
		if err != nil {
			slog.Warn("supplementary groups", "user", job.Spec.GetUser(), "err", err)
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}
	}
	logf, err := os.OpenFile(filepath.Join(dir, "shepherd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		cmd.Stdout, cmd.Stderr = logf, logf
		defer logf.Close()
	}
	if err := cmd.Start(); err != nil {
		started.Close()
		ready.Close()
		return fmt.Errorf("start shepherd: %w", err)
	}
	ready.Close()
	p := &proc{shepherd: cmd.Process.Pid, dir: dir}
	w.mu.Lock()
	w.jobs[k] = p
	kill := w.killPending[k]
	delete(w.killPending, k)
	w.mu.Unlock()
	go func() {
		// One byte (or EOF, if the shepherd dies first) on the pipe.
		var one [1]byte
		started.Read(one[:])
		started.Close()
		w.reportStart(k, p, startFile)
		if kill {
			w.Terminate(k.id, k.idx)
		}
		cmd.Wait()
		w.finish(k, p)
	}()
	return nil
}

func (w *Worker) reportStart(k jobKey, p *proc, startFile string) {
	ev, err := readEvent(startFile)
	if err != nil {
		return // the status file explains it
	}
	w.mu.Lock()
	p.pgid = int(ev.Pid)
	w.mu.Unlock()
	ev.JobId, ev.ArrayIndex = k.id, k.idx
	w.cfg.Report(Report{JobID: k.id, Index: k.idx, Started: ev})
}

func (w *Worker) finish(k jobKey, p *proc) {
	_, _, statusFile, _ := w.files(p.dir)
	ev, err := readEvent(statusFile)
	if err != nil {
		ev = &api.Event{
			Type:       api.EventType_FINISH,
			State:      api.JobState_EXIT,
			Time:       time.Now().UnixNano(),
			TermReason: api.TermReason_TERM_ORPHAN,
			Detail:     "the job's shepherd ended without recording the job's end: " + err.Error(),
		}
	}
	ev.JobId, ev.ArrayIndex = k.id, k.idx
	w.mu.Lock()
	delete(w.jobs, k)
	w.mu.Unlock()
	w.cfg.Report(Report{JobID: k.id, Index: k.idx, Finished: ev})
}

// Reattach picks up a job the controller believes is running after a
// restart: it reports its end once its shepherd has recorded it.
func (w *Worker) Reattach(job *api.Job) {
	k := jobKey{job.JobId, job.ArrayIndex}
	dir := w.JobDir(job.JobId, job.ArrayIndex)
	_, startFile, statusFile, _ := w.files(dir)
	p := &proc{pgid: int(job.Pid), shepherd: int(job.ShepherdPid), dir: dir}
	if ev, err := readEvent(startFile); err == nil {
		p.pgid = int(ev.Pid)
	}
	w.mu.Lock()
	w.jobs[k] = p
	w.mu.Unlock()
	go func() {
		for {
			if _, err := os.Stat(statusFile); err == nil {
				break
			}
			if !shepherdAlive(p.shepherd) {
				// It may have written the file just before exiting.
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		w.finish(k, p)
	}()
}

// NeverStarted reports whether a job the controller marked as dispatched
// has no trace of a shepherd: xced stopped between recording the dispatch
// and starting it, so the job can simply be dispatched again.
func (w *Worker) NeverStarted(job *api.Job) bool {
	dir := w.JobDir(job.JobId, job.ArrayIndex)
	_, startFile, statusFile, _ := w.files(dir)
	for _, f := range []string{startFile, statusFile} {
		if _, err := os.Stat(f); err == nil {
			return false
		}
	}
	return job.ShepherdPid == 0 || !shepherdAlive(int(job.ShepherdPid))
}

// ShepherdPid returns the pid of a running job's shepherd, 0 if unknown.
func (w *Worker) ShepherdPid(id int64, idx int32) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.jobs[jobKey{id, idx}]; p != nil {
		return p.shepherd
	}
	return 0
}

func shepherdAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A reused pid is not our shepherd.
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return strings.Contains(string(cmdline), "shepherd")
}

// Signal sends sig to the job's process group.
func (w *Worker) Signal(id int64, idx int32, sig syscall.Signal) error {
	w.mu.Lock()
	p := w.jobs[jobKey{id, idx}]
	var pgid int
	if p != nil {
		pgid = p.pgid
	}
	w.mu.Unlock()
	if p == nil {
		return fmt.Errorf("job %d[%d] is not running on this host", id, idx)
	}
	if pgid <= 0 {
		return fmt.Errorf("job %d[%d] has not started its process yet", id, idx)
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal job %d[%d]: %w", id, idx, err)
	}
	return nil
}

// Terminate runs LSF's default termination sequence: SIGINT, then SIGTERM,
// then SIGKILL, TerminateInterval apart, stopping once the job has ended. A
// stopped job is continued so that it can handle the signals.
func (w *Worker) Terminate(id int64, idx int32) error {
	k := jobKey{id, idx}
	w.mu.Lock()
	p := w.jobs[k]
	if p != nil {
		if p.killing {
			w.mu.Unlock()
			return nil
		}
		p.killing = true
	}
	if p == nil {
		w.killPending[k] = true
	}
	w.mu.Unlock()
	if p == nil {
		return nil // done once Start has the shepherd
	}
	go func() {
		for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
			if i > 0 {
				time.Sleep(w.cfg.TerminateInterval)
			}
			w.mu.Lock()
			_, running := w.jobs[k]
			w.mu.Unlock()
			if !running {
				return
			}
			w.Signal(id, idx, sig)
			if i == 0 {
				w.Signal(id, idx, syscall.SIGCONT)
			}
		}
	}()
	return nil
}

// SetLimits gives a running job new run, memory and CPU limits (bmod):
// they go to the limits file the shepherd reads (exec.LimitsFile) when it
// gets SIGUSR1.
func (w *Worker) SetLimits(id int64, idx int32, limits *api.JobSpec) error {
	w.mu.Lock()
	p := w.jobs[jobKey{id, idx}]
	var shepherd int
	if p != nil {
		shepherd = p.shepherd
	}
	w.mu.Unlock()
	if p == nil || shepherd <= 0 {
		return fmt.Errorf("job %d[%d] is not running on this host", id, idx)
	}
	dir := w.JobDir(id, idx)
	_, _, status, _ := w.files(dir)
	b, err := proto.Marshal(&api.JobSpec{RunLimitSec: limits.GetRunLimitSec(), MemLimitKb: limits.GetMemLimitKb(),
		MemLimitHard: limits.GetMemLimitHard(), CpuLimitSec: limits.GetCpuLimitSec()})
	if err != nil {
		return fmt.Errorf("encode limits: %w", err)
	}
	f, err := os.CreateTemp(dir, ".limits.*.tmp")
	if err != nil {
		return fmt.Errorf("write limits of job %d[%d]: %w", id, idx, err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	// The shepherd runs as the job's user: the file must be its to read.
	if fi, serr := os.Stat(dir); err == nil && serr == nil && os.Geteuid() == 0 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			err = os.Chown(f.Name(), int(st.Uid), int(st.Gid))
		}
	}
	if err == nil {
		err = os.Rename(f.Name(), jobexec.LimitsFile(status))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write limits of job %d[%d]: %w", id, idx, err)
	}
	if err := syscall.Kill(shepherd, syscall.SIGUSR1); err != nil {
		return fmt.Errorf("tell the shepherd of job %d[%d]: %w", id, idx, err)
	}
	return nil
}

// Usage returns the latest resource usage sample of a running job.
func (w *Worker) Usage(id int64, idx int32) *api.ResourceUsage {
	_, _, _, usageFile := w.files(w.JobDir(id, idx))
	b, err := os.ReadFile(usageFile)
	if err != nil {
		return nil
	}
	u := &api.ResourceUsage{}
	if proto.Unmarshal(b, u) != nil {
		return nil
	}
	return u
}

// Remove deletes a finished job's run directory.
func (w *Worker) Remove(id int64, idx int32) {
	w.mu.Lock()
	delete(w.killPending, jobKey{id, idx})
	w.mu.Unlock()
	os.RemoveAll(w.JobDir(id, idx))
}

func readEvent(path string) (*api.Event, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ev := &api.Event{}
	if err := proto.Unmarshal(b, ev); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return ev, nil
}

func supplementaryGroups(name string) ([]uint32, error) {
	if name == "" {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, err
	}
	var gs []uint32
	for _, id := range ids {
		if g, err := strconv.ParseUint(id, 10, 32); err == nil {
			gs = append(gs, uint32(g))
		}
	}
	return gs, nil
}
