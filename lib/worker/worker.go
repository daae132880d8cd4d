// Package worker owns a host's side of running jobs: it runs each job
// through a shepherd process (lib/exec, run as `xced shepherd LAUNCHFILE`),
// started for it or kept from its user's last job (reuse.go), reports
// when the job started and how it ended, delivers signals to the job's
// process group, and finds its jobs again after the controller restarts.
//
// # Files and the trust boundary
//
// The worker runs as root and the shepherd as the job's user, so nothing
// the worker does as root may follow a path or a number the user can
// influence (docs/security.md). Each job has two directories:
//
//	RunDir/ID.INDEX/            root, 0711: the user can reach what is
//	                            inside by name, but not list or change it
//	    launch                  root 0600: api.Launch, handed to the shepherd
//	                            open as its standard input
//	    limits                  root 0644: bmod's new limits (exec.LimitsFile),
//	                            written to a temporary file and renamed here
//	    shepherd.log            root 0600: the shepherd's stdout and stderr,
//	                            opened by root and inherited; what it holds
//	                            goes to the worker's log before Remove
//	    pids                    root 0600: the shepherd's pid and the job's
//	                            process group, for a restart that comes
//	                            before the controller stored them
//	    task.sock               root 0666 socket: blaunch's (task.go), which
//	                            answers the job's uid only
//	    term.sock               root 0666 socket: an interactive job's relayed
//	                            terminal (term.go), the job's uid only
//	    result                  root 0600: the job's end, as the shepherd wrote it
//	                            through descriptor 4 (exec.ResultFD); the only
//	                            end the worker believes
//	    usage                   root 0600: the latest usage sample, through
//	                            descriptor 5 (exec.UsageFD)
//	    job/                    the job's user, 0700: what the shepherd writes
//	        start, status, status.usage, output, the job file
//
// Root creates the job's directory afresh, then "job" inside it, and hands
// "job" to the user by descriptor (fchown on a directory opened with
// O_NOFOLLOW); root's own files are created with O_EXCL|O_NOFOLLOW in the
// root-owned directory, so no file root writes is ever in a directory the
// user can write, and root never changes an owner by path.
//
// The end and usage the worker reports are the records in root's
// directory, range-checked (lib/bounds), never the job's status or usage
// files, which a job that killed its shepherd could write.
//
// What root reads from job/ (the start file) is read by readJobFile:
// opened O_NOFOLLOW|O_NONBLOCK, accepted only as a regular file with one
// link owned by the job's user, and read up to maxJobFile bytes.
//
// # The job's process group
//
// The shepherd reports the job's pid (its process group id) on the socket
// it inherited on file descriptor 3, not in a file the job could rewrite;
// the controller stores it with the shepherd's pid (Job.Pid and
// ShepherdPid), and after a restart Reattach uses those, never a file.
// Before any signal the group is checked in /proc (checkGroup): id above 1,
// a member whose process group is that id, and whose session is the
// shepherd's (the shepherd leads a session of its own, which a user cannot
// join) or, for an interactive job on a pseudo-terminal that leads its own
// session, whose parent is the shepherd. A group that fails is not
// signalled and the refusal is logged.
//
// # Launch
//
// The shepherd starts the job only once the worker has recorded the
// shepherd's pid (the pids file) and sent it its go on that socket. A
// worker killed between starting the shepherd and the go leaves a shepherd
// that sees the socket close and exits without starting the job, and no
// recorded shepherd: after a restart the job is one that never started
// (NeverStarted), dispatched again, rather than one running unwatched with
// no shepherd to wait for.
//
// # Ends
//
// The shepherd and the job survive a `kill -9` of xced: after a restart
// Reattach watches the shepherd until it has gone, then reads the job's
// result record, whose event carries the time the job really ended. When a
// shepherd has gone, whatever is left of the job's (checked) process group
// is killed. A shepherd gone without a result record (killed) ends the
// job as EXIT with exit code 137 and TERM_CTRL_PID ("job terminated after
// control PID died"): the shepherd is the job's control process.
//
// # Containment
//
// Where the worker can make cgroups, each job also has its own cgroup
// (contain.go), and signals, the end's kill, usage and the run limit go
// through it; the process group rules above are the fallback for hosts
// without cgroups.
//
// In the single-host default the worker is embedded in xced and the
// controller calls it directly.
package worker

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
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

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/atomicfile"
	"xce/lib/bounds"
	"xce/lib/cgroup"
	"xce/lib/container"
	jobexec "xce/lib/exec"
	"xce/lib/rmtree"
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
	// Set by the controller's side of a remote worker's link: the host
	// the report came from ("" = the embedded worker's), the shepherd's
	// pid with Started, and an adopted job the worker had no trace of.
	Host         string
	ShepherdPid  int
	NeverStarted bool
}

