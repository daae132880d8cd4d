package exec

import (
	"fmt"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"xce/lib/api"
	"xce/lib/gpu"
	"xce/lib/lsfout"
)

// setup prepares everything the job's process needs, in the order that lets
// a failure be reported: working directory, output files (so later errors
// reach the job's stderr), input file, job file and host file.
func (s *shepherd) setup() error {
	if s.spec.GetInteractive() != api.Interactive_BATCH {
		if err := s.dialTerminal(); err != nil {
			s.openSpool()
			return err
		}
	}
	cwd, err := s.workDir()
	if err != nil {
		s.openSpool() // somewhere for the report
		return err
	}
	s.cwd = cwd
	if err := s.openOutputs(); err != nil {
		return err
	}
	if s.term != nil {
		// What no -i, -o or -e redirects is bsub's terminal.
		if err := s.term.open(s.spec.GetInputFile() == "", s.stdout == nil, s.stderr == nil); err != nil {
			return setupErrorf(exitSetup, "cannot set up the interactive job's terminal: %v", err)
		}
		s.stdin = s.term.stdin
		if s.stdout == nil {
			s.stdout = s.term.stdout
		}
		if s.stderr == nil {
			s.stderr = s.term.stderr
		}
	}
	if err := s.openInput(); err != nil {
		return err
	}
	if err := s.writeJobFile(); err != nil {
		return err
	}
	return s.prepareContainer() // container.go
}

func (s *shepherd) vars() pathVars {
	return pathVars{
		jobID:    s.job.GetJobId(),
		index:    s.job.GetArrayIndex(),
		user:     s.user,
		group:    s.spec.GetUserGroup(),
		host:     s.hosts[0].GetHost(),
		project:  s.spec.GetProject(),
		jobGroup: s.spec.GetJobGroup(),
	}
}

// workDir is the job's working directory: -cwd (patterns expanded, relative
// to the submission directory, created when it contains a pattern), else
// the submission directory; /tmp when that is not accessible.
func (s *shepherd) workDir() (string, error) {
	want := s.spec.GetSubmitCwd()
	if c := s.spec.GetCwd(); c != "" {
		want = expandFull(c, s.vars())
		if !filepath.IsAbs(want) {
			base := s.spec.GetSubmitCwd()
			if base == "" {
				base = s.home
			}
			want = filepath.Join(base, want)
		}
		if hasPattern(c) {
			if err := os.MkdirAll(want, 0o777); err != nil {
				s.log.Warn("cannot create the working directory", "dir", want, "err", err)
			}
		}
	}
	if want == "" {
		want = s.home
	}
	err := usableDir(want)
	if err == nil {
		return want, nil
	}
	s.notes = append(s.notes, fmt.Sprintf("working directory %s is not accessible (%v); the job ran in /tmp", want, err))
	s.log.Warn("working directory not accessible, using /tmp", "dir", want, "err", err)
	if terr := usableDir("/tmp"); terr != nil {
		return "", &setupError{exit: exitSetup, reason: api.TermReason_TERM_CWD_NOTEXIST,
			msg: fmt.Sprintf("TERM_CWD_NOTEXIST: neither the working directory %s (%v) nor /tmp (%v) is accessible", want, err, terr)}
	}
	return "/tmp", nil
}

// usableDir checks that dir is a directory the job's user can enter.
func usableDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return syscall.Access(dir, 1) // X_OK
}

