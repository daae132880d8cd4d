package worker

// blaunch's tasks of a job that runs in a container: on the job's first
// host, where its shepherd runs the job's podman, docker or nvidia-docker
// container, each runs inside that container, through the runtime's
// exec, as the job's user, so that it sees the job's image, binds and
// environment (LSF_PM_TASKID added). On any other host of the job, and
// on every host for apptainer and enroot (whose containers are the job's
// processes, with nothing to exec into), a task is started from the same
// image on its own (containerhost.go).

import (
	"fmt"

	"xce/lib/api/rpc"
	"xce/lib/container"
)

// containerTaskArgv wraps a task's argv for the job's container when the
// job runs here in one, or for a container of the task's own when the
// job runs in one elsewhere (hc then names it); argv as it is otherwise.
func (w *Worker) containerTaskArgv(ts *rpc.TaskStart, argv []string) ([]string, *hostContainer, error) {
	k := jobKey{ts.JobId, ts.Index}
	w.mu.Lock()
	p := w.jobs[k]
	var rt container.Runtime
	if p != nil {
		rt = p.ctr
	}
	w.mu.Unlock()
	if rt == "" {
		if ts.Container == "" {
			return argv, nil, nil
		}
		if p == nil {
			return w.hostContainerArgv(ts, argv)
		}
		// Apptainer and enroot keep no container to exec into: the job's
		// command is a process started from the image. A task on the
		// job's first host is started from the image in the same way.
		if sp, err := container.Parse(ts.Container); err == nil && !sp.Runtime.OCI() {
			return w.hostContainerArgv(ts, argv)
		}
		return argv, nil, nil
	}
	cli := runtimeCLI(rt, ts.Env)
	if cli == "" {
		return nil, nil, fmt.Errorf("the job runs in a %s container, and %s is not installed on this host", rt, rt)
	}
	a := container.TaskArgs(rt, w.cfg.ClusterName, k.id, k.idx, int(ts.Uid), int(ts.Gid), ts.Cwd, argv)
	a[0] = cli
	return a, nil, nil
}
