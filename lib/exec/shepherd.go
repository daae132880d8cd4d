package exec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	osexec "os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"xce/lib/api"
	"xce/lib/lsfout"
)

const (
	// defaultKillGrace is LSF's wait between SIGUSR2 and SIGKILL at a run
	// limit or deadline when the launch gives none.
	defaultKillGrace = 10 * time.Minute
	// terminateInterval is LSF's JOB_TERMINATE_INTERVAL default, the wait
	// between the signals of a memory or CPU limit kill.
	terminateInterval = 10 * time.Second
	// firstSample and sampleInterval time the resource usage samples;
	// usageInterval is how often the usage file is rewritten.
	firstSample    = 100 * time.Millisecond
	sampleInterval = time.Second
	usageInterval  = 5 * time.Second
)

// Exit codes of a job that could not be started, as a shell would report
// them.
const (
	exitSetup      = 2   // cwd, output or input file: LSF's TERM_CWD_NOTEXIST code, sh's redirection error
	exitCannotExec = 126 // the job file or its interpreter is not executable
	exitNotFound   = 127 // the script's interpreter does not exist
)

// ShepherdMain is the shepherd process (`xced shepherd LAUNCHFILE`): it reads
// the binary api.Launch in launchFile, runs the job with Run and returns the
// process's exit code: 0 once the job's end is recorded in the status file,
// whatever the job's own exit status; 1 when the end could not be recorded;
// 2 when the launch file is unusable; 3 when the worker went before it
// let the job start (below).
//
// The worker keeps the launch file root's (mode 0600, in a root-owned
// directory) and hands it over open as standard input: when standard input
// is launchFile itself (same device and inode), the launch is read from it
// and standard input becomes /dev/null; otherwise launchFile is opened by
// path (a shepherd run by hand or by a test as the file's owner). New
// limits are read from LimitsFile(launchFile) on SIGUSR1.
//
// If the process was started with a pipe (or socket) open for writing on
// file descriptor 3, ShepherdMain writes the job's pid (also its process
// group id) to it in decimal, followed by a newline, once the job's
// process runs and the start file is written (nothing when the job could
// not be started); a pipe is closed then. A socket there is the
// worker's: before anything else happens the shepherd waits on it for one
// byte, GoByte, which the worker sends once it has recorded the shepherd;
// when the socket closes instead (the worker was killed meanwhile), the
// shepherd exits with code 3 having done nothing, and the job is the
// restarted worker's to dispatch again. Once the job's end is recorded it
// writes IdleWord there and runs the job the worker hands it next, until
// the socket closes (reuse.go). SIGTERM and SIGINT sent to
// the shepherd are passed on to the job's process group, and SIGHUP and
// SIGPIPE are ignored, so that the shepherd lives to record the job's end.
func ShepherdMain(launchFile string) int {
	// Out of the job's reach before anything else: the job runs as the
	// same user, who could otherwise ptrace the shepherd or open its
	// descriptors through /proc (PR_SET_DUMPABLE also makes /proc/PID
	// root's). The job itself is dumpable again once it execs.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		slog.Warn("cannot make the shepherd non-dumpable", "err", err)
	}
	ctl, gated := startedPipe()
	defer ctl.Close()
	next := &nextJob{launchFile: launchFile, result: recordFile(ResultFD, "result"), usage: recordFile(UsageFD, "usage")}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE, syscall.SIGUSR1)
	defer signal.Stop(sigs)

	log := slog.Default().With("launch", launchFile)
	b, err := readLaunch(launchFile)
	if err != nil {
		log.Error("cannot read the launch file", "err", err)
		return 2
	}
	// The generated decoder: the worker (root) wrote the file in a
	// directory only root can write, from a request the controller
	// decoded and checked, so protobuf-go's checks (and the reflection
	// tables it would build first, a tenth of a short job's shepherd)
	// are not needed.
	next.launch = &api.Launch{}
	if err := next.launch.UnmarshalVT(b); err != nil {
		log.Error("cannot decode the launch file", "err", err)
		return 2
	}
	if gated {
		var got [1]byte
		if n, err := ctl.Read(got[:]); n != 1 || got[0] != GoByte && got[0] != GoKernelMemByte {
			log.Warn("the worker went before it let the job start; the job is not started", "err", err)
			return 3
		}
		next.kernelMem = got[0] == GoKernelMemByte
	}
	var pgid struct {
		sync.Mutex
		n int
	}
	reload := make(chan struct{}, 1)
	go func() {
		for sig := range sigs {
			s, ok := sig.(syscall.Signal)
			if ok && s == syscall.SIGUSR1 {
				select { // the worker wrote new limits
				case reload <- struct{}{}:
				default:
				}
				continue
			}
			if !ok || (s != syscall.SIGTERM && s != syscall.SIGINT) {
				continue
			}
			pgid.Lock()
			if pgid.n > 0 {
				syscall.Kill(-pgid.n, s)
			}
			pgid.Unlock()
		}
	}()
	// A process the job starts that leaves its group or session is
	// reparented to the shepherd, not to init, and stays the job's.
	tree := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
	for {
		var background sync.WaitGroup
		_, err = run(next.launch, hooks{tree: tree, kernelMem: next.kernelMem, reload: reload, background: &background,
			limitsFile: LimitsFile(next.launchFile), killFile: KillFile(next.launchFile), result: next.result, usage: next.usage,
			started: func(pid int) {
				pgid.Lock()
				pgid.n = pid
				pgid.Unlock()
				if ctl != nil {
					ctl.Write([]byte(strconv.Itoa(pid) + "\n"))
					if !gated {
						ctl.Close() // a pipe: its one word is said
						ctl = nil
					}
				}
			}})
		pgid.Lock()
		pgid.n = 0 // the group is no longer the job's once it is reaped
		pgid.Unlock()
		next.closeRecords()
		if err != nil {
			log.Error("cannot record the job's end", "err", err)
			return 1
		}
		// Nothing is logged of an end that was recorded: the records hold
		// it, and the log is for what went wrong (the worker passes a
		// non-empty one on to its own log).
		if !gated || !reusable(next.launch) {
			return 0
		}
		// The job's end is recorded: the worker may hand this process
		// its user's next job (reuse.go) or let it go.
		background.Wait()
		if next, err = awaitJob(ctl); err != nil {
			if !errors.Is(err, io.EOF) {
				log.Error("no next job", "err", err)
				return 2
			}
			return 0
		}
		log = slog.Default().With("launch", next.launchFile)
		select { // a reload asked of the last job is not this one's
		case <-reload:
		default:
		}
	}
}