// openOutputs opens the job's stdout and stderr: -o (else the spool file)
// and -e (else stdout's file).
func (s *shepherd) openOutputs() error {
	base := s.cwd
	if od := s.spec.GetOutdir(); od != "" {
		od = expandFull(od, s.vars())
		if !filepath.IsAbs(od) {
			od = filepath.Join(s.cwd, od)
		}
		if err := os.MkdirAll(od, 0o777); err != nil {
			s.openSpool()
			return setupErrorf(exitSetup, "cannot create the output directory %s: %v", od, err)
		}
		base = od
	}
	if o := s.spec.GetOutputFile(); o != "" && s.term == nil && !s.l.GetStdoutDirect() {
		return s.openSpooled(base) // spool.go
	} else if o != "" {
		path, shown, err := s.outputPath(o, ".out", base)
		var f *os.File
		if err == nil {
			f, err = openOutput(path, s.spec.GetOutputOverwrite())
		}
		if err != nil {
			s.openSpool()
			return setupErrorf(exitSetup, "cannot open the output file %s: %v", shown, unwrapPath(err))
		}
		s.stdout, s.outPath, s.outShown, s.reportPath = f, path, shown, path
	} else if s.term != nil {
		// Relayed to bsub; no spool file and no job report.
	} else if err := s.openSpool(); err != nil {
		return setupErrorf(exitSetup, "cannot open the spool file %s: %v", s.spoolPath(), unwrapPath(err))
	}
	s.stderr = s.stdout
	if e := s.spec.GetErrorFile(); e != "" {
		path, shown, err := s.outputPath(e, ".err", base)
		if err == nil && path == s.outPath {
			return nil // -e names the -o file: one file for both
		}
		var f *os.File
		if err == nil {
			f, err = openOutput(path, s.spec.GetErrorOverwrite())
		}
		if err != nil {
			return setupErrorf(exitSetup, "cannot open the error file %s: %v", shown, unwrapPath(err))
		}
		s.stderr, s.errPath, s.errShown = f, path, shown
	}
	return nil
}

// spoolPath is where the output of a job without -o goes.
func (s *shepherd) spoolPath() string {
	if p := s.job.GetSpoolOutput(); p != "" {
		return p
	}
	return s.l.GetJobFile() + ".out"
}

// openSpool opens (truncating) the spool file as the job's stdout and the
// report's destination, unless an output file is open already.
func (s *shepherd) openSpool() error {
	if s.stdout != nil {
		return nil
	}
	path := s.spoolPath()
	os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		s.log.Warn("cannot open the spool file", "file", path, "err", err)
		return err
	}
	w := s.relayTo(f)
	s.stdout, s.stderr, s.reportPath = w, w, path
	return nil
}

// relayTo returns what the job writes to for the spool file f: a pipe
// whose output is copied to f within the spool's reserve (spoolcap.go),
// or f itself when no pipe can be made.
func (s *shepherd) relayTo(f *os.File) *os.File {
	w, rl, err := startRelay(f)
	if err != nil {
		s.log.Warn("the job writes to its spool file directly", "err", err)
		return f
	}
	s.relays = append(s.relays, rl)
	return w
}

// outputPath resolves an -o or -e path: %J and %I expanded, relative to
// base; a directory (a path ending in "/", or an existing directory) is
// created and holds <jobid><ext>, or <jobid>_<index><ext> for an array
// element. shown is the path as the job report names it.
func (s *shepherd) outputPath(given, ext, base string) (path, shown string, err error) {
	path, shown, dir := s.resolveOutput(given, ext, base)
	if dir != "" {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return "", strings.TrimSuffix(given, "/"), err
		}
	}
	return path, shown, nil
}

// resolveOutput is outputPath without creating anything: dir is the
// directory to create for the directory form, else "".
func (s *shepherd) resolveOutput(given, ext, base string) (path, shown, dir string) {
	id, idx := s.job.GetJobId(), s.job.GetArrayIndex()
	p := ExpandPattern(given, id, idx)
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(base, full)
	}
	isDir := strings.HasSuffix(p, "/")
	if !isDir {
		if fi, err := os.Stat(full); err == nil && fi.IsDir() {
			isDir = true
		}
	}
	if !isDir {
		return full, p, ""
	}
	name := strconv.FormatInt(id, 10)
	if idx > 0 {
		name += "_" + strconv.Itoa(int(idx))
	}
	name += ext
	return filepath.Join(full, name), strings.TrimSuffix(p, "/") + "/" + name, full
}

