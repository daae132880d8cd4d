package worker

// The sweep of left containers when the worker starts (issue 34's "no
// orphans"): a container of this cluster and host (its labels, lib/
// container's ListArgs) whose job the worker does not watch and whose
// job has no live shepherd here is left over from before, whatever
// happened (the host restarted, the job ended or was requeued while
// the worker was down, its directory was cleaned): it is removed. A job
// whose shepherd still lives keeps its container: the controller is
// about to hand it back (Reattach), and if it has ended by then, finish
// removes the container as for any job whose shepherd went first.
//
// It runs in the background, each runtime's listing bounded by
// sweepListTimeout and each removal by removeContainerTimeout, so that a
// runtime that hangs leaves containers behind (logged) but holds up
// nothing else.

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"os/exec"
	"syscall"
	"time"

	"xce/lib/container"
)

// sweepListTimeout bounds one runtime's listing of the host's containers.
var sweepListTimeout = 30 * time.Second

// sweepRuntimes are the runtimes whose root store the worker sweeps: those
// that keep containers by name (docker's wrappers share docker's store).
var sweepRuntimes = []container.Runtime{container.Podman, container.Docker}

// SweepContainers removes the containers of this host's jobs that no job
// here runs any more, for each runtime installed on the host; it returns
// when done (callers run it in a goroutine).
func (w *Worker) SweepContainers() {
	for _, rt := range sweepRuntimes {
		if _, err := exec.LookPath(string(rt)); err != nil {
			continue
		}
		w.sweepRuntime(rt, nil)
		if rt == container.Podman {
			w.sweepUsers() // rootless stores (sweepuser.go)
		}
	}
}

// sweepRuntime sweeps root's store of rt, or as's (a rootless podman's
// user): it says whether the listing worked and how many of the
// containers it found are kept.
func (w *Worker) sweepRuntime(rt container.Runtime, as *runAs) (listed bool, kept int) {
	args := container.ListArgs(rt, w.cfg.ClusterName, w.cfg.Host)
	ctx, cancel := context.WithTimeout(context.Background(), sweepListTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	as.apply(cmd)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	errb := &cappedBuffer{max: 4096}
	cmd.Stderr = errb
	out, err := cmd.Output()
	switch {
	case ctx.Err() != nil:
		slog.Warn("the container runtime did not list this host's containers in time; left containers are not removed",
			"runtime", rt, "user", as.name(), "timeout", sweepListTimeout)
		return false, 0
	case err != nil:
		// No daemon (docker), no store yet: nothing of ours to sweep.
		slog.Debug("cannot list this host's containers", "runtime", rt, "user", as.name(), "err", err, "output", errb.b.String())
		return false, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name := string(bytes.TrimSpace(sc.Bytes()))
		id, idx, task, ok := container.ParseTaskName(w.cfg.ClusterName, name)
		if !ok {
			continue
		}
		k := jobKey{id, idx}
		if task == 0 && w.keepsContainer(k) || task > 0 && w.runsTask(taskKey{k, task}) {
			kept++
			continue
		}
		slog.Info("removing a container no job runs in any more", "runtime", rt, "user", as.name(), "name", name, "job", id, "index", idx)
		w.removeContainerNamed(k, rt, "", name, as)
	}
	return true, kept
}

// runsTask says whether task tk (a blaunch task of a job whose first
// host is another, in a container of its own: containerhost.go) runs
// here.
func (w *Worker) runsTask(tk taskKey) bool {
	w.tmu.Lock()
	defer w.tmu.Unlock()
	_, ok := w.taskTable().running[tk]
	return ok
}

// keepsContainer says whether job k may still need its container here:
// the worker watches it, or its shepherd lives.
func (w *Worker) keepsContainer(k jobKey) bool {
	w.mu.Lock()
	_, watched := w.jobs[k]
	w.mu.Unlock()
	if watched {
		return true
	}
	sp, _ := w.readPids(k)
	return sp > 0 && shepherdAlive(sp, -1)
}
