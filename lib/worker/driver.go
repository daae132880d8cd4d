package worker

// A container job's exec_driver (LSF's EXEC_DRIVER, lib/container's
// ExecDriver): the worker's part.
//
//   - The starter, when its context user is not the job's: the job's
//     process (blaunch in lib/exec's DriverArg mode) asks for it on the
//     job's task socket; the worker runs it once per run of the job, as
//     the context user, in the job's cgroup, as a task of the job whose
//     output and end go back to the job's process. The starter's path
//     and user come from the job's launch (root's), never from the
//     request; its arguments (the runtime's command line) do, as LSF's
//     starter takes the job's command and environment.
//   - The controller, at each signal the job is sent (bstop, bresume,
//     bkill, limits): `CONTROLLER SIGNAL` (the signal's name, as kill -s
//     takes it: STOP, CONT, TERM, KILL...), before the worker signals
//     the job's cgroup as for any job.
//   - The monitor, every driverMonitorInterval while the job runs here:
//     `MONITOR`. XCE measures the container through the job's cgroup
//     (--cgroup-parent), so the monitor is for the site's own checks:
//     what it prints is logged, and so is its failing.
//
// The controller and the monitor get the job's id and index and the
// container's name and runtime (LSB_JOBID, LSB_JOBINDEX,
// LSB_CONTAINER_NAME, LSB_CONTAINER_RUNTIME) and a system PATH, not the
// job's environment; each is bounded by driverScriptTimeout.
//
// A script run as a user other than the job's is run only when no one
// but root and that user can change it: the file and every directory
// above it (the path as named and as resolved) are owned by root or
// that user and writable by no group or other, but for a sticky
// directory (trustedScript).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/container"
	jobexec "xce/lib/exec"
)

var (
	// driverScriptTimeout bounds one run of a controller or monitor.
	driverScriptTimeout = 30 * time.Second
	// driverMonitorInterval is how often a job's monitor runs.
	driverMonitorInterval = time.Minute
)

// driverPath is the PATH of the controller and monitor.
const driverPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// jobDriver is the exec_driver of a job whose container has one, nil
// for any other job.
func jobDriver(job *api.Job) *container.ExecDriver {
	if jobRuntime(job) == "" {
		return nil
	}
	v := job.GetEffective().GetExecDriver()
	if v == "" {
		v = jobexec.MergedSpec(job).GetExecDriver()
	}
	if v == "" {
		return nil
	}
	d, err := container.ParseExecDriver(v)
	if err != nil {
		slog.Warn("a job's exec_driver is malformed; its scripts are not run", "job", job.JobId, "index", job.ArrayIndex, "err", err)
		return nil
	}
	return d
}

// driverUser is who runs p's driver scripts: the context user, else the
// job's.
type driverUser struct {
	name     string
	uid, gid int
	groups   []uint32
}