func openOutput(path string, overwrite bool) (*os.File, error) {
	flag := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if overwrite {
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	return os.OpenFile(path, flag, 0o666)
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// openInput opens -i (patterns expanded, relative to the working
// directory), else /dev/null.
func (s *shepherd) openInput() error {
	if s.stdin != nil {
		return nil // an interactive job's terminal
	}
	in := s.spec.GetInputFile()
	if in == "" {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return setupErrorf(exitSetup, "cannot open %s: %v", os.DevNull, err)
		}
		s.stdin = f
		return nil
	}
	shown := ExpandPattern(in, s.job.GetJobId(), s.job.GetArrayIndex())
	path := shown
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.cwd, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return setupErrorf(exitSetup, "cannot open the input file %s: %v", shown, unwrapPath(err))
	}
	s.stdin = f
	return nil
}

// jobFileHeader starts the job file of a job given as a command line.
const jobFileHeader = "# LSBATCH: User input\n"

// writeJobFile writes the job script (mode 0700) and the host file next to
// it.
func (s *shepherd) writeJobFile() error {
	path := s.l.GetJobFile()
	text := s.spec.GetCommand()
	if !s.spec.GetCommandIsScript() {
		text = jobFileHeader + text + "\n"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return setupErrorf(exitSetup, "cannot create the job file's directory: %v", err)
	}
	if err := writeFile(path, []byte(text), 0o700); err != nil {
		return setupErrorf(exitSetup, "cannot write the job file %s: %v", path, unwrapPath(err))
	}
	var hosts strings.Builder
	for _, h := range s.hosts {
		for range max(h.GetSlots(), 1) {
			hosts.WriteString(h.GetHost() + "\n")
		}
	}
	if err := writeFile(path+".hostfile", []byte(hosts.String()), 0o644); err != nil {
		return setupErrorf(exitSetup, "cannot write the host file %s.hostfile: %v", path, unwrapPath(err))
	}
	if s.bound() {
		if err := writeFile(path+affinityFileSuffix, []byte(affinityFile(s.hosts)), 0o644); err != nil {
			return setupErrorf(exitSetup, "cannot write the affinity host file %s%s: %v", path, affinityFileSuffix, unwrapPath(err))
		}
	}
	return nil
}

// writeFile writes data to path with exactly mode perm.
func writeFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// command is the job's process: the job file itself when it starts with
// "#!" (the kernel runs its interpreter), else /bin/sh reading it; in its
// own process group.
func (s *shepherd) command() *osexec.Cmd {
	path, _ := filepathAbs(s.l.GetJobFile())
	cmd := &osexec.Cmd{Path: "/bin/sh", Args: []string{"/bin/sh", path}}
	direct := s.spec.GetCommandIsScript() && strings.HasPrefix(s.spec.GetCommand(), "#!")
	if direct {
		cmd = &osexec.Cmd{Path: path, Args: []string{path}}
	}
	if starter := s.spec.GetJobStarter(); starter != "" {
		// The profile's job starter runs the job: %USRCMD stands for it
		// (LSF's JOB_STARTER); without it the job is appended.
		run := "/bin/sh " + shellQuote(path)
		if direct {
			run = shellQuote(path)
		}
		line := strings.ReplaceAll(starter, "%USRCMD", run)
		if !strings.Contains(starter, "%USRCMD") {
			line = starter + " " + run
		}
		cmd = &osexec.Cmd{Path: "/bin/sh", Args: []string{"/bin/sh", "-c", line}}
	}
	if shell := s.spec.GetLoginShell(); shell != "" && s.ctr == nil {
		// -L: the login shell (argv[0] "-name", as login(1) starts one)
		// sets up the environment from the user's profile, then runs the
		// job as it would run otherwise.
		line := "exec " + shellQuote(cmd.Path)
		for _, a := range cmd.Args[1:] {
			line += " " + shellQuote(a)
		}
		cmd = &osexec.Cmd{Path: shell, Args: []string{"-" + filepath.Base(shell), "-c", line}}
	}
	if s.ctr != nil {
		// The job runs inside its container; the runtime's CLI is the
		// job's process (container.go).
		cmd = s.containerCmd(cmd)
	}
	if limits := s.rlimitList(); limits != "" && (s.ctr == nil || !s.ctr.spec.Runtime.OCI()) {
		// (docker and podman set a container's limits themselves:
		// --ulimit.)
		// The job's per-process limits are set by this binary run again
		// (RlimitMain), which then becomes the job.
		if self, err := os.Executable(); err == nil {
			cmd = &osexec.Cmd{Path: self, Args: append([]string{self, RlimitArg, limits, cmd.Path}, cmd.Args...)}
		} else {
			s.notes = append(s.notes, "the per-process limits were not set: "+err.Error())
		}
	}
	cmd.Dir = s.cwd
	cmd.Env = s.environ()
	if s.ctr != nil && s.ctr.driver != nil {
		cmd.Env = append(cmd.Env, driverEnv(s.ctr.job, s.ctr.spec.Runtime)...) // driver.go
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.stdin, s.stdout, s.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.term != nil && s.term.pts != nil {
		// A session of its own (so also a process group whose id is the
		// job's pid) with the pseudo-terminal as controlling terminal.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if fd := s.term.cttyFd(); fd >= 0 {
			cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, fd
		}
	}
	return cmd
}

