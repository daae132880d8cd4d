package exec

// A job of an application profile with a container (lib/container): the
// runtime's CLI is the job's top process, run by the shepherd as the
// job's user like any job, with the job's command inside the container.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"xce/lib/api"
	"xce/lib/container"
)

const (
	// scriptTimeout bounds an @script of the options; scriptOutputMax
	// its output.
	scriptTimeout   = 30 * time.Second
	scriptOutputMax = 64 << 10
	// removeTimeout bounds the removal of the job's container at its
	// end: a runtime that hangs does not hold the job's end.
	removeTimeout = 30 * time.Second
	// exitRuntime is the code docker and podman exit with when they
	// could not run the container at all (no such image, a bad option).
	exitRuntime = 125
)

// containerRun is a job's container, prepared at setup.
type containerRun struct {
	spec *container.Spec
	job  *container.Job
	cli  string // the runtime's CLI, from the job's PATH
	// driver is the profile's exec_driver, nil for none: its starter
	// runs the runtime's command line (driver.go).
	driver *container.ExecDriver
}

// prepareContainer makes the job's container ready to run when its
// profile has one: the runtime's CLI found, the image resolved, the
// options' scripts run. A failure is the job's setup error.
func (s *shepherd) prepareContainer() error {
	value := s.spec.GetContainer()
	if value == "" {
		return nil
	}
	sp, err := container.Parse(value)
	if err != nil {
		return setupErrorf(exitSetup, "cannot run the job's container: %v", err)
	}
	env := s.environ()
	lookup := container.EnvLookup(env)
	img, err := sp.ResolveImage(lookup)
	if err != nil {
		return setupErrorf(exitSetup, "cannot run the job's container: %v", err)
	}
	var driver *container.ExecDriver
	if v := s.spec.GetExecDriver(); v != "" && sp.Runtime.OCI() {
		if driver, err = container.ParseExecDriver(v); err != nil {
			return setupErrorf(exitSetup, "cannot run the job's container: %v", err)
		}
	}
	path, _ := lookup("PATH")
	cli, err := lookPath(string(sp.Runtime), path)
	switch {
	case driver != nil:
		// The starter runs the runtime, as its own user may find it.
		cli = string(sp.Runtime)
	case err != nil:
		return setupErrorf(exitNotFound, "cannot run the job's container: the container runtime %s is not installed on this host (%v)", sp.Runtime, err)
	}
	opts, err := sp.ExpandOptions(func(script string) (string, error) { return s.runOptionsScript(script, env) })
	if err != nil {
		return setupErrorf(exitSetup, "cannot run the job's container: %v", err)
	}
	jobDir := filepath.Dir(s.l.GetJobFile())
	if !filepath.IsAbs(jobDir) {
		jobDir, _ = filepath.Abs(jobDir)
	}
	for _, dir := range []string{s.cwd, jobDir} {
		// -v SRC:DST and --mount SRC:DST split at ':'; apptainer's
		// --bind at ',' too.
		if strings.ContainsAny(dir, ":,") {
			return setupErrorf(exitSetup, "cannot run the job's container: directory %s holds ':' or ',', which %s's binds cannot take", dir, sp.Runtime)
		}
	}
	groups, _ := os.Getgroups()
	rootless := os.Geteuid() != 0
	if driver != nil && driver.User != "" {
		rootless = driver.User != "root"
	}
	j := &container.Job{
		Cluster:      s.l.GetClusterName(),
		Host:         s.l.GetHost(),
		JobID:        s.job.GetJobId(),
		Index:        s.job.GetArrayIndex(),
		UID:          os.Getuid(),
		GID:          os.Getgid(),
		Groups:       groups,
		Rootless:     rootless,
		Cwd:          s.cwd,
		Binds:        []string{jobDir},
		Env:          env,
		CgroupParent: runtimeCgroupParent(ownJobCgroup(s.job.GetJobId(), s.job.GetArrayIndex()), s.l.GetRuntimeCgroupParent()),
		Stdin:        s.spec.GetInputFile() != "",
		Image:        img,
		Options:      opts,
	}
	if j.Host == "" {
		j.Host = s.hosts[0].GetHost()
	}
	for _, h := range s.hosts {
		if h.GetHost() == j.Host {
			for _, g := range h.GetGpus() {
				j.GPUs = append(j.GPUs, int(g))
			}
		}
	}
	if sp.Runtime.OCI() {
		j.Ulimits = s.ulimits()
	}
	s.ctr = &containerRun{spec: sp, job: j, cli: cli, driver: driver}
	return nil
}

// lookPath finds a program in path (the job's PATH), as the job's shell
// would.
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH=%s", name, path)
}

// runOptionsScript runs an @script of the options on this host, as the
// job's user, in the job's directory and environment, and returns what
// it printed: LSF runs it as its administrator, whom the user's
// directories did not let write what the script makes for the job.
func (s *shepherd) runOptionsScript(script string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	cmd := osexec.CommandContext(ctx, script)
	cmd.Dir, cmd.Env = s.cwd, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedBuffer{b: &out, n: scriptOutputMax}, &limitedBuffer{b: &errb, n: 4096}
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("did not end within %s", scriptTimeout)
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg != "" {
			return "", fmt.Errorf("%v: %s", err, msg)
		}
		return "", err
	}
	return out.String(), nil
}