// readLaunch returns the launch: from standard input when that is
// launchFile, opened by the worker (which keeps the file unreadable to the
// job's user), else from launchFile by path.
func readLaunch(launchFile string) ([]byte, error) {
	var in, named syscall.Stat_t
	if syscall.Fstat(0, &in) == nil && in.Mode&syscall.S_IFMT == syscall.S_IFREG &&
		syscall.Stat(launchFile, &named) == nil && in.Dev == named.Dev && in.Ino == named.Ino {
		b, err := io.ReadAll(os.Stdin)
		// The job and its hooks never see the launch.
		if null, nerr := os.Open(os.DevNull); nerr == nil {
			syscall.Dup2(int(null.Fd()), 0)
			null.Close()
		}
		return b, err
	}
	return os.ReadFile(launchFile)
}

// GoByte is what the worker sends on the socket of file descriptor 3 to let
// the shepherd start the job.
const GoByte = 'g'

// GoKernelMemByte is GoByte for a job whose cgroup holds its memory limit
// (the worker's resource_enforce "memory"): the kernel enforces the
// limit, so the shepherd does not (LSF ignores LSB_MEMLIMIT_ENFORCE and
// LSB_JOB_MEMLIMIT then, and the cgroup's limit is the job's times its
// slots on the host, which the shepherd's sum would cut short).
const GoKernelMemByte = 'm'

// startedPipe returns file descriptor 3 when it is the worker's "started"
// pipe: a pipe or socket open for writing; gated reports a socket, which
// gives the shepherd its go first. Anything else on 3 (a file the runtime
// or a caller opened) is left alone. The descriptor is made close-on-exec
// so the job does not inherit it.
func startedPipe() (f *os.File, gated bool) {
	const fd = 3
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, false
	}
	if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
		return nil, false
	}
	fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	if errno != 0 || fl&syscall.O_ACCMODE == syscall.O_RDONLY {
		return nil, false
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(fd, "started"), st.Mode&syscall.S_IFMT == syscall.S_IFSOCK
}

