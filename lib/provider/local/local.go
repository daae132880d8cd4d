// Package local is the built-in "local" provider: each instance is an
// `xced worker` process that the provisioner starts on its own host, with
// the instance's host name and a directory of its own (DIR/rc/INSTANCE,
// the worker's --dir). It is what tests and demos use: a cluster that
// grows and shrinks on one machine.
//
// An instance's worker runs in a session of its own, so it outlives the
// provisioner as a job outlives xced; its process id is kept in its
// directory (worker.pid, written only by this provider, in a directory
// only root or the controller's user can write), and a process is taken
// for the instance's only while its command line still names the
// instance's directory, so that a reused pid is never signalled.
package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"xce/lib/atomicfile"
	"xce/lib/config"
	"xce/lib/provider"
	"xce/lib/rmtree"
)

// Local starts instances as worker processes.
type Local struct {
	// Exe is the xced executable; Dir holds the instances' directories.
	Exe, Dir string
	// Controller is the workers' --controller; TokenFile their
	// --token-file.
	Controller, TokenFile string
	// Args are more flags for each worker (e.g. --load-interval 1s).
	Args []string
	// StopWait is how long Return waits for a worker to stop after
	// SIGTERM before it kills it (default 10 s).
	StopWait time.Duration

	mu     sync.Mutex
	exited map[int]bool // children started by this process that have ended
}

var _ provider.Provider = (*Local)(nil)

func (l *Local) dir(id string) string { return filepath.Join(l.Dir, id) }

// Request starts one worker per instance. An instance whose worker runs
// already (asked again after a restart) is left alone.
func (l *Local) Request(_ context.Context, t *config.Template, insts []provider.Instance) (string, error) {
	if err := os.MkdirAll(l.Dir, 0o711); err != nil {
		return "", fmt.Errorf("local provider: %w", err)
	}
	for _, in := range insts {
		if pid := l.pid(in.ID); pid > 0 {
			continue
		}
		if err := l.start(t, in); err != nil {
			return "", fmt.Errorf("local provider: start the worker of %s: %w", in.Host, err)
		}
	}
	return "local", nil
}

func (l *Local) start(t *config.Template, in provider.Instance) error {
	dir := l.dir(in.ID)
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "worker.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"worker", "--controller", l.Controller, "--token-file", l.TokenFile, "--dir", dir,
		"--name", in.Host, "--slots", strconv.Itoa(max(1, t.Slots)), "--instance", in.ID}
	cmd := exec.Command(l.Exe, append(args, l.Args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	// Its own session: a signal to the provisioner's process group does
	// not reach it; it stops when returned.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	go func() {
		cmd.Wait() // reaped here; Status and Return see it gone
		l.mu.Lock()
		if l.exited == nil {
			l.exited = map[int]bool{}
		}
		l.exited[pid] = true
		l.mu.Unlock()
	}()
	return atomicfile.Write(filepath.Join(dir, "worker.pid"), []byte(strconv.Itoa(pid)+"\n"), 0o600, false)
}

// pid is the running worker of the instance, or 0: none (never started,
// or ended).
func (l *Local) pid(id string) int {
	dir := l.dir(id)
	b, err := os.ReadFile(filepath.Join(dir, "worker.pid"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0
	}
	pid, perr := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || perr != nil || pid <= 1 {
		// Started, and the provisioner killed before it wrote the file,
		// or while it wrote it (a file written before the atomic write
		// may be empty).
		if pid := l.findWorker(dir); pid > 0 {
			return pid
		}
		pid, _ := l.elsewhere(id)
		return pid
	}
	l.mu.Lock()
	gone := l.exited[pid]
	l.mu.Unlock()
	if gone {
		return 0
	}
	// The pid is the instance's worker only while its command line names
	// the instance's directory (a pid reused by another process is not).
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte("\x00"+dir+"\x00")) {
		return 0
	}
	if zombie(pid) {
		return 0
	}
	return pid
}

// alive reports whether pid, a worker this provider found, still runs:
// not reaped by this provider, not a zombie, not gone.
func (l *Local) alive(pid int) bool {
	l.mu.Lock()
	gone := l.exited[pid]
	l.mu.Unlock()
	return !gone && !zombie(pid) && syscall.Kill(pid, 0) == nil
}

// zombie reports whether pid has ended and is not reaped yet: gone.
func zombie(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i > 0 && i+2 < len(st) && st[i+2] == 'Z'
}

// findWorker looks for an instance's worker that runs without its
// worker.pid (the provisioner was killed between starting it and writing
// the file): a process of this provider's user (root, in production:
// no user can make one) whose command line names the instance's
// directory as the worker's --dir. It writes the file for the next
// look; 0 is none.
func (l *Local) findWorker(dir string) int {
	want := []byte("\x00--dir\x00" + dir + "\x00")
	pid := ownProcess(func(_ int, _ string, cmdline []byte) bool { return bytes.Contains(cmdline, want) })
	if pid > 0 {
		if err := atomicfile.Write(filepath.Join(dir, "worker.pid"), []byte(strconv.Itoa(pid)+"\n"), 0o600, false); err != nil {
			slog.Warn("record a found instance worker's pid", "dir", dir, "err", err)
		}
	}
	return pid
}