// limitedBuffer keeps the first n bytes written to it and drops the
// rest.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// ulimits are the job's per-process limits (bsub -F, -D, -S, -C, -M) as
// the runtime's --ulimit: soft the job's, hard the host's (which the
// container may not exceed), -1 for unlimited.
func (s *shepherd) ulimits() []container.Ulimit {
	var out []container.Ulimit
	list := s.rlimitList()
	if list == "" {
		return nil
	}
	names := map[byte]string{'F': "fsize", 'D': "data", 'S': "stack", 'C': "core", 'M': "rss"}
	for _, item := range strings.Split(list, ",") {
		letter, val, _ := strings.Cut(item, "=")
		kb, err := strconv.ParseInt(val, 10, 64)
		res, known := rlimitNames[letter[0]]
		if err != nil || !known {
			continue
		}
		var lim unix.Rlimit
		if unix.Getrlimit(res, &lim) != nil {
			continue
		}
		hard := int64(-1)
		if lim.Max != unix.RLIM_INFINITY {
			hard = int64(lim.Max)
		}
		soft := kb * 1024
		if hard >= 0 {
			soft = min(soft, hard)
		}
		out = append(out, container.Ulimit{Name: names[letter[0]], Soft: soft, Hard: hard})
	}
	return out
}

// containerCmd is the job's process in its container: inner (the job as
// it would run on the host) becomes the command inside. A command line
// that cannot be built fails the job's start (Cmd.Err).
func (s *shepherd) containerCmd(inner *osexec.Cmd) *osexec.Cmd {
	j := *s.ctr.job
	j.Command = append([]string{inner.Path}, inner.Args[1:]...)
	argv, err := container.Build(s.ctr.spec, &j)
	if err != nil {
		return &osexec.Cmd{Path: s.ctr.cli, Args: []string{s.ctr.cli}, Err: fmt.Errorf("build the container's command line: %w", err)}
	}
	if s.ctr.driver != nil {
		return s.driverCmd(argv) // driver.go
	}
	return &osexec.Cmd{Path: s.ctr.cli, Args: argv}
}

// endContainer removes the job's container, once the CLI that ran it
// has ended, before what is left of the job is killed: a CLI killed
// before it could remove it (bkill, a limit) leaves the container, and
// its runtime's own clean-up, which the kill would cut short. The
// removal is bounded by removeTimeout.
func (s *shepherd) endContainer() {
	if s.ctr == nil || s.ctr.driver != nil {
		// (A driver's container is its starter's, whose runtime the
		// job's user may not reach: the worker removes it, as root.)
		return
	}
	args := container.RemoveArgs(s.ctr.spec.Runtime, s.ctr.job.Cluster, s.ctr.job.JobID, s.ctr.job.Index)
	if args == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	// A container whose CLI was just killed may still be "stopping" in
	// the runtime's records, which refuses once and takes it a moment
	// later.
	for try := 1; ; try++ {
		cmd := osexec.CommandContext(ctx, s.ctr.cli, args[1:]...)
		cmd.Env = s.ctr.job.Env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		out, err := cmd.CombinedOutput()
		if err == nil || bytes.Contains(out, []byte("No such container")) {
			return
		}
		if try == 3 || ctx.Err() != nil {
			s.log.Warn("cannot remove the job's container", "runtime", s.ctr.spec.Runtime, "err", err,
				"output", strings.TrimSpace(string(out)))
			return
		}
		time.Sleep(time.Duration(try) * 200 * time.Millisecond)
	}
}

// containerNote says, in the FINISH event's detail, why a job whose
// runtime could not run its container ended.
func (s *shepherd) containerNote(ev *api.Event) {
	if s.ctr == nil || ev.GetSignal() != 0 {
		return
	}
	rt := s.ctr.spec.Runtime
	switch {
	case rt.OCI() && ev.GetExitStatus() == exitRuntime:
		s.notes = append(s.notes, fmt.Sprintf("the container runtime %s could not run the container of image %s (exit code %d; its error is in the job's output)",
			rt, s.ctr.job.Image, exitRuntime))
	case (rt == container.Apptainer || rt == container.Singularity) && ev.GetExitStatus() == 255:
		s.notes = append(s.notes, fmt.Sprintf("the container runtime %s could not run the container of image %s (exit code 255; its error is in the job's output)",
			rt, s.ctr.job.Image))
	}
}

// runtimeCgroupParent is the container's --cgroup-parent: the worker's
// word (lib/cgroup's RuntimeParent: the v2 path on a v2 host, the v1
// one on v1 and hybrid hosts), where the shepherd is in its job's cgroup
// (own, ownJobCgroup); own where the worker said nothing (an older
// worker); "" when the shepherd is not in its job's cgroup (the worker
// could not make one: a container under it would not be the job's).
func runtimeCgroupParent(own, fromWorker string) string {
	if own == "" || fromWorker == "" {
		return own
	}
	return fromWorker
}

// ownJobCgroup is the job's cgroup as a runtime's --cgroup-parent takes
// it (from the hierarchy's root): the shepherd's own, which the worker
// moved it into before letting it start (v1: the freezer's, the
// hierarchy that tracks the job), "" when the shepherd is not in its
// job's cgroup (the worker could not make one).
func ownJobCgroup(id int64, idx int32) string {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	defer f.Close()
	return jobCgroupIn(f, id, idx)
}

// jobCgroupIn is ownJobCgroup from a /proc/PID/cgroup's text.
func jobCgroupIn(r io.Reader, id int64, idx int32) string {
	// lib/cgroup's JobName; that package stays out of the shepherd.
	want := "job." + strconv.FormatInt(id, 10) + "." + strconv.Itoa(int(idx))
	var v1, v2 string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[1] == "":
			v2 = parts[2]
		case strings.Contains(","+parts[1]+",", ",freezer,"):
			v1 = parts[2]
		}
	}
	for _, p := range []string{v1, v2} {
		if filepath.Base(p) == want {
			return p
		}
	}
	return ""
}