func (p *proc) driverUser() (*driverUser, error) {
	name := p.driver.User
	if name == "" || name == p.user {
		return &driverUser{name: p.user, uid: p.uid, gid: p.gid}, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("exec_driver context user %s: %w", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("exec_driver context user %s: uid %q, gid %q", name, u.Uid, u.Gid)
	}
	groups, err := supplementaryGroups(name)
	if err != nil {
		slog.Warn("supplementary groups", "user", name, "err", err)
	}
	return &driverUser{name: name, uid: uid, gid: gid, groups: groups}, nil
}

// trustedScript checks that path may be run as uid by root: no one but
// root and uid can change what runs.
func trustedScript(path string, uid int) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s: not an absolute path", path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	for _, p := range []string{filepath.Clean(path), real} {
		for q := p; ; q = filepath.Dir(q) {
			fi, err := os.Lstat(q)
			if err != nil {
				return err
			}
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok {
				return fmt.Errorf("%s: no owner", q)
			}
			link := fi.Mode()&fs.ModeSymlink != 0
			switch {
			case st.Uid != 0 && int(st.Uid) != uid:
				return fmt.Errorf("%s is owned by uid %d, neither root nor the user who runs it", q, st.Uid)
			case !link && fi.Mode().Perm()&0o022 != 0 && !(q != p && fi.Mode()&fs.ModeSticky != 0):
				// (A sticky directory, /tmp's kind, lets no one else
				// replace what root or the user has in it.)
				return fmt.Errorf("%s is writable by others than its owner (mode %v)", q, fi.Mode())
			}
			if q == "/" {
				break
			}
		}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// driverStarter checks that job k may have its driver's starter run
// now, once per run, and fills in who runs it.
func (w *Worker) driverStarter(k jobKey) (*driverUser, string, error) {
	w.mu.Lock()
	p := w.jobs[k]
	var d *container.ExecDriver
	if p != nil {
		d = p.driver
	}
	switch {
	case p == nil:
		w.mu.Unlock()
		return nil, "", fmt.Errorf("job <%d> is not running on this host", k.id)
	case d == nil:
		w.mu.Unlock()
		return nil, "", fmt.Errorf("job <%d> has no exec_driver", k.id)
	case p.driverStarted:
		w.mu.Unlock()
		return nil, "", fmt.Errorf("job <%d>: its exec_driver's starter has run already", k.id)
	}
	p.driverStarted = true
	w.mu.Unlock()
	u, err := p.driverUser()
	if err != nil {
		return nil, "", err
	}
	if u.uid != p.uid {
		if err := trustedScript(d.Starter, u.uid); err != nil {
			slog.Error("refused to run an exec_driver starter", "job", k.id, "index", k.idx, "user", u.name, "err", err)
			return nil, "", fmt.Errorf("exec_driver starter refused: %w", err)
		}
	}
	return u, d.Starter, nil
}

// driverTaskStart makes ts the driver's starter, as u.
func driverTaskStart(ts *rpc.TaskStart, u *driverUser, starter string) {
	ts.Argv = append([]string{starter}, ts.Argv...)
	ts.Shell = rpc.TaskShell_TASK_SHELL_NONE
	ts.User, ts.Uid, ts.Gid = u.name, uint32(u.uid), uint32(u.gid)
	ts.DriverStarter = true
}

// driverEnv is the controller's and monitor's environment.
func (w *Worker) driverEnv(p *proc) []string {
	return []string{driverPath,
		"LSB_JOBID=" + strconv.FormatInt(p.id, 10),
		"LSB_JOBINDEX=" + strconv.Itoa(int(p.idx)),
		"LSB_CONTAINER_NAME=" + container.Name(w.cfg.ClusterName, p.id, p.idx),
		"LSB_CONTAINER_RUNTIME=" + string(p.ctr),
	}
}

// runDriverScript runs one of p's driver scripts with args, as its
// user, within driverScriptTimeout, and returns what it printed.
func (w *Worker) runDriverScript(p *proc, script string, args ...string) ([]byte, error) {
	u, err := p.driverUser()
	if err != nil {
		return nil, err
	}
	if u.uid != p.uid || u.uid == 0 {
		if err := trustedScript(script, u.uid); err != nil {
			return nil, fmt.Errorf("refused: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), driverScriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, args...)
	cmd.Env, cmd.Dir = w.driverEnv(p), "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if u.uid != os.Geteuid() {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid), Groups: u.groups}
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out := &cappedBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	if ctx.Err() != nil {
		return out.b.Bytes(), fmt.Errorf("did not end within %s; killed", driverScriptTimeout)
	}
	return out.b.Bytes(), err
}

// driverControl runs p's controller for sig, in the background.
func (w *Worker) driverControl(p *proc, sig syscall.Signal) {
	if p.driver == nil || p.driver.Controller == "" {
		return
	}
	name := strings.TrimPrefix(unix.SignalName(sig), "SIG")
	if name == "" {
		name = strconv.Itoa(int(sig))
	}
	go func() {
		out, err := w.runDriverScript(p, p.driver.Controller, name)
		if err != nil {
			slog.Warn("the exec_driver controller failed", "job", p.id, "index", p.idx, "signal", name,
				"controller", p.driver.Controller, "err", err, "output", strings.TrimSpace(string(out)))
		}
	}()
}

// driverMonitor runs p's monitor every driverMonitorInterval until the
// job ends here.
func (w *Worker) driverMonitor(k jobKey, p *proc) {
	if p.driver == nil || p.driver.Monitor == "" {
		return
	}
	go func() {
		t := time.NewTicker(driverMonitorInterval)
		defer t.Stop()
		for range t.C {
			w.mu.Lock()
			running := w.jobs[k] == p
			w.mu.Unlock()
			if !running {
				return
			}
			out, err := w.runDriverScript(p, p.driver.Monitor)
			var ee *exec.ExitError
			switch {
			case err != nil && !errors.As(err, &ee):
				slog.Warn("the exec_driver monitor could not run", "job", k.id, "index", k.idx, "monitor", p.driver.Monitor, "err", err)
			case err != nil:
				slog.Warn("the exec_driver monitor failed", "job", k.id, "index", k.idx, "monitor", p.driver.Monitor,
					"err", err, "output", strings.TrimSpace(string(out)))
			default:
				slog.Debug("exec_driver monitor", "job", k.id, "index", k.idx, "output", strings.TrimSpace(string(out)))
			}
		}
	}()
}