func filepathAbs(p string) (string, error) {
	if filepath.IsAbs(p) {
		return p, nil
	}
	return filepath.Abs(p)
}

// execUser is the job's user name and home directory: the spec's, else the
// shepherd's own (it already runs as the job's user).
func execUser(spec *api.JobSpec) (name, home string) {
	name, home = spec.GetUser(), spec.GetHome()
	if name != "" && home != "" {
		return name, home
	}
	var u *user.User
	var err error
	if name != "" {
		u, err = user.Lookup(name)
	} else {
		u, err = user.Current()
	}
	if err == nil {
		if name == "" {
			name = u.Username
		}
		if home == "" {
			home = u.HomeDir
		}
	}
	if home == "" {
		home = os.Getenv("HOME")
	}
	return name, home
}

// dropped are the submission variables the job never inherits: those LSF
// never propagates and the job-specific ones it sets afresh (a job submitted
// from inside another job must not see its parent's).
var dropped = map[string]bool{
	"HOME": true, "USER": true, "LOGNAME": true, "PWD": true,
	"LS_JOBPID": true, "LSB_ACCT_MAP": true, "LSB_EXIT_PRE_ABORT": true,
	"LSB_EXIT_REQUEUE": true, "LSB_EVENT_ATTRIB": true, "LSB_HOSTS": true,
	"LSB_INTERACTIVE": true, "LSB_INTERACTIVE_SSH": true, "LSB_INTERACTIVE_TTY": true,
	"LSB_JOBFILENAME": true, "LSB_JOBID": true, "LSB_JOBINDEX": true,
	"LSB_JOBINDEX_END": true, "LSB_JOBINDEX_STEP": true, "LSB_JOBNAME": true,
	"LSB_QUEUE": true, "LSB_MCPU_HOSTS": true, "LSB_DJOB_HOSTFILE": true,
	"LSB_DJOB_NUMPROC": true, "LSB_MAX_NUM_PROCESSORS": true, "LSB_SUB_HOST": true,
	"LSB_EXEC_CLUSTER": true, "LSB_OUTPUTFILE": true, "LSB_ERRORFILE": true,
	"LSB_OUTDIR": true, "LS_SUBCWD": true, "LS_EXECCWD": true, "LSB_CHKFILENAME": true,
	"LSB_CHKPNT_DIR": true, "LSB_JOB_EXECUSER": true, "LSB_UNIXGROUP_INT": true,
	"LSB_PROJECT_NAME": true, "LSB_EFFECTIVE_RSRCREQ": true, "LSB_BATCH_JID": true,
	"LSB_JOBRES_PID": true, "LSB_JOBRES_CALLBACK": true, "LSB_TRAPSIGS": true,
	"LSB_JOBEXIT_STAT": true, "LSB_JOBEXIT_INFO": true, "LSB_JOBPEND": true,
	"LSB_RESTART": true, "LSB_DJOB_RU_INTERVAL": true, "LSB_DJOB_HB_INTERVAL": true,
	"LSB_BIND_CPU_LIST": true, "LSB_AFFINITY_HOSTFILE": true, "LSB_JOBPGIDS": true, "LSB_JOBPIDS": true,
	"LSF_INVOKE_CMD": true, "LS_EXEC_T": true, "LSFUSER": true,
	"XCE_TASK_SOCKET": true, "LSF_PM_TASKID": true,
}