// Config describes the worker's host and where it keeps job files.
type Config struct {
	Host        string
	ClusterName string
	// ClusterAdmin: the primary administrator, the sender of job reports.
	ClusterAdmin string
	RunDir       string        // per-job directories live here
	Shepherd     []string      // command that runs a shepherd; LAUNCHFILE is appended
	KillGrace    time.Duration // run limit: SIGUSR2, then SIGKILL this much later
	// TerminateInterval separates the signals of bkill's default sequence
	// (JOB_TERMINATE_INTERVAL).
	TerminateInterval time.Duration
	// The cluster's lsf.conf switches the shepherd follows (api.Launch):
	// LSB_MEMLIMIT_ENFORCE, LSB_JOB_MEMLIMIT, LSB_STDOUT_DIRECT.
	MemlimitEnforce, JobMemlimit, StdoutDirect bool
	// SpoolReserve is the free space (bytes) spooled output leaves on
	// the disk holding the run directory (lib/exec's spool cap): above
	// the store's floor when the store shares that disk. 0: lib/exec's
	// default.
	SpoolReserve uint64
	Report       func(Report)
	// NoShepherdReuse gives every job a shepherd process of its own
	// (reuse.go).
	NoShepherdReuse bool

	// Containment (contain.go). NoProcessTracking keeps jobs out of
	// cgroups (process_tracking = false); CgroupParent replaces the
	// worker's own cgroup as the parent of xce/ (else CgroupParentEnv);
	// Containment gives a job's Launch.containment (nil, or a nil
	// answer: tracked and measured, nothing enforced); DevDir is where
	// the GPUs' device nodes are (default /dev).
	NoProcessTracking bool
	CgroupParent      string
	Containment       func(*api.Job) *api.Containment
	DevDir            string
}

// Worker runs the jobs of one host.
type Worker struct {
	cfg Config
	cg  *cgroup.Manager // nil: jobs are tracked by process tree (contain.go)
	rm  cgRemovals      // job cgroups being removed after their jobs' ends

	mu   sync.Mutex
	jobs map[jobKey]*proc
	// Terminations asked for before the job's shepherd existed: the
	// controller records a dispatch, then launches; a bkill may come in
	// between.
	killPending map[jobKey]api.TermReason // present: kill once started, for this reason
	// New limits (bmod) that came before the job's shepherd (limits.go).
	limitsPending map[jobKey]*api.JobSpec

	// blaunch's tasks (task.go).
	tmu   sync.Mutex
	tk    tasks
	relay TaskRelay

	// Interactive jobs' terminals relayed to bsub (term.go).
	trm termTable

	// Shepherds waiting for their user's next job (reuse.go).
	idle idleShepherds
}

type jobKey struct {
	id  int64
	idx int32
}

type proc struct {
	pgid     int // the job's process group, as the shepherd's socket said (or as stored)
	shepherd int // the shepherd's pid: xced's own child, or as stored
	// shepherdCPU is the shepherd's own CPU time for this job, last seen
	// (contain.go): in the job's cgroup, but not the job's. shepherdBase
	// is what a shepherd handed this job had spent before it (reuse.go).
	shepherdCPU, shepherdBase time.Duration
	// sh is the shepherd's process and socket, nil for a reattached job;
	// keepShepherd: it may take the next job of its user once this one
	// has ended; handed: it ran other jobs before, so its memory is
	// charged to the cgroup of the first, not to this job's (reuse.go).
	sh                   *shepherdProc
	keepShepherd, handed bool
	uid                  int   // the job's user, who must own what root reads from job/
	since                int64 // unix ns: the job cannot have ended before this
	id                   int64
	idx                  int32
	killing              bool
	// pidsFile is the job's pids record, open from its launch until its
	// start is recorded there (pids.go); nil for a reattached job.
	pidsFile *os.File
	// For the job's tasks (task.go): its group, user and allocation.
	gid   int
	user  string
	hosts []*api.HostSlots
	// The job's cgroup (contain.go), nil without one; what it measures
	// and enforces; the run limit the worker keeps; why the worker ended
	// the job, if it did.
	cg            cgroup.Job
	acct          bool
	memEnforced   bool // the cgroup has a memory limit: an OOM kill there is TERM_MEMLIMIT
	kernelMem     bool // the job's memory limit is its cgroup's (limits.go)
	runSec        int64
	termTime      int64 // the termination deadline, Unix seconds (0: none)
	limitsChanged chan struct{}
	ended         chan struct{}
	enforced      api.TermReason
	// The CPU-time limit the worker enforces from the cgroup (cpulimit.go),
	// and whether its watch runs; the same for the sampled memory limit
	// (memlimit.go).
	cpuSec   int64
	cpuWatch bool
	memKB    int64
	memHard  bool
	memWatch bool
	// limitsUnsaid: new limits wait in the limits file for the shepherd
	// to have started the job (limits.go).
	limitsUnsaid bool
	// launching: the shepherd has its go but has not yet said the job's
	// process group; the signals asked for meanwhile (bstop, bkill's
	// first signals) wait in unsent and go at the job's start.
	launching bool
	unsent    []syscall.Signal
	// ctr is the runtime of the job's container, removed at its end
	// (container.go); "" without one.
	ctr container.Runtime
	// driver is its profile's exec_driver, nil for none; driverStarted:
	// its starter ran as a task (driver.go).
	driver        *container.ExecDriver
	driverStarted bool
}

// The files of a job's directory (JobDir); see the package comment.
const (
	launchName  = "launch"
	logName     = "shepherd.log"
	resultName  = "result"
	usageName   = "usage"
	userDirName = "job"
)

