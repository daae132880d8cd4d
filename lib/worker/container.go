package worker

// A job's container (lib/container): the shepherd runs the runtime's CLI
// as the job and removes the container when the CLI ends. What the
// worker adds is for when the shepherd could not: a shepherd killed
// (kill -9, or the job's cgroup killed at a limit) leaves a stopped
// container behind in a root runtime's store (podman's, docker's), named
// for its job; once such a job has ended, the worker removes it by name
// before it reports the end (so that a new run of the job cannot lose
// its container to the removal), within removeContainerTimeout, so that
// a runtime that hangs holds up that one report and nothing else. A restarted worker does the
// same for the jobs it picked up again (Reattach) when they end.
//
// A rootless podman's containers live in the job user's own store: the
// worker removes them as that user (sweepuser.go).

import (
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"xce/lib/api"
	"xce/lib/container"
	jobexec "xce/lib/exec"
)

// removeContainerTimeout bounds the removal of a job's container, its
// removeTries tries together.
const (
	removeContainerTimeout = 30 * time.Second
	removeTries            = 5
)

// jobRuntime is the runtime of the job's container that leaves records
// behind (podman, docker), "" for any other job.
func jobRuntime(job *api.Job) container.Runtime {
	v := jobContainer(job)
	if v == "" {
		return ""
	}
	sp, err := container.Parse(v)
	if err != nil || !sp.Runtime.OCI() {
		return ""
	}
	return sp.Runtime
}

// jobContainer is the job's CONTAINER value (its application profile's,
// as the layering gave it, else its spec's), "" for none.
func jobContainer(job *api.Job) string {
	if v := job.GetEffective().GetContainer(); v != "" {
		return v
	}
	return jobexec.MergedSpec(job).GetContainer()
}

// runtimeCLI finds the container runtime's program in the job's PATH
// (env; a usual system PATH when it has none), "" when it is not there.
func runtimeCLI(rt container.Runtime, env []string) string {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	return lookPathIn(string(rt), path)
}

// removeContainer removes job k's container, if any is left, once the
// job has ended: from root's store, or as (a rootless podman's user,
// sweepuser.go) from theirs.
func (w *Worker) removeContainer(k jobKey, rt container.Runtime, as *runAs) {
	w.removeContainerNamed(k, rt, "", container.Name(w.cfg.ClusterName, k.id, k.idx), as)
}

// removeContainerNamed removes job k's container called name (the
// job's, or a task's: containerhost.go) with the runtime's CLI cli (""
// finds it on the worker's PATH).
func (w *Worker) removeContainerNamed(k jobKey, rt container.Runtime, cli, name string, as *runAs) {
	args := container.RemoveNameArgs(rt, name)
	var err error
	if cli == "" {
		cli, err = exec.LookPath(args[0])
	}
	if err != nil {
		slog.Warn("cannot remove a job's container: its runtime is not installed here", "job", k.id, "index", k.idx, "runtime", rt)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), removeContainerTimeout)
	defer cancel()
	// A container whose conmon was just killed may still be "stopping"
	// in the runtime's records: podman then refuses once, and takes it
	// a moment later.
	for try := 1; ; try++ {
		cmd := exec.CommandContext(ctx, cli, args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		as.apply(cmd)
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = time.Second
		out, err := cmd.CombinedOutput()
		switch {
		case err == nil || strings.Contains(string(out), "No such container"):
			return
		case ctx.Err() != nil:
			slog.Warn("the container runtime did not remove a job's container in time; left", "job", k.id, "index", k.idx,
				"runtime", rt, "name", args[len(args)-1], "timeout", removeContainerTimeout)
			return
		case try == removeTries:
			slog.Warn("cannot remove a job's container", "job", k.id, "index", k.idx, "runtime", rt, "err", err,
				"output", strings.TrimSpace(string(out)))
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(try) * 200 * time.Millisecond):
		}
	}
}