// Run runs the job of l to its end: it writes the job file, sets up the
// working directory, environment and standard files, starts the job in its
// own process group, writes the start file, enforces the run, deadline,
// memory and CPU limits, samples resource usage into the usage file, appends
// the job report to the output file, and writes the FINISH event to the
// status file. It returns that event.
//
// A job that cannot be set up or started still ends with a FINISH event
// (EXIT, with the reason in detail). Run returns an error only when the
// launch is incomplete or the status file cannot be written.
func Run(l *api.Launch) (*api.Event, error) {
	return run(l, hooks{})
}

// hooks lets ShepherdMain act when the job's process has started, and
// tell the job's run that the limits file changed.
type hooks struct {
	started    func(pid int)
	reload     <-chan struct{}
	limitsFile string // what reload means to read (LimitsFile)
	killFile   string // why the worker terminates the job (KillFile)
	// tree: the shepherd is a child subreaper (ShepherdMain), so every
	// descendant of it is the job's: counted, and killed at the end.
	tree bool
	// kernelMem: the job's cgroup holds its memory limit (GoKernelMemByte).
	kernelMem bool
	// result and usage: the worker's records (ResultFD, UsageFD), nil
	// when the shepherd was started without them.
	result, usage *os.File
	// background, when set, counts what the run leaves going after it
	// returns (the mail of bsub -B), for a shepherd that takes another
	// job afterwards to wait for.
	background *sync.WaitGroup
}

func run(l *api.Launch, h hooks) (*api.Event, error) {
	if l.GetJob() == nil {
		return nil, errors.New("the launch carries no job")
	}
	if l.GetJobFile() == "" || l.GetStatusFile() == "" {
		return nil, errors.New("the launch names no job file or no status file")
	}
	s := newShepherd(l)
	s.limitsFile = h.limitsFile
	s.usageRec = h.usage
	s.kernelMem = h.kernelMem
	ev := s.run(h)
	if s.term != nil {
		// A job going back to pending (its pre-execution failed) ends
		// without an exit status: bsub waits for the next dispatch.
		s.term.finish(ev, ev.GetType() == api.EventType_FINISH)
	}
	if h.result != nil {
		// The worker's record first: the end it believes.
		b, err := ev.MarshalVT()
		if err == nil {
			err = WriteRecord(h.result, b)
		}
		if err == nil {
			err = h.result.Sync()
		}
		if err != nil {
			return ev, fmt.Errorf("record the job's end for the worker: %w", err)
		}
	}
	// Synced only when it is the sole record: the worker believes its
	// own record, synced above, and looks at the status file only for
	// whether it exists. One fsync less per job.
	if err := writeMessage(l.GetStatusFile(), ev, h.result == nil); err != nil {
		return ev, err
	}
	return ev, nil
}

// setupError is a reason the job could not be started.
type setupError struct {
	exit   int32
	reason api.TermReason
	msg    string
}

func (e *setupError) Error() string { return e.msg }

func setupErrorf(exit int32, format string, args ...any) *setupError {
	return &setupError{exit: exit, msg: fmt.Sprintf(format, args...)}
}

// umaskMu serialises the process-wide umask change around a job's start.
var umaskMu sync.Mutex

// shepherd is the state of one Run.
type shepherd struct {
	l    *api.Launch
	job  *api.Job
	spec *api.JobSpec // the submission with the effective values laid over it
	log  *slog.Logger

	user, home string
	hosts      []*api.HostSlots
	cwd        string
	notes      []string // for the FINISH event's detail

	outShown   string   // -o as the job report names it
	errShown   string   // -e as the job report names it, "" when stderr goes to the output file
	outPath    string   // absolute -o file, "" without -o
	errPath    string   // absolute -e file when separate
	reportPath string   // the file the job report is appended to
	spool      *spooled // output spooled and copied to -o/-e at the end, nil when written directly

	stdin, stdout, stderr *os.File
	relays                []*relay // copying spooled output to the spool files (spoolcap.go)

	term *termRelay // an interactive job's connection to its bsub

	limits     *liveLimits
	limitsFile string
	usageRec   *os.File // the worker's usage record, nil without one
	kernelMem  bool     // the memory limit is the job's cgroup's (GoKernelMemByte)

	ctr *containerRun // the job's container, nil without one (container.go)
}