// New returns a worker. The run directory must be the worker's own: it is
// created if need be, and made writable by its owner only.
func New(cfg Config) (*Worker, error) {
	if err := os.MkdirAll(cfg.RunDir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	fi, err := os.Lstat(cfg.RunDir)
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("run directory %s: not a directory of uid %d", cfg.RunDir, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		if err := os.Chmod(cfg.RunDir, fi.Mode().Perm()&^0o022); err != nil {
			return nil, fmt.Errorf("run directory: %w", err)
		}
	}
	if cfg.DevDir == "" {
		cfg.DevDir = "/dev"
	}
	return &Worker{cfg: cfg, cg: openCgroups(cfg), jobs: map[jobKey]*proc{}, killPending: map[jobKey]api.TermReason{}}, nil
}

// JobDir is the root-owned directory of a job: its launch and limits
// files, the shepherd's log, and the user's directory (userDir).
func (w *Worker) JobDir(id int64, idx int32) string {
	return filepath.Join(w.cfg.RunDir, fmt.Sprintf("%d.%d", id, idx))
}

// userDir is the job's user's directory: the start, status and usage
// files, the job script and the spooled output.
func (w *Worker) userDir(id int64, idx int32) string {
	return filepath.Join(w.JobDir(id, idx), userDirName)
}

// SpoolOutput is where a job without -o writes its output.
func (w *Worker) SpoolOutput(id int64, idx int32) string {
	return SpoolPath(w.cfg.RunDir, id, idx)
}

// SpoolPath is the spool file of a job on a worker whose run directory is
// runDir.
func SpoolPath(runDir string, id int64, idx int32) string {
	return filepath.Join(runDir, fmt.Sprintf("%d.%d", id, idx), userDirName, "output")
}

func (w *Worker) files(id int64, idx int32) (start, status, usage string) {
	d := w.userDir(id, idx)
	return filepath.Join(d, "start"), filepath.Join(d, "status"), filepath.Join(d, "status.usage")
}

// Start launches a job: job carries its specs, with the environment
// filled in. It returns once the shepherd process exists; the job's start
// and end are reported later.
func (w *Worker) Start(job *api.Job) error {
	k := jobKey{job.JobId, job.ArrayIndex}
	uid, gid := jobUID(job.Spec), int(job.Spec.GetGid())
	asOther := uid != os.Geteuid()
	startFile, statusFile, _ := w.files(k.id, k.idx)
	dir := w.JobDir(k.id, k.idx)
	l := &api.Launch{
		Job:          job,
		ClusterName:  w.cfg.ClusterName,
		ClusterAdmin: w.cfg.ClusterAdmin,
		Host:         w.cfg.Host,
		JobFile:      filepath.Join(w.userDir(k.id, k.idx), fmt.Sprintf("%d.%d", job.SubmitTime/1e9, job.JobId)),
		StartFile:    startFile,
		StatusFile:   statusFile,
		KillGraceMs:  w.cfg.KillGrace.Milliseconds(),

		MemlimitEnforce: w.cfg.MemlimitEnforce,
		JobMemlimit:     w.cfg.JobMemlimit,
		StdoutDirect:    w.cfg.StdoutDirect,
		TaskSocket:      filepath.Join(dir, TaskSocketName),
		Containment:     w.containment(job),
	}
	if w.cg != nil && l.Containment.GetProcessTracking() {
		l.RuntimeCgroupParent = w.cg.RuntimeParent(k.id, k.idx) // for a container's --cgroup-parent
	}
	relayed := termRelayed(job)
	if relayed {
		if w.termLink() == nil {
			return errNoTermLink
		}
		l.InteractiveAddr = "unix:" + filepath.Join(dir, TermSocketName)
	}
	b, err := api.Marshal(l)
	if err != nil {
		return fmt.Errorf("encode launch: %w", err)
	}
	jf, err := makeJobDir(dir, uid, gid, asOther, b)
	if err != nil {
		return err
	}
	defer jf.close()
	// The pids record stays open until the job's pgid is in it (pids.go).
	pidsFile := jf.pids
	jf.pids = nil
	handedOver := false
	defer func() {
		if !handedOver {
			pidsFile.Close()
		}
	}()
	if err := w.serveTasks(k, uid); err != nil {
		return err
	}
	if relayed {
		if err := w.openTerm(k, uid); err != nil {
			w.endTasks(k)
			return fmt.Errorf("interactive job's terminal socket: %w", err)
		}
	}
	var groups []uint32
	if asOther {
		var err error
		if groups, err = supplementaryGroups(job.Spec.GetUser()); err != nil {
			slog.Warn("supplementary groups", "user", job.Spec.GetUser(), "err", err)
		}
	}
	cred := newCredKey(uid, gid, groups)
	reusable := w.mayReuse(job, relayed, l.Containment)
	// The cgroup is made while the shepherd starts (a fork and an exec):
	// it must exist only by the time the shepherd is moved in.
	madeCgroup := w.startCgroup(k, job, l.Containment)
	var s *shepherdProc
	var cg cgroup.Job
	var shepherdBase time.Duration // what a handed shepherd spent before this job
	if reusable {
		if s = w.takeIdle(cred); s != nil {
			shepherdBase, _ = ownCPU(s.pid)
			cg = madeCgroup()
			madeCgroup = func() cgroup.Job { return cg }
			// Only into the job's cgroup: never to run the job where
			// it waited, beside other idle shepherds.
			if cg == nil || addToCgroup(cg, s.pid) != nil {
				s.letGo()
				s, shepherdBase = nil, 0
			}
		}
	}
	handed := s != nil
	if s == nil {
		var err error
		if s, err = w.startFresh(dir, jf, cred, groups, asOther); err != nil {
			w.endTasks(k)
			w.endTerm(k)
			if cg := madeCgroup(); cg != nil {
				cg.Remove()
			}
			return err
		}
		// Into the cgroup while it waits for its go: the job and all it
		// starts are born inside.
		if cg = madeCgroup(); cg != nil {
			if err := addToCgroup(cg, s.pid); err != nil {
				slog.Warn("the job runs without a cgroup (process tree only)", "job", k.id, "index", k.idx, "err", err)
				cg.Remove()
				cg = nil
			}
		}
	}
	if crashAt == "started" {
		s.sock.Close()
		return nil
	}
	p := &proc{shepherd: s.pid, shepherdBase: shepherdBase, uid: uid, since: time.Now().UnixNano(), id: k.id, idx: k.idx,
		gid: gid, user: job.Spec.GetUser(), hosts: job.ExecHosts, cg: cg, ctr: jobRuntime(job), launching: true, driver: jobDriver(job),
		pidsFile: pidsFile, sh: s, keepShepherd: reusable && cg != nil, handed: handed}
	handedOver = true
	if cg != nil {
		spec := runLimits(job)
		p.acct = l.Containment.GetCgroupAcct()
		p.kernelMem = w.kernelMemory(l.Containment, cg)
		p.memEnforced = p.kernelMem && l.Containment.GetMemLimitKb() > 0
		p.runSec, p.termTime = spec.GetRunLimitSec(), spec.GetTermTime()
		p.limitsChanged, p.ended = make(chan struct{}, 1), make(chan struct{})
		go w.watchLimits(k, p, spec, time.Now())
		w.watchCPULimit(k, p, spec.GetCpuLimitSec())
		w.watchMemLimit(k, p, spec.GetMemLimitKb(), spec.GetMemLimitHard())
	}
	w.recordPids(k, p.pidsFile, p.shepherd, 0)
	if crashAt == "recorded" {
		p.pidsFile.Close()
		s.sock.Close()
		return nil
	}
	// Only now may the shepherd start the job. A worker killed before
	// this leaves a shepherd that sees its socket close and exits without
	// starting it, and a restarted worker that finds no shepherd it could
	// have lost (NeverStarted): the job is dispatched again rather than
	// left running unwatched and reported lost.
	// Where its cgroup holds the job's memory limit, the go says so: the
	// shepherd then leaves the memory limit to the kernel, as LSF leaves
	// LSB_MEMLIMIT_ENFORCE aside under LSB_RESOURCE_ENFORCE="memory".
	goByte := byte(jobexec.GoByte)
	if p.kernelMem {
		goByte = jobexec.GoKernelMemByte
	}
	var goErr error
	if handed {
		goErr = s.handOver(goByte, filepath.Join(dir, launchName), jf)
	} else {
		_, goErr = s.sock.Write([]byte{goByte})
	}
	if goErr != nil {
		slog.Warn("the shepherd did not take its go", "job", k.id, "index", k.idx, "pid", s.pid, "err", goErr)
	}
	w.noteContainerUser(p) // sweepuser.go
	w.mu.Lock()
	w.jobs[k] = p
	w.driverMonitor(k, p) // driver.go
	killReason, kill := w.killPending[k]
	delete(w.killPending, k)
	newLimits := w.takePendingLimits(k)
	w.mu.Unlock()
	if newLimits != nil {
		// A bmod between the dispatch and now: the shepherd has its go,
		// and reads the limits file on SIGUSR1 from its first moment.
		if err := w.SetLimits(k.id, k.idx, newLimits); err != nil {
			slog.Warn("new limits not given", "job", k.id, "index", k.idx, "err", err)
		}
	}
	go w.follow(k, p, s, kill, killReason)
	return nil
}

// addToCgroup moves the shepherd pid into the job's cgroup cg.
func addToCgroup(cg cgroup.Job, pid int) error {
	t0 := time.Now()
	err := cg.Add(pid)
	traceStep("cgroup-add", t0)
	return err
}

// startFresh starts a shepherd process for the job whose directory is dir
// and whose files are jf; it waits on its socket for its go.
func (w *Worker) startFresh(dir string, jf *jobFiles, cred credKey, groups []uint32, asOther bool) (*shepherdProc, error) {
	sock, ready, err := startSocket()
	if err != nil {
		return nil, err
	}
	defer ready.Close()
	args := append(append([]string{}, w.cfg.Shepherd[1:]...), filepath.Join(dir, launchName))
	cmd := exec.Command(w.cfg.Shepherd[0], args...)
	cmd.Dir = "/"
	cmd.Env = shepherdEnv(w.cfg.SpoolReserve) // shepenv.go
	cmd.Stdin, cmd.Stdout, cmd.Stderr = jf.launch, jf.log, jf.log
	// Descriptors 3, 4 and 5 (exec.ResultFD, exec.UsageFD).
	cmd.ExtraFiles = []*os.File{ready, jf.result, jf.usage}
	// Its own session: the shepherd and the job outlive xced, and the
	// session id (the shepherd's pid) marks the job's processes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if asOther {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(cred.uid), Gid: uint32(cred.gid), Groups: groups}
	}
	t0 := time.Now()
	s, err := startShepherd(cmd, sock, cred)
	traceStep("shepherd-start", t0)
	if err != nil {
		sock.Close()
		return nil, fmt.Errorf("start shepherd: %w", err)
	}
	return s, nil
}

