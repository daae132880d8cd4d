package worker

// blaunch's tasks of a container job on a host other than the job's
// first: the job's container lives where its shepherd runs, so a task
// here gets a container of its own from the same image, run as the
// job's user (the task's process is the runtime's CLI, started as any
// task: its subreaper, its session, the job's cgroup on this host),
// with the task's working directory bound and its environment, the
// cgroup parent the job's cgroup here (a root runtime's), named
// xce-<cluster>-<job>[-<index>]-t<task> and labelled as a job's
// container (and xce.task), so that the sweep finds it. Podman's and
// docker's run --rm remove it when the task ends; a task killed before
// its CLI could do so has it removed by name when it has ended
// (removeContainerNamed), and a worker restarted meanwhile sweeps it.
// The profile's @script options run here as the job's user, as the
// shepherd runs them on the first host.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"xce/lib/api/rpc"
	"xce/lib/container"
)

// hostTaskScriptTimeout bounds an @script of the options for a task's
// container.
const hostTaskScriptTimeout = 30 * time.Second

// hostContainer is a task's own container on this host.
type hostContainer struct {
	rt   container.Runtime
	cli  string // the runtime's CLI, from the task's PATH
	name string
}

// hostContainerArgv wraps a task's argv for a container of its own here
// when its job runs in a container elsewhere (ts.Container); nil when
// the task runs as it is.
func (w *Worker) hostContainerArgv(ts *rpc.TaskStart, argv []string) ([]string, *hostContainer, error) {
	sp, err := container.Parse(ts.Container)
	if err != nil {
		return nil, nil, fmt.Errorf("the job's container: %w", err)
	}
	env := taskEnv(ts)
	img, err := sp.ResolveImage(container.EnvLookup(env))
	if err != nil {
		return nil, nil, fmt.Errorf("the job's container: %w", err)
	}
	cli := runtimeCLI(sp.Runtime, env)
	if cli == "" {
		return nil, nil, fmt.Errorf("the job runs in a %s container, and %s is not installed on this host", sp.Runtime, sp.Runtime)
	}
	if ts.Cwd == "" || strings.ContainsAny(ts.Cwd, ":,") {
		return nil, nil, fmt.Errorf("the task's working directory %q cannot be bound into its container", ts.Cwd)
	}
	uid, gid := int(ts.Uid), int(ts.Gid)
	var cred *syscall.Credential
	var groups []int
	if uid != os.Geteuid() {
		g, err := supplementaryGroups(ts.User)
		if err != nil {
			return nil, nil, fmt.Errorf("the job's user's groups: %w", err)
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: g}
		for _, x := range g {
			groups = append(groups, int(x))
		}
	}
	opts, err := sp.ExpandOptions(func(script string) (string, error) { return runScriptAs(script, ts.Cwd, env, cred) })
	if err != nil {
		return nil, nil, fmt.Errorf("the job's container: %w", err)
	}
	j := &container.Job{
		Cluster: w.cfg.ClusterName, Host: w.cfg.Host, JobID: ts.JobId, Index: ts.Index, Task: ts.TaskId,
		UID: uid, GID: gid, Groups: groups, Rootless: uid != 0,
		Cwd: ts.Cwd, Env: env, Image: img, Options: opts, Command: argv,
	}
	if w.cg != nil && uid == 0 {
		j.CgroupParent = w.cg.RuntimeParent(ts.JobId, ts.Index)
	}
	a, err := container.Build(sp, j)
	if err != nil {
		return nil, nil, fmt.Errorf("the task's container: %w", err)
	}
	a[0] = cli
	var hc *hostContainer
	if sp.Runtime.OCI() {
		hc = &hostContainer{rt: sp.Runtime, cli: cli, name: container.TaskName(w.cfg.ClusterName, ts.JobId, ts.Index, ts.TaskId)}
	}
	return a, hc, nil
}

// runScriptAs runs an @script of the options as cred (nil: as the
// worker) in dir with env, and returns what it printed.
func runScriptAs(script, dir string, env []string, cred *syscall.Credential) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hostTaskScriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out := &cappedBuffer{max: 64 << 10}
	errb := &cappedBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = out, errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s did not end within %s", script, hostTaskScriptTimeout)
	}
	if err != nil {
		if msg := strings.TrimSpace(errb.b.String()); msg != "" {
			return "", fmt.Errorf("%s: %v: %s", script, err, msg)
		}
		return "", fmt.Errorf("%s: %w", script, err)
	}
	return out.b.String(), nil
}

// endHostContainer removes a task's container once the task has ended
// (its CLI's --rm did, unless the CLI was killed first), as the user
// whose store holds it.
func (w *Worker) endHostContainer(hc *hostContainer, ts *rpc.TaskStart) {
	if hc == nil {
		return
	}
	// (With the job's settings of the runtime: its configuration and
	// storage.)
	as := &runAs{uid: os.Geteuid(), gid: os.Getegid(), env: append(os.Environ(), containerEnv(taskEnv(ts))...), user: "root"}
	if ts.Uid != 0 && hc.rt == container.Podman {
		a, err := userRunAs(int(ts.Uid))
		if err != nil {
			return
		}
		a.env = append(a.env, containerEnv(taskEnv(ts))...)
		as = a
	}
	w.removeContainerNamed(jobKey{ts.JobId, ts.Index}, hc.rt, hc.cli, hc.name, as)
}

// containerEnv is what of a job's environment points its runtime at its
// configuration (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF, DOCKER_HOST...).
func containerEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "CONTAINERS_") || strings.HasPrefix(kv, "DOCKER_") {
			out = append(out, kv)
		}
	}
	return out
}