func newShepherd(l *api.Launch) *shepherd {
	job := l.GetJob()
	s := &shepherd{
		l:    l,
		job:  job,
		spec: mergedSpec(job),
		log:  slog.Default().With("job", lsfout.JobIDString(job)),
	}
	s.limits = newLimits(s.spec)
	s.user, s.home = execUser(s.spec)
	s.hosts = job.GetExecHosts()
	if len(s.hosts) == 0 {
		host := l.GetHost()
		if host == "" {
			host, _ = os.Hostname()
		}
		s.hosts = []*api.HostSlots{{Host: host, Slots: 1}}
	}
	return s
}

// mergedSpec is the job's submission with every field the effective spec
// sets laid over it: the effective values win where they are set, the
// submission fills the rest (the environment in particular, which the
// effective spec may leave out).
func mergedSpec(job *api.Job) *api.JobSpec {
	spec := &api.JobSpec{}
	if job.GetSpec() != nil {
		spec = job.GetSpec().CloneVT()
	}
	eff := job.GetEffective()
	if eff == nil {
		return spec
	}
	e := eff.CloneVT()
	e.Env, e.ResReq, e.Hosts = nil, nil, nil
	merge(spec, e)
	if len(spec.Env) == 0 {
		spec.Env = eff.GetEnv()
	}
	if len(eff.GetResReq()) > 0 {
		spec.ResReq = eff.GetResReq()
	}
	if len(eff.GetHosts()) > 0 {
		spec.Hosts = eff.GetHosts()
	}
	return spec
}

func (s *shepherd) run(h hooks) *api.Event {
	began := time.Now()
	var old int
	if m := s.spec.GetUmask(); m != 0 {
		umaskMu.Lock()
		old = syscall.Umask(int(m & 0o777))
	}
	restoreUmask := func() {
		if s.spec.GetUmask() != 0 {
			syscall.Umask(old)
			umaskMu.Unlock()
		}
	}
	var cmd *osexec.Cmd
	err := s.setup()
	if err == nil {
		// The pre-execution commands (the profile's, then the job's own
		// -E), with the job's environment, directory and output files.
		for _, pre := range chain(s.spec.GetPreExecChain(), s.spec.GetPreExec()) {
			if code := s.hook(pre, s.stdout, s.stderr); code != 0 {
				restoreUmask()
				s.closeFiles()
				s.endRelays(relayDrain)
				return s.preExecFailed(code)
			}
		}
	}
	if err == nil {
		cmd = s.command()
		err = startCmd(cmd)
	}
	restoreUmask()
	if err != nil {
		return s.failed(err, began)
	}
	// The job holds its own copies of its standard files now.
	s.closeFiles()

	pid := cmd.Process.Pid
	startTime := time.Now()
	s.writeStart(pid, startTime)
	if h.background != nil {
		h.background.Add(1)
	}
	go func() {
		if h.background != nil {
			defer h.background.Done()
		}
		s.mailStart()
	}()
	if h.started != nil {
		h.started(pid)
	}

	e := newEnforcer(pid, s.log)
	if s.term != nil {
		s.term.started(pid, func() {
			// bsub went away (its user interrupted it, or its terminal
			// closed): hang the job up as a closed terminal would.
			e.terminate(api.TermReason_TERM_OWNER, "the interactive bsub went away; the job was hung up",
				terminateInterval, syscall.SIGHUP, syscall.SIGKILL)
		})
	}
	grace := time.Duration(s.l.GetKillGraceMs()) * time.Millisecond
	if grace <= 0 {
		grace = defaultKillGrace
	}
	s.armRunLimit(e, startTime, grace)
	if h.reload != nil {
		go func() {
			for {
				select {
				case <-e.stop:
					return
				case <-h.reload:
					s.reloadLimits(e, startTime, grace)
				}
			}
		}()
	}
	s.armDeadline(e, grace)
	root := 0
	if h.tree {
		root = os.Getpid()
	}
	samp := newSampler(pid, root)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.watch(samp, e, min(grace, terminateInterval))
	}()

	// The job ends with its top process; what it left running in its
	// process group is killed (SIGKILL) before the top process is reaped,
	// while its pid, the group's id, cannot be reused.
	WaitExited(pid)
	s.endContainer()
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		s.log.Warn("cannot kill what is left of the job", "pgid", pid, "err", err)
	}
	reason, detail := e.end()
	if reason == api.TermReason_TERM_UNKNOWN {
		// Ended by bkill or brequeue: the worker said why before its
		// first signal.
		reason = readKillReason(h.killFile)
	}
	wg.Wait()
	if root > 0 {
		// The job's processes outside its group: killed too, and reaped.
		killTree(samp, pid)
	}
	_ = cmd.Wait() // the status is in cmd.ProcessState
	s.endRelays(relayDrain)

	ev := s.event(time.Now())
	ev.Pid = int32(pid)
	ev.TermReason = reason
	if detail != "" {
		s.notes = append(s.notes, detail)
	}
	usage := samp.summary()
	if ps := cmd.ProcessState; ps != nil {
		ws, _ := ps.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			ev.Signal = int32(ws.Signal())
			ev.ExitStatus = 128 + int32(ws.Signal())
		default:
			ev.ExitStatus = int32(ps.ExitCode())
		}
		s.containerNote(ev)
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			cpu := (ru.Utime.Nano() + ru.Stime.Nano()) / 1e6
			usage.CpuTimeMs = max(usage.CpuTimeMs, cpu)
			// ru_maxrss (KB) counts the memory the child shared with the
			// shepherd between os/exec's vfork and exec: it tells about
			// the job only when it exceeds the shepherd's own peak.
			var self syscall.Rusage
			if syscall.Getrusage(syscall.RUSAGE_SELF, &self) == nil && ru.Maxrss > self.Maxrss {
				usage.MaxMemKb = max(usage.MaxMemKb, ru.Maxrss)
			}
		}
	}
	ev.Usage = usage
	ev.CpuTimeMs = usage.CpuTimeMs
	ev.State = api.JobState_DONE
	if ev.ExitStatus != 0 {
		ev.State = api.JobState_EXIT
	}
	if posts := chain(s.spec.GetPostExecChain(), s.spec.GetPostExec()); len(posts) > 0 {
		s.postExec(posts, ev)
	}
	ev.Detail = strings.Join(s.notes, "; ")
	s.appendReport(ev, startTime)
	return ev
}