// follow reports the job's start and end as its shepherd tells them, and
// keeps the shepherd for the next job where it may.
func (w *Worker) follow(k jobKey, p *proc, s *shepherdProc, kill bool, killReason api.TermReason) {
	pid, idle := 0, false
	switch line, err := s.read(); {
	case err != nil: // gone before the job started
	case line == jobexec.IdleWord: // the job could not start; its end is recorded
		idle = true
	default:
		if n, err := strconv.Atoi(line); err == nil && n > 1 {
			pid = n
		} else {
			slog.Warn("the shepherd's socket said something that is no pid", "said", fmt.Sprintf("%q", line))
		}
	}
	if pid > 0 {
		w.reportStart(k, p, pid)
	}
	p.pidsFile.Close()
	if pid <= 0 {
		w.mu.Lock()
		p.launching, p.unsent = false, nil // no job to signal
		w.mu.Unlock()
	}
	if kill {
		w.Terminate(k.id, k.idx, killReason)
	}
	if p.keepShepherd && !idle && pid > 0 {
		line, err := s.read()
		idle = err == nil && line == jobexec.IdleWord
	}
	if !p.keepShepherd || !idle || !w.keepIdle(s) {
		// Not kept: it exits once it has recorded the end (its word
		// that it is idle meets a closed socket), or has gone.
		s.letGo()
		w.finish(k, p, s.how(), nil)
		return
	}
	// Offered before the end is reported, which is when the controller
	// dispatches the next job here.
	w.finish(k, p, "is idle", func() { w.putIdle(s) })
}

