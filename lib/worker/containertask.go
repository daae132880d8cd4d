package worker

// blaunch's tasks of a job that runs in a container (podman, docker,
// nvidia-docker): each runs inside the job's own container, through the
// runtime's exec, as the job's user, so that it sees the job's image,
// binds and environment (LSF_PM_TASKID added). The container lives on
// the job's first host, where its shepherd runs it; a task on another
// host of such a job is refused at launch, with the reason, rather than
// run outside the image (a container per host is not made yet).

import (
	"fmt"

	"xce/lib/container"
)

// containerTaskArgv wraps a task's argv for the job's container when job
// k runs here in one; argv as it is otherwise.
func (w *Worker) containerTaskArgv(k jobKey, uid, gid int, cwd string, env, argv []string) ([]string, error) {
	w.mu.Lock()
	p := w.jobs[k]
	var rt container.Runtime
	if p != nil {
		rt = p.ctr
	}
	w.mu.Unlock()
	if rt == "" {
		return argv, nil
	}
	cli := runtimeCLI(rt, env)
	if cli == "" {
		return nil, fmt.Errorf("the job runs in a %s container, and %s is not installed on this host", rt, rt)
	}
	a := container.TaskArgs(rt, w.cfg.ClusterName, k.id, k.idx, uid, gid, cwd, argv)
	a[0] = cli
	return a, nil
}

// containerTaskHosts refuses the hosts other than this one for a job
// that runs here in a container.
func (w *Worker) containerTaskHosts(k jobKey, hosts []string) error {
	w.mu.Lock()
	p := w.jobs[k]
	ctr := p != nil && p.ctr != ""
	w.mu.Unlock()
	if !ctr {
		return nil
	}
	for _, h := range hosts {
		if h != w.cfg.Host {
			return fmt.Errorf("host %s: the tasks of a job in a container run in its container, on its first host (%s) only", h, w.cfg.Host)
		}
	}
	return nil
}