// defaultPath is PATH for a job whose submission environment has none
// (bsub -env none).
const defaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// environ is the job's environment: the submission environment less the
// dropped variables, then LSF's. With -L the login shell builds the
// environment instead: of the submission's only TERM is kept (LSF: -L
// wins over -env).
func (s *shepherd) environ() []string {
	var env []string
	hasPath := false
	login := s.spec.GetLoginShell() != ""
	if login {
		env = append(env, "SHELL="+s.spec.GetLoginShell())
	}
	for _, kv := range s.spec.GetEnv() {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || dropped[name] || login && name != "TERM" {
			continue
		}
		hasPath = hasPath || name == "PATH"
		env = append(env, kv)
	}
	// The application profile's environment (lib/config), over the job's.
	for _, kv := range s.spec.GetEnvOverlay() {
		if name, _, ok := strings.Cut(kv, "="); ok && name != "" && !dropped[name] {
			hasPath = hasPath || name == "PATH"
			env = append(env, kv)
		}
	}
	if !hasPath {
		env = append(env, "PATH="+defaultPath)
	}
	set := func(name, value string) { env = append(env, name+"="+value) }
	job, spec := s.job, s.spec
	id := strconv.FormatInt(job.GetJobId(), 10)
	isArray := job.GetArrayIndex() > 0 || spec.GetArraySpec() != ""

	set("HOME", s.home)
	set("USER", s.user)
	set("LOGNAME", s.user)
	set("PWD", s.cwd)
	set("LSB_JOBID", id)
	set("LSB_BATCH_JID", id)
	set("LSB_JOBINDEX", strconv.Itoa(int(job.GetArrayIndex())))
	if isArray {
		end, step := arrayBounds(job, spec.GetArraySpec())
		set("LSB_JOBINDEX_END", strconv.Itoa(int(end)))
		set("LSB_JOBINDEX_STEP", strconv.Itoa(int(step)))
	}
	set("LSB_JOBNAME", lsfout.DisplayName(&api.Job{Spec: spec, ArrayIndex: job.GetArrayIndex()}))
	set("LSB_QUEUE", spec.GetQueue())
	if job.GetReruns() > 0 {
		// Run again from the beginning after its host failed.
		set("LSB_RESTART", "Y")
	}

	var perSlot, mcpu []string
	nproc := 0
	for _, h := range s.hosts {
		n := int(max(h.GetSlots(), 1))
		nproc += n
		for range n {
			perSlot = append(perSlot, h.GetHost())
		}
		mcpu = append(mcpu, h.GetHost(), strconv.Itoa(n))
	}
	set("LSB_HOSTS", strings.Join(perSlot, " "))
	set("LSB_MCPU_HOSTS", strings.Join(mcpu, " "))
	set("LSB_DJOB_HOSTFILE", s.l.GetJobFile()+".hostfile")
	set("LSB_DJOB_NUMPROC", strconv.Itoa(nproc))
	set("LSB_MAX_NUM_PROCESSORS", strconv.Itoa(max(int(spec.GetMaxTasks()), nproc)))
	set("LSB_SUB_HOST", spec.GetSubmitHost())
	set("LSB_EXEC_CLUSTER", s.l.GetClusterName())
	if s.outPath != "" {
		set("LSB_OUTPUTFILE", s.outPath)
	}
	if s.errPath != "" {
		set("LSB_ERRORFILE", s.errPath)
	} else if spec.GetErrorFile() != "" && s.outPath != "" {
		set("LSB_ERRORFILE", s.outPath) // -e named the -o file
	}
	if od := spec.GetOutdir(); od != "" {
		set("LSB_OUTDIR", expandFull(od, s.vars()))
	}
	set("LS_SUBCWD", spec.GetSubmitCwd())
	set("LS_EXECCWD", s.cwd)
	set("LSB_JOBFILENAME", s.l.GetJobFile())
	set("LSB_CHKFILENAME", s.l.GetJobFile())
	set("LSB_JOB_EXECUSER", s.user)
	if g := s.groupName(); g != "" {
		set("LSB_UNIXGROUP_INT", g)
	}
	if p := spec.GetProject(); p != "" {
		set("LSB_PROJECT_NAME", p)
	}
	if rr := spec.GetResReq(); len(rr) > 0 {
		set("LSB_EFFECTIVE_RSRCREQ", strings.Join(rr, " "))
	}
	pid := strconv.Itoa(os.Getpid())
	set("LS_JOBPID", pid)
	set("LSB_JOBRES_PID", pid)
	set("LSB_EXIT_PRE_ABORT", "99")
	if spec.GetInteractive() != api.Interactive_BATCH {
		set("LSB_INTERACTIVE", "Y")
	}
	set("LSF_INVOKE_CMD", "bsub")
	set("LS_EXEC_T", "START")
	set("LSFUSER", s.user)
	if ts := s.l.GetTaskSocket(); ts != "" {
		set("XCE_TASK_SOCKET", ts) // blaunch's way to the worker (lib/worker/task.go)
	}
	env = append(env, s.bindEnv()...)
	env = append(env, s.instanceEnv()...)
	return append(env, s.gpuEnv()...)
}