// jobUID is the user a job runs as: its own when the worker is root (and
// the job is not root's), else the worker's.
func jobUID(spec *api.JobSpec) int {
	if os.Geteuid() == 0 && spec.GetUid() != 0 {
		return int(spec.GetUid())
	}
	return os.Geteuid()
}

// reportStart reports that the job's process runs, as pid (the shepherd's
// word on its socket): the start file adds where and when.
func (w *Worker) reportStart(k jobKey, p *proc, pid int) {
	startFile, _, _ := w.files(k.id, k.idx)
	ev, err := readEvent(startFile, p.uid)
	if err != nil {
		slog.Warn("start file", "job", k.id, "index", k.idx, "err", err)
		ev = &api.Event{Time: time.Now().UnixNano()}
	}
	ev.Type, ev.State, ev.Pid = api.EventType_START, api.JobState_RUN, int32(pid)
	w.mu.Lock()
	p.pgid = pid
	tell := p.limitsUnsaid
	p.limitsUnsaid = false
	unsent := p.unsent
	p.launching, p.unsent = false, nil
	w.mu.Unlock()
	if tell && shepherdAlive(p.shepherd, p.uid) {
		if err := w.tellLimits(k, p); err != nil {
			slog.Warn("new limits not given", "job", k.id, "index", k.idx, "err", err)
		}
	}
	if p.cg != nil {
		w.noteShepherdCPU(p) // its start-up, the most of its CPU
	}
	w.recordPids(k, p.pidsFile, p.shepherd, pid)
	ev.JobId, ev.ArrayIndex = k.id, k.idx
	w.cfg.Report(Report{JobID: k.id, Index: k.idx, Started: ev})
	for _, sig := range unsent {
		if err := w.signalStarted(p, pid, sig); err != nil {
			slog.Warn("a signal asked for before the job started was not delivered", "job", k.id, "index", k.idx, "signal", int(sig), "err", err)
		}
	}
}

