package elim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config is what a Runner needs.
type Config struct {
	// Dir holds the elims (elim_dir); "" runs none.
	Dir string
	// StaleAfter is how long a reported value counts without being
	// reported again (elim_stale_after); <= 0: DefaultStaleAfter.
	StaleAfter time.Duration
	// Known says whether the configuration defines a resource; nil
	// accepts every name.
	Known func(name string) bool
	// Rescan is how often the directory is read again for new elims;
	// <= 0: a minute.
	Rescan time.Duration
	// MinBackoff and MaxBackoff bound the wait before an elim that
	// exited is started again (doubling from MinBackoff, reset when it
	// ran longer than MaxBackoff); <= 0: 1 s and 1 min.
	MinBackoff, MaxBackoff time.Duration
	Log                    *slog.Logger
}

// DefaultStaleAfter is elim_stale_after's default.
const DefaultStaleAfter = 60 * time.Second

// Runner runs the elims of one directory and keeps their latest values.
type Runner struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	vals    map[string]value
	running map[string]bool // elims started, by path
	warned  map[string]bool // skipped elims and unknown resources, logged once
}

type value struct {
	v  string
	at time.Time
}

// New returns a Runner; Run starts it.
func New(cfg Config) *Runner {
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	if cfg.Rescan <= 0 {
		cfg.Rescan = time.Minute
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = time.Minute
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	return &Runner{cfg: cfg, log: log.With("elim_dir", cfg.Dir), vals: map[string]value{},
		running: map[string]bool{}, warned: map[string]bool{}}
}

// Values are the values reported, by resource name: "" for one not
// reported again within the stale age before now (lsload shows "-",
// select[] finds no value); nil when nothing was ever reported.
func (r *Runner) Values(now time.Time) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.vals) == 0 {
		return nil
	}
	out := make(map[string]string, len(r.vals))
	for name, v := range r.vals {
		if now.Sub(v.at) > r.cfg.StaleAfter {
			out[name] = ""
			continue
		}
		out[name] = v.v
	}
	return out
}

// Run starts the directory's elims and every one added later, until ctx
// ends; it returns when they have all stopped.
func (r *Runner) Run(ctx context.Context) {
	if r.cfg.Dir == "" {
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(r.cfg.Rescan)
	defer t.Stop()
	for {
		for _, path := range r.scan() {
			wg.Go(func() { r.keep(ctx, path) })
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// scan returns the elims of the directory not started yet that may run.
func (r *Runner) scan() []string {
	if err := safe(r.cfg.Dir, true); err != nil {
		r.once("dir", "elims not run", "err", err)
		return nil
	}
	ents, err := os.ReadDir(r.cfg.Dir)
	if err != nil {
		r.once("dir", "elims not run", "err", err)
		return nil
	}
	var out []string
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "elim.") {
			continue
		}
		path := filepath.Join(r.cfg.Dir, e.Name())
		if r.running[path] {
			continue
		}
		if err := safe(path, false); err != nil {
			r.onceLocked("skip "+path, "elim not run", "elim", path, "err", err)
			continue
		}
		r.running[path] = true
		out = append(out, path)
	}
	return out
}

// safe checks that path is root's, writable by no one else, and not a
// symlink; a file must also be executable.
func safe(path string, dir bool) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link", path)
	case dir && !fi.IsDir():
		return fmt.Errorf("%s is not a directory", path)
	case !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case !ok || st.Uid != 0:
		return fmt.Errorf("%s is not owned by root", path)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s is writable by its group or others", path)
	case !dir && fi.Mode().Perm()&0o100 == 0:
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// keep runs one elim until ctx ends, restarting it with a backoff.
func (r *Runner) keep(ctx context.Context, path string) {
	wait := r.cfg.MinBackoff
	for ctx.Err() == nil {
		if err := safe(path, false); err != nil {
			// Changed or removed since the scan: a later scan may start
			// it again.
			r.once("skip "+path, "elim not run", "elim", path, "err", err)
			r.mu.Lock()
			delete(r.running, path)
			r.mu.Unlock()
			return
		}
		start := time.Now()
		err := r.runOnce(ctx, path)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > r.cfg.MaxBackoff {
			wait = r.cfg.MinBackoff
		}
		r.log.Warn("elim exited; restarting", "elim", path, "err", err, "after", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, r.cfg.MaxBackoff)
	}
}

// runOnce runs the elim and reads its reports until it exits.
func (r *Runner) runOnce(ctx context.Context, path string) error {
	cmd := exec.CommandContext(ctx, path)
	cmd.Dir = r.cfg.Dir
	cmd.Stdin = nil
	cmd.Stderr = nil
	// Its own process group, so that stopping it stops what it started
	// (a script's sleep holds the pipe open otherwise).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for sc.Scan() {
		rep, err := Parse(sc.Text())
		if err != nil {
			r.log.Warn("malformed elim report ignored", "elim", path, "err", err)
			continue
		}
		r.store(rep, time.Now())
	}
	if err := sc.Err(); err != nil {
		r.log.Warn("elim output unreadable", "elim", path, "err", err)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	err = cmd.Wait()
	if err == nil {
		err = errors.New("exit status 0")
	}
	return err
}

// store keeps a report's values of the resources the configuration
// defines.
func (r *Runner) store(rep Report, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range sortedNames(rep) {
		if r.cfg.Known != nil && !r.cfg.Known(name) {
			r.onceLocked("res "+name, "elim reports a resource not defined in the configuration; ignored", "resource", name)
			continue
		}
		r.vals[name] = value{rep[name], now}
	}
}

func sortedNames(rep Report) []string {
	return slices.Sorted(maps.Keys(rep))
}

func (r *Runner) once(key, msg string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onceLocked(key, msg, args...)
}

func (r *Runner) onceLocked(key, msg string, args ...any) {
	if r.warned[key] {
		return
	}
	r.warned[key] = true
	r.log.Warn(msg, args...)
}