// gpuEnv is the environment for the job's GPUs on this host
// (CUDA_VISIBLE_DEVICES ...; lib/gpu.Env); nil without any. It comes
// last, so it wins over what the submission environment had.
func (s *shepherd) gpuEnv() []string {
	var here *api.HostSlots
	for _, h := range s.hosts {
		if h.GetHost() == s.l.GetHost() || s.l.GetHost() == "" {
			here = h
			break
		}
	}
	if here == nil || len(here.GetGpus()) == 0 {
		return nil
	}
	devs := make([]int, len(here.GetGpus()))
	for i, d := range here.GetGpus() {
		devs[i] = int(d)
	}
	r, err := gpu.Parse(s.spec.GetGpu())
	if err != nil {
		r = nil // the default requirement
	}
	return gpu.Env(devs, r, gpu.EnvOptions{Tasks: int(max(here.GetSlots(), 1))})
}

// arrayBounds is the array's largest index and its step: the job's own
// figures, else read from the array part of -J ("[1-10:2,15]": 15, and the
// step of the first range, 2).
func arrayBounds(job *api.Job, arraySpec string) (end, step int32) {
	end, step = job.GetArrayEnd(), job.GetArrayStep()
	for _, elem := range strings.Split(strings.Trim(arraySpec, "[]"), ",") {
		lo, rest, isRange := strings.Cut(elem, "-")
		hi, st, hasStep := strings.Cut(rest, ":")
		if !isRange {
			hi = lo
		}
		if n, err := strconv.Atoi(strings.TrimSpace(hi)); err == nil && job.GetArrayEnd() == 0 {
			end = max(end, int32(n))
		}
		if n, err := strconv.Atoi(strings.TrimSpace(st)); err == nil && hasStep && step == 0 {
			step = int32(n)
		}
	}
	return max(end, job.GetArrayIndex()), max(step, 1)
}

// groupName is the name of the job user's primary group, "" if unknown.
func (s *shepherd) groupName() string {
	gid := int(s.spec.GetGid())
	if s.spec.GetUser() == "" {
		gid = os.Getgid()
	}
	g, err := user.LookupGroupId(strconv.Itoa(gid))
	if err != nil {
		return ""
	}
	return g.Name
}

// shellQuote quotes a word for /bin/sh.
func shellQuote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