// finish reports a job's end once its shepherd has gone or is idle (how
// says how): what is left of the job's process group is killed, and the
// end is the status file's, or TERM_CTRL_PID when the shepherd left none.
// beforeReport, when set, runs once all of that is done, just before the
// report.
func (w *Worker) finish(k jobKey, p *proc, how string, beforeReport func()) {
	w.mu.Lock()
	pgid := p.pgid
	w.mu.Unlock()
	// The end is the shepherd's record in root's directory, never the
	// status file in the job's: a job that killed its shepherd and wrote
	// that file has no say in how it ended (docs/security.md).
	ev, err := w.readResult(k)
	var killed bool
	if pgid > 0 {
		killed, _ = w.signalGroup(p, pgid, syscall.SIGKILL)
	}
	if p.cg != nil {
		// The worker's own view: the cgroup's usage, whatever is left
		// killed, the limits it enforced.
		var shepherdEv *api.Event
		if err == nil {
			shepherdEv = ev
		}
		if cev := w.cgFinish(k, p, shepherdEv); cev != nil && cev != shepherdEv || err == nil {
			ev, err = cev, nil
		}
		close(p.ended)
	}
	if err != nil {
		detail := fmt.Sprintf("TERM_CTRL_PID: the job's shepherd (pid %d) %s before it recorded the job's end (%v)", p.shepherd, how, err)
		if killed {
			detail += "; what was left of the job was killed"
		}
		ev = &api.Event{
			Type:       api.EventType_FINISH,
			State:      api.JobState_EXIT,
			Time:       time.Now().UnixNano(),
			ExitStatus: 128 + int32(syscall.SIGKILL),
			Signal:     int32(syscall.SIGKILL),
			TermReason: api.TermReason_TERM_CTRL_PID,
			Detail:     detail,
		}
		slog.Warn("a job's shepherd ended without recording the job's end", "job", k.id, "index", k.idx, "detail", detail)
	}
	ev.JobId, ev.ArrayIndex = k.id, k.idx
	if bad := bounds.Event(ev, w.limits(p, ev.Time)); len(bad) > 0 {
		slog.Warn("a job's end was out of range; clamped", "job", k.id, "index", k.idx, "fields", bad)
	}
	if ev.Type != api.EventType_FINISH && ev.Type != api.EventType_PEND_AGAIN {
		ev.Type = api.EventType_FINISH
	}
	w.endTerm(k)
	if p.ctr != "" && err != nil {
		// The shepherd, which removes the job's container, went first.
		// Before the end is reported, so that a new run of the job
		// (requeued) cannot lose its container to this (container.go).
		w.removeContainer(k, p.ctr, w.containerOwner(p)) // sweepuser.go
	}
	// Its tasks go with it, and count in its usage.
	if tu := w.endTasks(k); tu != nil {
		ev.Usage = addUsage(ev.Usage, tu)
		ev.CpuTimeMs += tu.CpuTimeMs
	}
	// The end is when the job ended, also when the worker learns of it
	// later (after a restart), within what is possible.
	ev.Time = min(max(ev.Time, p.since), time.Now().UnixNano())
	w.mu.Lock()
	delete(w.jobs, k)
	w.mu.Unlock()
	if beforeReport != nil {
		beforeReport()
	}
	w.cfg.Report(Report{JobID: k.id, Index: k.idx, Finished: ev})
}

// Reattach picks up a job the controller believes is running after a
// restart: the job's process group and shepherd are the ones the
// controller stored (never what a file says), and the job's end is
// reported once its shepherd has gone.
func (w *Worker) Reattach(job *api.Job) {
	k := jobKey{job.JobId, job.ArrayIndex}
	p := &proc{pgid: int(job.Pid), shepherd: int(job.ShepherdPid), uid: -1, since: job.StartTime, id: k.id, idx: k.idx,
		gid: int(job.Spec.GetGid()), user: job.Spec.GetUser(), hosts: job.ExecHosts, ctr: jobRuntime(job), driver: jobDriver(job)}
	if p.shepherd == 0 || p.pgid == 0 {
		// Its start was not recorded before the restart: the worker's
		// own record has the pids.
		if sp, pg := w.readPids(k); sp > 0 {
			p.shepherd = cmp.Or(p.shepherd, sp)
			p.pgid = cmp.Or(p.pgid, pg)
		}
	}
	// The user's directory is the user's: root created it and gave it
	// away, and it cannot be replaced (its parent is root's).
	if fi, err := os.Lstat(w.userDir(k.id, k.idx)); err == nil && fi.IsDir() {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			p.uid = int(st.Uid)
			if job.Spec == nil {
				// A record without its spec (the controller's adopt):
				// the group root gave the directory is the job's.
				p.gid = int(st.Gid)
			}
		}
	}
	if p.user == "" && p.uid >= 0 {
		if u, err := user.LookupId(strconv.Itoa(p.uid)); err == nil {
			p.user = u.Username
		}
	}
	if w.cg != nil {
		// Its cgroup, where it has one: tracked and measured as before
		// the restart (the limits the kernel enforces are already set).
		if cg := w.cg.Load(k.id, k.idx); cg != nil {
			p.cg, p.ended = cg, make(chan struct{})
			p.acct, p.memEnforced, p.kernelMem = w.adoptedContainment(job, cg)
		}
	}
	w.mu.Lock()
	w.jobs[k] = p
	w.mu.Unlock()
	w.driverMonitor(k, p)  // driver.go
	w.noteContainerUser(p) // sweepuser.go
	if p.cg != nil && job.Spec != nil && job.StartTime > 0 {
		spec := runLimits(job)
		p.runSec, p.termTime, p.limitsChanged = spec.GetRunLimitSec(), spec.GetTermTime(), make(chan struct{}, 1)
		go w.watchLimits(k, p, spec, time.Unix(0, job.StartTime))
		w.watchCPULimit(k, p, spec.GetCpuLimitSec())
		w.watchMemLimit(k, p, spec.GetMemLimitKb(), spec.GetMemLimitHard())
	}
	if p.uid >= 0 {
		if err := w.serveTasks(k, p.uid); err != nil {
			slog.Warn("blaunch will not work in a reattached job", "job", k.id, "index", k.idx, "err", err)
		}
	}
	go func() {
		for shepherdAlive(p.shepherd, p.uid) {
			time.Sleep(200 * time.Millisecond)
		}
		w.finish(k, p, "is gone", nil)
	}()
}

