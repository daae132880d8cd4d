package worker

// blaunch's tasks of a job that runs in a container (podman, docker,
// nvidia-docker): on the job's first host, where its shepherd runs the
// job's container, each runs inside that container, through the
// runtime's exec, as the job's user, so that it sees the job's image,
// binds and environment (LSF_PM_TASKID added). On any other host of the
// job a task gets a container of its own from the same image
// (containerhost.go).

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
		if p == nil && ts.Container != "" {
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
