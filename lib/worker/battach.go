package worker

// battach: a command in a running job's container, for its owner (the
// controller checked who asks). The worker names the container itself,
// from the job it runs (container.Name of the cluster and job), and runs
// the runtime's exec as the job's user (uid, gid, the user's groups) with
// the job's own environment, so that the user's runtime (a rootless
// podman's store) is the one asked and the command gets no more than the
// job has; inside the container it runs as the job's uid:gid. The command
// inside is in the container's cgroup, below the job's, as LSF puts
// battach's shell in the job's cgroup.
//
// Without a terminal, the command's whole standard input comes with the
// request and its output goes back when it ends, within BattachTimeout
// and battachMaxOut: a one-shot exchange. With one (battach's standard
// input is a terminal), it is a session under a pseudo-terminal whose
// frames go both ways as they come (battachtty.go).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"xce/lib/api/rpc"
	"xce/lib/container"
	jobexec "xce/lib/exec"
)

const (
	// BattachTimeout bounds one battach command, runtime included.
	BattachTimeout = 4 * time.Minute
	// battachMaxOut caps each of its standard output and error.
	battachMaxOut = 1 << 20
)

// battachRun is what runs battach's command: the runtime's CLI, its
// arguments' parts, and as whom.
type battachRun struct {
	cli, shell string
	rt         container.Runtime
	uid, gid   int
	env        []string
	cred       *syscall.Credential // nil: as the worker itself
	name       string              // the job, as LSF's messages name it
}

// battachPrepare checks req and finds what runs its command; the error
// is the message for the caller.
func (w *Worker) battachPrepare(req *rpc.BattachRequest) (*battachRun, string) {
	name := jobName(req.JobId, req.Index)
	shell := req.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	if !filepath.IsAbs(shell) {
		return nil, fmt.Sprintf("%s: the shell must be an absolute path", shell)
	}
	k := jobKey{req.JobId, req.Index}
	w.mu.Lock()
	p := w.jobs[k]
	running := p != nil && !p.killing
	w.mu.Unlock()
	if !running {
		return nil, fmt.Sprintf("Job <%s> does not run on this host", name)
	}
	l, err := w.readLaunch(req.JobId, req.Index)
	if err != nil {
		return nil, fmt.Sprintf("Job <%s>: %v", name, err)
	}
	job := l.GetJob()
	spec := jobexec.MergedSpec(job)
	value := jobContainer(job)
	if value == "" {
		return nil, fmt.Sprintf("Job <%s> does not run in a container", name)
	}
	rt := jobRuntime(job)
	if rt == "" {
		sp, _ := container.Parse(value)
		what := "its runtime"
		if sp != nil {
			what = string(sp.Runtime)
		}
		return nil, fmt.Sprintf("Job <%s>: %s has no container to attach to (the job's processes are its container)", name, what)
	}
	r := &battachRun{shell: shell, rt: rt, uid: jobUID(spec), gid: int(spec.GetGid()), env: spec.GetEnv(), name: name}
	if r.uid == os.Geteuid() {
		r.gid = os.Getegid()
	}
	if r.cli = runtimeCLI(rt, r.env); r.cli == "" {
		return nil, fmt.Sprintf("Job <%s>: the container runtime %s is not installed on this host", name, rt)
	}
	if r.uid != os.Geteuid() {
		groups, err := supplementaryGroups(spec.GetUser())
		if err != nil {
			slog.Warn("supplementary groups", "user", spec.GetUser(), "err", err)
		}
		r.cred = &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.gid), Groups: groups}
	}
	return r, ""
}

// Battach runs req's shell (an absolute path, /bin/sh when empty) in the
// container of job req.JobId[req.Index] on this host, as the job's user.
func (w *Worker) Battach(ctx context.Context, req *rpc.BattachRequest) *rpc.BattachReply {
	reply := &rpc.BattachReply{Id: req.Id}
	fail := func(format string, a ...any) *rpc.BattachReply {
		reply.Error = fmt.Sprintf(format, a...)
		return reply
	}
	r, msg := w.battachPrepare(req)
	if msg != "" {
		return fail("%s", msg)
	}
	args := container.ExecArgs(r.rt, w.cfg.ClusterName, req.JobId, req.Index, r.uid, r.gid, []string{r.shell})
	ctx, cancel := context.WithTimeout(ctx, BattachTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.cli, args[1:]...)
	cmd.Env = r.env
	cmd.Dir = "/"
	cmd.Stdin = bytes.NewReader(req.Stdin)
	var out, errb cappedBuffer
	out.max, errb.max = battachMaxOut, battachMaxOut
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: r.cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	slog.Info("battach", "job", req.JobId, "index", req.Index, "by_uid", req.Uid, "runtime", r.rt, "shell", r.shell)
	err := cmd.Run()
	reply.Stdout, reply.Stderr = out.b.Bytes(), errb.b.Bytes()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fail("Job <%s>: the command did not end within %s; killed", r.name, BattachTimeout)
	case errors.As(err, &ee):
		reply.ExitCode = exitStatus(ee.ProcessState)
	case err != nil:
		return fail("Job <%s>: cannot run %s: %v", r.name, r.rt, err)
	}
	return reply
}

// exitStatus is a process's end as a shell reports it (128+N for signal
// N).
func exitStatus(st *os.ProcessState) int32 {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(st.ExitCode())
}

// jobName is "12" or "12[3]", as LSF's messages name a job.
func jobName(id int64, idx int32) string {
	if idx == 0 {
		return fmt.Sprint(id)
	}
	return fmt.Sprintf("%d[%d]", id, idx)
}

// lookPathIn finds an executable name in path (a job's PATH), "" when
// there is none.
func lookPathIn(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// cappedBuffer keeps the first max bytes written to it.
type cappedBuffer struct {
	b   bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
