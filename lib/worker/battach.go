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
// The command's whole standard input comes with the request and its
// output goes back when it ends, within battachTimeout and battachMaxOut:
// a one-shot exchange, not a terminal.

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

// Battach runs req's shell (an absolute path, /bin/sh when empty) in the
// container of job req.JobId[req.Index] on this host, as the job's user.
func (w *Worker) Battach(ctx context.Context, req *rpc.BattachRequest) *rpc.BattachReply {
	reply := &rpc.BattachReply{Id: req.Id}
	fail := func(format string, a ...any) *rpc.BattachReply {
		reply.Error = fmt.Sprintf(format, a...)
		return reply
	}
	name := jobName(req.JobId, req.Index)
	shell := req.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	if !filepath.IsAbs(shell) {
		return fail("%s: the shell must be an absolute path", shell)
	}
	k := jobKey{req.JobId, req.Index}
	w.mu.Lock()
	p := w.jobs[k]
	running := p != nil && !p.killing
	w.mu.Unlock()
	if !running {
		return fail("Job <%s> does not run on this host", name)
	}
	l, err := w.readLaunch(req.JobId, req.Index)
	if err != nil {
		return fail("Job <%s>: %v", name, err)
	}
	job := l.GetJob()
	spec := jobexec.MergedSpec(job)
	value := jobContainer(job)
	if value == "" {
		return fail("Job <%s> does not run in a container", name)
	}
	rt := jobRuntime(job)
	if rt == "" {
		sp, _ := container.Parse(value)
		what := "its runtime"
		if sp != nil {
			what = string(sp.Runtime)
		}
		return fail("Job <%s>: %s has no container to attach to (the job's processes are its container)", name, what)
	}
	uid, gid := jobUID(spec), int(spec.GetGid())
	if uid == os.Geteuid() {
		gid = os.Getegid()
	}
	env := spec.GetEnv()
	cli := runtimeCLI(rt, env)
	if cli == "" {
		return fail("Job <%s>: the container runtime %s is not installed on this host", name, rt)
	}
	args := container.ExecArgs(rt, w.cfg.ClusterName, req.JobId, req.Index, uid, gid, []string{shell})
	ctx, cancel := context.WithTimeout(ctx, BattachTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, args[1:]...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.Stdin = bytes.NewReader(req.Stdin)
	var out, errb cappedBuffer
	out.max, errb.max = battachMaxOut, battachMaxOut
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if uid != os.Geteuid() {
		groups, err := supplementaryGroups(spec.GetUser())
		if err != nil {
			slog.Warn("supplementary groups", "user", spec.GetUser(), "err", err)
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	slog.Info("battach", "job", req.JobId, "index", req.Index, "by_uid", req.Uid, "runtime", rt, "shell", shell)
	err = cmd.Run()
	reply.Stdout, reply.Stderr = out.b.Bytes(), errb.b.Bytes()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fail("Job <%s>: the command did not end within %s; killed", name, BattachTimeout)
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			reply.ExitCode = 128 + int32(ws.Signal())
		} else {
			reply.ExitCode = int32(ee.ExitCode())
		}
	case err != nil:
		return fail("Job <%s>: cannot run %s: %v", name, rt, err)
	}
	return reply
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