// WaitExited waits until process pid (a child) has ended, without reaping
// it: its pid, and so its group's id, cannot be reused meanwhile.
func WaitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}

// chain is the commands to run: the layered chain when the configuration
// set one, else the job's own command.
func chain(layered []string, own string) []string {
	if len(layered) > 0 {
		return layered
	}
	if own != "" {
		return []string{own}
	}
	return nil
}

// preExitAbort is the pre-exec exit code that makes the job exit instead
// of being retried (LSB_EXIT_PRE_ABORT).
const preExitAbort = 99

// hook runs a pre- or post-execution command under /bin/sh -c, as the job
// runs, and returns its exit code (128+signal when killed).
func (s *shepherd) hook(command string, stdout, stderr *os.File, extraEnv ...string) int {
	cmd := osexec.Command("/bin/sh", "-c", command)
	cmd.Dir = s.cwd
	cmd.Env = append(s.environ(), extraEnv...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err := cmd.Run()
	if err == nil {
		return 0
	}
	var ee *osexec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	s.log.Warn("run hook", "command", command, "err", err)
	return 127
}

// preExecFailed ends a job whose pre-exec failed: exit 99 makes the job
// exit; any other code sends it back to pending to be dispatched again
// (a PEND_AGAIN event the controller acts on).
func (s *shepherd) preExecFailed(code int) *api.Event {
	ev := s.event(time.Now())
	if code == preExitAbort {
		ev.State = api.JobState_EXIT
		ev.ExitStatus = int32(code)
		ev.Detail = fmt.Sprintf("The job's pre-exec command exited with %d (LSB_EXIT_PRE_ABORT): the job exits", code)
		return ev
	}
	ev.Type = api.EventType_PEND_AGAIN
	ev.State = api.JobState_PEND
	ev.ExitStatus = int32(code)
	ev.Detail = fmt.Sprintf("The job's pre-exec command exited with non-zero status (exit code %d)", code)
	return ev
}

// postExec runs bsub -Ep after the job, its output appended to the job's
// output file, and notes how it went (bhist's POST_DONE / POST_ERR).
func (s *shepherd) postExec(commands []string, ev *api.Event) {
	out, err := os.OpenFile(s.reportPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		out = nil
	} else {
		defer out.Close()
	}
	code := 0
	for _, command := range commands {
		c := s.hook(command, out, out,
			fmt.Sprintf("LSB_JOBEXIT_STAT=%d", ev.ExitStatus<<8),
			"LS_EXEC_T=END")
		if c != 0 && code == 0 {
			code = c
		}
	}
	if code == 0 {
		s.notes = append(s.notes, "POST_DONE: post-exec command done successfully")
	} else {
		s.notes = append(s.notes, fmt.Sprintf("POST_ERR: post-exec command exited with exit code %d", code))
	}
}

// event is a FINISH event for the job with what is known so far.
func (s *shepherd) event(t time.Time) *api.Event {
	return &api.Event{
		JobId:      s.job.GetJobId(),
		ArrayIndex: s.job.GetArrayIndex(),
		Time:       t.UnixNano(),
		Type:       api.EventType_FINISH,
		ExecHome:   s.home,
		ExecCwd:    s.cwd,
	}
}

// startCmd starts the job, retrying briefly on ETXTBSY: a child that
// another goroutine forks while the job file is being written holds the
// file open for writing until it execs.
func startCmd(cmd *osexec.Cmd) error {
	var err error
	for try := 0; try < 20; try++ {
		if err = cmd.Start(); !errors.Is(err, syscall.ETXTBSY) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
		*cmd = osexec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
			Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, SysProcAttr: cmd.SysProcAttr}
	}
	return err
}