// NeverStarted reports whether a job the controller marked as dispatched
// has no trace of a shepherd: xced stopped between recording the dispatch
// and starting it, so the job can simply be dispatched again.
func (w *Worker) NeverStarted(job *api.Job) bool {
	startFile, statusFile, _ := w.files(job.JobId, job.ArrayIndex)
	for _, f := range []string{startFile, statusFile} {
		if _, err := os.Lstat(f); err == nil {
			return false
		}
	}
	if fi, err := os.Lstat(filepath.Join(w.JobDir(job.JobId, job.ArrayIndex), resultName)); err == nil && fi.Size() > 0 {
		return false
	}
	sp := int(job.ShepherdPid)
	if sp == 0 {
		sp, _ = w.readPids(jobKey{job.JobId, job.ArrayIndex})
	}
	return sp == 0 || !shepherdAlive(sp, -1)
}

// pidsName is the worker's record of a job's shepherd and process group
// (root 0600 in the job's root-owned directory), for a restart that
// comes before the controller stored them.
const pidsName = "pids"

func (w *Worker) readPids(k jobKey) (shepherd, pgid int) {
	b, err := os.ReadFile(filepath.Join(w.JobDir(k.id, k.idx), pidsName))
	if err != nil || len(b) > 64 {
		return 0, 0
	}
	if _, err := fmt.Sscanf(string(b), "%d %d", &shepherd, &pgid); err != nil {
		return 0, 0
	}
	return shepherd, pgid
}

// Running lists the jobs the worker watches now (started or reattached,
// not yet ended), in job order.
func (w *Worker) Running() []*api.JobRef {
	w.mu.Lock()
	refs := make([]*api.JobRef, 0, len(w.jobs))
	for k := range w.jobs {
		refs = append(refs, &api.JobRef{JobId: k.id, ArrayIndex: k.idx})
	}
	w.mu.Unlock()
	slices.SortFunc(refs, func(a, b *api.JobRef) int {
		return cmp.Or(cmp.Compare(a.JobId, b.JobId), cmp.Compare(a.ArrayIndex, b.ArrayIndex))
	})
	return refs
}

// Watches reports whether the worker watches the job now.
func (w *Worker) Watches(id int64, idx int32) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.jobs[jobKey{id, idx}] != nil
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

// Signal sends sig to the job's process group, once checkGroup has found
// it to be the job's. Between the shepherd's go and its word on the job's
// process group, the signal waits and goes at the job's start: a bkill or
// bstop right after the dispatch is not lost.
func (w *Worker) Signal(id int64, idx int32, sig syscall.Signal) error {
	w.mu.Lock()
	p := w.jobs[jobKey{id, idx}]
	var pgid int
	var queued bool
	if p != nil {
		pgid = p.pgid
		if pgid <= 0 && p.launching {
			p.unsent, queued = append(p.unsent, sig), true
		}
	}
	w.mu.Unlock()
	if p == nil {
		return fmt.Errorf("job %d[%d] is not running on this host", id, idx)
	}
	if queued {
		return nil
	}
	// A job reattached after a restart that came before its process
	// group was recorded has none: its cgroup still holds the job.
	if pgid <= 0 && (p.cg == nil || p.launching) {
		return fmt.Errorf("job %d[%d] has not started its process yet", id, idx)
	}
	return w.signalStarted(p, pgid, sig)
}

// signalStarted sends sig to a started job: through its cgroup where it
// has one, else to its process group pgid. The job's exec_driver
// controller hears of it too, whether the signal came now or waited for
// the job's start.
func (w *Worker) signalStarted(p *proc, pgid int, sig syscall.Signal) error {
	w.driverControl(p, sig) // driver.go
	if p.cg != nil {
		return w.cgSignal(p, sig)
	}
	_, err := w.signalGroup(p, pgid, sig)
	return err
}

// signalGroup sends sig to process group pgid of p's job after checking
// it, and says whether it did; a group with no process left is not an
// error.
func (w *Worker) signalGroup(p *proc, pgid int, sig syscall.Signal) (bool, error) {
	switch err := checkGroup(pgid, p.shepherd); {
	case errors.Is(err, errNoGroup):
		return false, nil
	case err != nil:
		slog.Error("refused to signal a process group that is not the job's", "job", p.id, "index", p.idx,
			"pgid", pgid, "shepherd", p.shepherd, "signal", sig, "err", err)
		return false, fmt.Errorf("signal job %d[%d]: %w", p.id, p.idx, err)
	}
	if err := syscall.Kill(-pgid, sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return false, nil
		}
		return false, fmt.Errorf("signal job %d[%d]: %w", p.id, p.idx, err)
	}
	return true, nil
}