// ownProcess is the first live process of this provider's user (not a
// zombie) that match accepts, given its pid, its /proc directory and its
// command line; 0 is none.
func ownProcess(match func(pid int, proc string, cmdline []byte) bool) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 {
			continue
		}
		proc := fmt.Sprintf("/proc/%d", pid)
		var st syscall.Stat_t
		if syscall.Stat(proc, &st) != nil || int(st.Uid) != os.Getuid() {
			continue
		}
		cmdline, err := os.ReadFile(proc + "/cmdline")
		// An empty command line is a kernel thread's or a zombie's.
		if err != nil || len(cmdline) == 0 || !match(pid, proc, cmdline) || zombie(pid) || unexecedChild(pid, cmdline) {
			continue
		}
		return pid
	}
	return 0
}

// unexecedChild reports whether pid is a child between fork and exec:
// until it execs, a child shows its parent's command line (a worker
// starting a shepherd looks like a second worker of the same instance for
// a moment).
func unexecedChild(pid int, cmdline []byte) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	if i < 0 {
		return false
	}
	f := bytes.Fields(st[i+1:]) // state, ppid, ...
	if len(f) < 2 {
		return false
	}
	parent, err := os.ReadFile("/proc/" + string(f[1]) + "/cmdline")
	return err == nil && bytes.Equal(parent, cmdline)
}

// elsewhere finds an instance's worker that another provisioner of this
// host started under its own directory: a controller candidate that led
// before a failover (each candidate's local provider keeps its instances
// under its own DIR). It is a process of this provider's user running
// this provider's executable whose command line is `worker ... --dir DIR
// ... --instance ID` with DIR an instance directory named ID and the
// same --controller as this provider's (the candidates' list, the same
// on each); it returns the pid and DIR, or 0 and "".
func (l *Local) elsewhere(id string) (int, string) {
	exe, err := filepath.EvalSymlinks(l.Exe)
	if err != nil {
		return 0, ""
	}
	want := []byte("\x00--instance\x00" + id + "\x00")
	var dir string
	pid := ownProcess(func(_ int, proc string, cmdline []byte) bool {
		if !bytes.Contains(append(cmdline, 0), want) {
			return false
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if len(args) < 2 || args[1] != "worker" {
			return false
		}
		if x, err := os.Readlink(proc + "/exe"); err != nil || x != exe {
			return false
		}
		dir = ""
		controller := ""
		for i, a := range args {
			if a == "--dir" && i+1 < len(args) {
				dir = args[i+1]
			}
			if a == "--controller" && i+1 < len(args) {
				controller = args[i+1]
			}
		}
		// Only this cluster's worker: another cluster on this host (or a
		// test beside this one) may run the same executable with the
		// same instance names.
		return controller == l.Controller && dir != "" && filepath.IsAbs(dir) && filepath.Base(dir) == id && dir != l.dir(id)
	})
	if pid == 0 {
		return 0, ""
	}
	return pid, dir
}

// Status says whether each instance's worker runs.
func (l *Local) Status(_ context.Context, _ string, insts []provider.Instance) ([]provider.Machine, error) {
	out := make([]provider.Machine, 0, len(insts))
	for _, in := range insts {
		m := provider.Machine{Instance: in, Status: provider.Running}
		if l.pid(in.ID) == 0 {
			m.Status = provider.Terminated
			if _, err := os.Stat(filepath.Join(l.dir(in.ID), "worker.pid")); errors.Is(err, os.ErrNotExist) {
				m.Status = provider.Unknown
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// Return stops each instance's worker (SIGTERM, then SIGKILL after
// StopWait) and removes its directory.
func (l *Local) Return(ctx context.Context, insts []provider.Instance) error {
	wait := l.StopWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	var errs []error
	for _, in := range insts {
		_, other := l.elsewhere(in.ID)
		if pid := l.pid(in.ID); pid > 0 {
			// The pid found once is watched: finding it again (a scan of
			// /proc for a worker another provisioner started) every 20 ms
			// is not needed to see it go.
			syscall.Kill(pid, syscall.SIGTERM)
			deadline := time.Now().Add(wait)
			for l.alive(pid) && time.Now().Before(deadline) && ctx.Err() == nil {
				time.Sleep(20 * time.Millisecond)
			}
			if l.alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				for l.alive(pid) && ctx.Err() == nil {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}
		if l.pid(in.ID) > 0 {
			errs = append(errs, fmt.Errorf("local provider: the worker of %s did not stop", in.Host))
			continue
		}
		for _, dir := range []string{l.dir(in.ID), other} {
			if dir == "" {
				continue
			}
			if err := rmtree.RemoveAll(dir); err != nil {
				errs = append(errs, fmt.Errorf("local provider: remove %s: %w", dir, err))
			}
		}
	}
	return errors.Join(errs...)
}

var _ provider.Lender = (*Local)(nil)

// Borrow grants every unit at once: the local provider stands for a
// licence server with tokens to spare (tests and demos).
func (l *Local) Borrow(_ context.Context, _, _ string, n int) (int, error) { return n, nil }

// Giveback takes the units back.
func (l *Local) Giveback(context.Context, string, string, int) error { return nil }