// failed ends a job that could not be started: the reason goes to the job's
// stderr (when that is open) and the FINISH event, and the job report is
// appended as for any other end.
func (s *shepherd) failed(err error, began time.Time) *api.Event {
	var se *setupError
	if !errors.As(err, &se) {
		se = startError(err, s.l.GetJobFile())
	}
	s.log.Warn("the job could not be started", "err", se.msg)
	if s.stderr != nil {
		fmt.Fprintf(s.stderr, "%s. Job not started.\n", se.msg)
	}
	s.closeFiles()
	s.endRelays(relayDrain)
	ev := s.event(time.Now())
	ev.State = api.JobState_EXIT
	ev.ExitStatus = se.exit
	ev.TermReason = se.reason
	ev.Usage = &api.ResourceUsage{}
	s.notes = append(s.notes, se.msg)
	ev.Detail = strings.Join(s.notes, "; ")
	s.appendReport(ev, began)
	return ev
}

// startError turns an error of exec.Cmd.Start into a shell-style exit code.
func startError(err error, jobFile string) *setupError {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "chdir" {
		return &setupError{exit: exitSetup, reason: api.TermReason_TERM_CWD_NOTEXIST,
			msg: fmt.Sprintf("cannot change to the working directory: %v", pe.Err)}
	}
	switch {
	case errors.Is(err, syscall.ENOENT):
		return setupErrorf(exitNotFound, "cannot run job file %s: its interpreter was not found (%v)", jobFile, err)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.ENOEXEC), errors.Is(err, syscall.EPERM),
		errors.Is(err, syscall.ETXTBSY), errors.Is(err, syscall.EISDIR):
		return setupErrorf(exitCannotExec, "cannot run job file %s: %v", jobFile, err)
	}
	return setupErrorf(exitSetup, "cannot start the job: %v", err)
}

func (s *shepherd) closeFiles() {
	for _, f := range []*os.File{s.stdin, s.stdout, s.stderr} {
		if f != nil {
			f.Close()
		}
	}
	s.stdin, s.stdout, s.stderr = nil, nil, nil
}

// writeStart records that the job's process runs.
func (s *shepherd) writeStart(pid int, t time.Time) {
	if s.l.GetStartFile() == "" {
		return
	}
	ev := &api.Event{
		JobId:      s.job.GetJobId(),
		ArrayIndex: s.job.GetArrayIndex(),
		Time:       t.UnixNano(),
		Type:       api.EventType_START,
		State:      api.JobState_RUN,
		Pid:        int32(pid),
		Hosts:      s.hosts,
		ExecHome:   s.home,
		ExecCwd:    s.cwd,
	}
	if err := writeMessage(s.l.GetStartFile(), ev, false); err != nil {
		s.log.Error("cannot write the start file", "err", err)
	}
}