// Terminate runs LSF's default termination sequence: SIGINT, then SIGTERM,
// then SIGKILL, TerminateInterval apart, stopping once the job has ended. A
// stopped job is continued so that it can handle the signals. A reason
// other than TERM_UNKNOWN goes first to the job's kill file
// (exec.KillFile), which the shepherd reads when the job ends: its report
// then names it ("TERM_OWNER: job killed by owner.").
func (w *Worker) Terminate(id int64, idx int32, reason api.TermReason) error {
	return w.terminate(id, idx, reason, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL)
}

// terminate is Terminate with its own signals, TerminateInterval apart.
func (w *Worker) terminate(id int64, idx int32, reason api.TermReason, sigs ...syscall.Signal) error {
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
		w.killPending[k] = reason
	}
	w.mu.Unlock()
	if p == nil {
		return nil // done once Start has the shepherd
	}
	if reason != api.TermReason_TERM_UNKNOWN {
		// Root's own file in root's directory, as the limits file: the
		// job cannot write it, so no job can claim a reason for its end.
		kf := jobexec.KillFile(filepath.Join(w.JobDir(id, idx), launchName))
		if err := atomicfile.Write(kf, []byte(reason.String()+"\n"), 0o644, false); err != nil {
			slog.Warn("cannot record why a job is killed; its report will not say", "job", id, "index", idx, "err", err)
		}
	}
	go func() {
		for i, sig := range sigs {
			if i > 0 {
				time.Sleep(w.cfg.TerminateInterval)
			}
			w.mu.Lock()
			// The same run: a job run again under its id after this one
			// ended is not this sequence's to signal.
			running := w.jobs[k] == p
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

// Usage returns the latest resource usage sample of a running job.
func (w *Worker) Usage(id int64, idx int32) *api.ResourceUsage {
	w.mu.Lock()
	p := w.jobs[jobKey{id, idx}]
	w.mu.Unlock()
	if p == nil {
		return nil
	}
	tasks := w.taskUsage(jobKey{id, idx})
	// The shepherd's record in root's directory, not the job's usage
	// file, which the job can rewrite.
	b, err := readRecord(filepath.Join(w.JobDir(id, idx), usageName))
	u := &api.ResourceUsage{}
	if err != nil || proto.Unmarshal(b, u) != nil {
		u = nil
	}
	if p.cg != nil && p.acct {
		u = w.cgUsageNow(p, u)
	}
	if u == nil {
		return tasks
	}
	if bad := bounds.Usage(u, w.limits(p, time.Now().UnixNano())); len(bad) > 0 {
		slog.Warn("a job's usage was out of range; clamped", "job", id, "index", idx, "fields", bad)
	}
	return addUsage(u, tasks)
}

// Remove deletes a finished job's run directory. What the shepherd wrote
// to its log (it writes only when something went wrong) goes to the
// worker's log first, since the log is removed with the directory.
func (w *Worker) Remove(id int64, idx int32) {
	w.mu.Lock()
	delete(w.killPending, jobKey{id, idx})
	delete(w.limitsPending, jobKey{id, idx})
	w.mu.Unlock()
	dir := w.JobDir(id, idx)
	keepShepherdLog(filepath.Join(dir, logName), id, idx)
	if err := rmtree.RemoveAll(dir); err != nil {
		slog.Warn("cannot remove the job's directory", "job", id, "index", idx, "err", err)
	}
}

// maxShepherdLog is how much of a shepherd's log keepShepherdLog passes on.
const maxShepherdLog = 16 << 10

// keepShepherdLog passes a shepherd's log on to the worker's, up to
// maxShepherdLog bytes. The log is the worker's own file in the job's
// root-owned directory; it is still opened as a job file is (no link
// followed, a regular file of the worker's uid) and read with a cap.
func keepShepherdLog(path string, id int64, idx int32) {
	f, size, err := openJobFile(path, os.Geteuid())
	if err != nil {
		return
	}
	defer f.Close()
	if size == 0 { // a job whose shepherd had nothing to say: no read
		return
	}
	b, err := io.ReadAll(io.LimitReader(f, maxShepherdLog))
	if err != nil || len(b) == 0 {
		return
	}
	cut := size > maxShepherdLog
	slog.Warn("the job's shepherd logged", "job", id, "index", idx, "log", strings.TrimRight(string(b), "\n"), "cut", cut)
}

// readResult reads the job's end as the shepherd recorded it in root's
// directory (exec.ResultFD).
func (w *Worker) readResult(k jobKey) (*api.Event, error) {
	b, err := readRecord(filepath.Join(w.JobDir(k.id, k.idx), resultName))
	if err != nil {
		return nil, err
	}
	ev := &api.Event{}
	if err := proto.Unmarshal(b, ev); err != nil {
		return nil, fmt.Errorf("decode the job's end: %w", err)
	}
	return ev, nil
}

// limits bounds what job p can have used by time now (unix ns): this
// host's CPUs and memory over the time since it started.
func (w *Worker) limits(p *proc, now int64) bounds.Limits {
	h := thisHost()
	return bounds.Limits{NCPUs: h.ncpus, MemKb: h.memKb, Elapsed: time.Duration(max(now-p.since, 0))}
}

// readEvent reads an event the shepherd wrote in the job's directory.
func readEvent(path string, uid int) (*api.Event, error) {
	b, err := readJobFile(path, uid)
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