// watch samples the job's resource usage until the job ends: it rewrites
// the usage file and enforces the memory and CPU limits.
func (s *shepherd) watch(samp *sampler, e *enforcer, interval time.Duration) {
	usageFile := s.l.GetStatusFile() + ".usage"
	timer := time.NewTimer(firstSample)
	defer timer.Stop()
	var lastWrite time.Time
	for {
		select {
		case <-e.stop:
			return
		case <-timer.C:
		}
		now := time.Now()
		u := samp.sample(now)
		reapZombies(samp, samp.pgid)
		if now.Sub(lastWrite) >= usageInterval {
			if err := writeMessage(usageFile, u, false); err != nil {
				s.log.Warn("cannot write the usage file", "err", err)
			}
			if s.usageRec != nil {
				b, err := u.MarshalVT()
				if err == nil {
					err = WriteRecord(s.usageRec, b)
				}
				if err != nil {
					s.log.Warn("cannot write the worker's usage record", "err", err)
				}
			}
			lastWrite = now
		}
		memLimit, memHard := s.limits.memory()
		cpuLimitMs := s.limits.cpuMs()
		// LSF kills at the memory limit only when lsf.conf says so or the
		// limit is hard (-M N!); otherwise it is the job's RLIMIT_RSS alone.
		// Where the job's cgroup holds the limit, the kernel enforces it.
		if memLimit > 0 && u.MemKb > memLimit && !s.kernelMem && (memHard || s.l.GetMemlimitEnforce() || s.l.GetJobMemlimit()) {
			detail := fmt.Sprintf("TERM_MEMLIMIT: the job used %d KB, over its memory limit of %d KB", u.MemKb, memLimit)
			if memHard {
				e.terminate(api.TermReason_TERM_MEMLIMIT, detail, interval, syscall.SIGKILL)
			} else {
				e.terminate(api.TermReason_TERM_MEMLIMIT, detail, interval, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL)
			}
		}
		// -v, -p, -T: the job's virtual memory and its process and thread
		// counts; LSF's TERMINATE action (SIGINT, SIGTERM, SIGKILL).
		if lim := s.spec.GetSwapLimitKb(); lim > 0 && u.SwapKb > lim {
			e.terminate(api.TermReason_TERM_SWAP,
				fmt.Sprintf("TERM_SWAP: the job used %d KB of virtual memory, over its swap limit of %d KB", u.SwapKb, lim),
				interval, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL)
		}
		if lim := s.spec.GetProcessLimit(); lim > 0 && u.Nprocs > lim {
			e.terminate(api.TermReason_TERM_PROCESSLIMIT,
				fmt.Sprintf("TERM_PROCESSLIMIT: the job ran %d processes, over its limit of %d", u.Nprocs, lim),
				interval, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL)
		}
		if lim := s.spec.GetThreadLimit(); lim > 0 && u.Nthreads > lim {
			e.terminate(api.TermReason_TERM_THREADLIMIT,
				fmt.Sprintf("TERM_THREADLIMIT: the job ran %d threads, over its limit of %d", u.Nthreads, lim),
				interval, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL)
		}
		if cpuLimitMs > 0 && u.CpuTimeMs > cpuLimitMs {
			e.terminate(api.TermReason_TERM_CPULIMIT,
				fmt.Sprintf("TERM_CPULIMIT: the job used %d seconds of CPU time, over its limit of %d", u.CpuTimeMs/1000, cpuLimitMs/1000),
				interval, syscall.SIGXCPU, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL)
		}
		timer.Reset(sampleInterval)
	}
}

// appendReport appends LSF's job report to the job's output file (or the
// spool file of a job without -o); with -N it mails it instead when it can
// (see mail.go).
func (s *shepherd) appendReport(ev *api.Event, start time.Time) {
	if s.spool != nil {
		s.deliverSpool(ev, start)
		return
	}
	if s.reportPath == "" && !s.spec.GetNotifyEnd() {
		return
	}
	report := s.report(ev, start)
	// -N mails every report, -Ne only an exited job's; the others go to the
	// output file as without mail.
	if s.mailIt(ev) && s.mailReport(report) || s.reportPath == "" {
		return
	}
	text := "\n" + strings.Repeat("-", 60) + "\n" + report
	f, err := os.OpenFile(s.reportPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.log.Warn("cannot append the job report", "file", s.reportPath, "err", err)
	}
}

// mailIt reports whether the job's report goes by mail: -N mails every
// report, -Ne only an exited job's.
func (s *shepherd) mailIt(ev *api.Event) bool {
	return s.spec.GetNotifyEnd() && (!s.spec.GetNotifyExitOnly() || ev.GetState() == api.JobState_EXIT)
}

// merge merges src into dst as proto.Merge does, by decoding src's
// encoding into dst, with the generated code: the shepherd then never
// builds protobuf-go's reflection tables, a tenth of a short job's
// shepherd. Encoding a valid message cannot fail, nor decoding what was
// just encoded.
func merge(dst, src *api.JobSpec) {
	b, err := src.MarshalVT()
	if err == nil {
		err = dst.UnmarshalVT(b)
	}
	if err != nil {
		panic(fmt.Sprintf("merge job specs: %v", err))
	}
}

// report is LSF's job report of the ended job, naming the files as they
// were resolved.
func (s *shepherd) report(ev *api.Event, start time.Time) string {
	job := s.job.CloneVT()
	job.StartTime = start.UnixNano()
	job.ExecHosts = s.hosts
	job.ExecHome, job.ExecCwd = s.home, s.cwd
	// The report names the files as they were resolved.
	eff := s.spec.CloneVT()
	eff.Env = nil
	eff.OutputFile, eff.ErrorFile = s.outShown, s.errShown
	job.Effective = eff
	if job.Spec == nil {
		job.Spec = eff
	} else {
		job.Spec.Env = nil
		job.Spec.OutputFile, job.Spec.ErrorFile = s.outShown, s.errShown
	}
	host := s.l.GetHost()
	if host == "" {
		host = s.hosts[0].GetHost()
	}
	return lsfout.JobReport(job, ev, s.l.GetClusterName(), s.l.GetClusterAdmin(), host)
}

// enforcer sends the job's process group the signals of the limits, and
// remembers which limit ended the job. Signals stop once the job has been
// reaped, so a reused process group id is never hit.
type enforcer struct {
	pgid int
	log  *slog.Logger
	stop chan struct{}

	mu     sync.Mutex
	ended  bool
	reason api.TermReason
	detail string
	timers []*time.Timer
}

func newEnforcer(pgid int, log *slog.Logger) *enforcer {
	return &enforcer{pgid: pgid, log: log, stop: make(chan struct{})}
}

// after runs f after d unless the job has ended by then; the timer may be
// stopped early (nil when the job has ended).
func (e *enforcer) after(d time.Duration, f func()) *time.Timer {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return nil
	}
	t := time.AfterFunc(max(d, 0), f)
	e.timers = append(e.timers, t)
	return t
}

// kill signals the job's process group; false once the job has ended.
func (e *enforcer) kill(sig syscall.Signal) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return false
	}
	if err := syscall.Kill(-e.pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		e.log.Warn("cannot signal the job", "signal", sig, "err", err)
	}
	return true
}

// terminate starts a termination sequence, sigs interval apart, unless one
// has started already: the first limit reached is the job's exit reason.
// A stopped job is continued after the first signal so that it can act on
// it.
func (e *enforcer) terminate(reason api.TermReason, detail string, interval time.Duration, sigs ...syscall.Signal) {
	e.mu.Lock()
	if e.ended || e.reason != api.TermReason_TERM_UNKNOWN {
		e.mu.Unlock()
		return
	}
	e.reason, e.detail = reason, detail
	e.mu.Unlock()
	e.log.Info("terminating the job", "reason", reason.String())
	go func() {
		for i, sig := range sigs {
			if i > 0 {
				t := time.NewTimer(interval)
				select {
				case <-e.stop:
					t.Stop()
					return
				case <-t.C:
				}
			}
			if !e.kill(sig) {
				return
			}
			if i == 0 && sig != syscall.SIGKILL {
				e.kill(syscall.SIGCONT)
			}
		}
	}()
}

// end marks the job as reaped and returns the limit that ended it.
func (e *enforcer) end() (api.TermReason, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.ended {
		e.ended = true
		close(e.stop)
		for _, t := range e.timers {
			t.Stop()
		}
	}
	return e.reason, e.detail
}

// MergedSpec is the spec the shepherd runs a job by (its submission with
// the effective values laid over it): the worker reads the run limit and
// deadline it enforces itself from it when the job has a cgroup.
func MergedSpec(job *api.Job) *api.JobSpec { return mergedSpec(job) }
