package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// v2Controllers are the controllers a job's v2 cgroup gets where the
// parent has them.
var v2Controllers = []string{"memory", "cpuset", "pids"}

func (m *Manager) initV2(cfg Config, own map[string]string) error {
	parent := cfg.Parent
	if parent == "" {
		parent = own["unified"]
	}
	parent = filepath.Join("/", parent)
	m.parents["unified"] = parent
	base := filepath.Join(m.root, m.base(parent))
	if err := m.mkdirs(m.root, base); err != nil {
		return fmt.Errorf("cannot make cgroups in %s: %w", m.root, err)
	}
	if _, err := os.Stat(filepath.Join(base, "cgroup.freeze")); err != nil {
		return fmt.Errorf("the kernel's cgroup v2 has no freezer (cgroup.freeze): %w", err)
	}
	// Enable what the parent offers down to xce/<cluster>: a cgroup with
	// processes of its own cannot pass controllers on (the kernel's "no
	// internal processes" rule), so where the worker's own cgroup holds
	// the worker, the jobs are tracked and frozen but not measured by
	// controller: run xced in a cgroup of its own (systemd: Delegate=yes).
	avail, _ := os.ReadFile(filepath.Join(m.root, parent, "cgroup.controllers"))
	for _, c := range v2Controllers {
		if !slices.Contains(strings.Fields(string(avail)), c) {
			continue
		}
		ok := true
		for d := filepath.Join(m.root, parent); d != base; {
			if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte("+"+c), 0o644); err != nil {
				ok = false
				break
			}
			rel, _ := filepath.Rel(d, base)
			d = filepath.Join(d, strings.SplitN(rel, "/", 2)[0])
		}
		if ok && os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+"+c), 0o644) == nil {
			m.ctrls = append(m.ctrls, c)
		}
	}
	return nil
}

type v2Job struct {
	m    *Manager
	name string
	dir  string
	cg   *cgroup2.Manager
}

func (m *Manager) groupV2(name string) string {
	return filepath.Join(m.base(m.parents["unified"]), name)
}

func (m *Manager) resourcesV2(lim Limits) *cgroup2.Resources {
	r := &cgroup2.Resources{}
	if lim.MemKB > 0 && m.Has("memory") {
		b, zero := lim.MemKB<<10, int64(0)
		r.Memory = &cgroup2.Memory{Max: &b}
		if _, err := os.Stat(filepath.Join(m.root, m.base(m.parents["unified"]), "memory.swap.max")); err == nil {
			// No swap beyond it: the job cannot swap past its limit.
			r.Memory.Swap = &zero
		}
	}
	if lim.CPUs != nil && m.Has("cpuset") {
		r.CPU = &cgroup2.CPU{Cpus: cpuList(lim.CPUs)}
	}
	if lim.DenyDevices != nil {
		// Everything else allowed: the library's filter reads every
		// rule's numbers, -1 being "any" (nil ones made it panic).
		anyMajor, anyMinor := int64(-1), int64(-1)
		a := specs.LinuxDeviceCgroup{Allow: true, Type: "a", Major: &anyMajor, Minor: &anyMinor, Access: "rwm"}
		r.Devices = []specs.LinuxDeviceCgroup{a}
		for _, d := range lim.DenyDevices {
			r.Devices = append(r.Devices, d.rule())
		}
	}
	return r
}

func (m *Manager) createV2(name string, lim Limits) (Job, error) {
	if old := m.loadV2(name); old != nil {
		if err := old.Remove(); err != nil {
			return nil, fmt.Errorf("cgroup %s exists and cannot be emptied: %w", name, err)
		}
	}
	group := m.groupV2(name)
	cg, err := cgroup2.NewManager(m.root, group, m.resourcesV2(lim))
	if err != nil {
		syscall.Rmdir(filepath.Join(m.root, group))
		return nil, fmt.Errorf("create cgroup %s: %w", group, err)
	}
	return &v2Job{m: m, name: name, dir: filepath.Join(m.root, group), cg: cg}, nil
}

func (m *Manager) loadV2(name string) Job {
	group := m.groupV2(name)
	if _, err := os.Stat(filepath.Join(m.root, group)); err != nil {
		return nil
	}
	cg, err := cgroup2.Load(group, cgroup2.WithMountpoint(m.root))
	if err != nil {
		return nil
	}
	return &v2Job{m: m, name: name, dir: filepath.Join(m.root, group), cg: cg}
}

func (j *v2Job) Path() string           { return j.dir }
func (j *v2Job) Dir(ctrl string) string { return "" }

func (j *v2Job) Add(pid int) error {
	if err := j.cg.AddProc(uint64(pid)); err != nil {
		return fmt.Errorf("move pid %d into %s: %w", pid, j.name, err)
	}
	return nil
}

func (j *v2Job) Pids() ([]int, error) { return procsTree(j.dir) } // a container's cgroup below too (nested.go)

// Freeze waits for the kernel's "frozen 1" in cgroup.events: the
// library returns once cgroup.freeze reads 1, which is only the request.
func (j *v2Job) Freeze() error {
	if err := j.cg.Freeze(); err != nil {
		return err
	}
	for deadline := time.Now().Add(killWaitEmpty); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(j.dir, "cgroup.events"))
		if err != nil {
			return fmt.Errorf("cgroup %s: %w", j.name, err)
		}
		if strings.Contains(string(b), "frozen 1") {
			return nil
		}
	}
	return fmt.Errorf("cgroup %s: not frozen after %v", j.name, killWaitEmpty)
}

func (j *v2Job) Thaw() error { return j.cg.Thaw() }

func (j *v2Job) Signal(sig syscall.Signal, except ...int) (int, error) {
	return signalPids(j.Pids, sig, except)
}

// Kill writes cgroup.kill where the kernel has it (5.14), else freezes,
// kills and thaws (the library's fallback), then waits for it to empty.
func (j *v2Job) Kill() error {
	if _, err := os.Stat(j.dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := j.cg.Kill(); err != nil {
		return fmt.Errorf("kill cgroup %s: %w", j.name, err)
	}
	for deadline := time.Now().Add(killWaitEmpty); ; {
		pids, err := j.Pids()
		if err != nil || len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: %d processes left after cgroup.kill", j.name, len(pids))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Usage reads cpu.stat, and memory.current, memory.peak (Linux 5.19) and
// memory.events where the memory controller is enabled: the library's
// Stat reads every controller's every file.
func (j *v2Job) Usage() (Usage, error) {
	var u Usage
	b, err := os.ReadFile(filepath.Join(j.dir, "cpu.stat"))
	if err != nil {
		return u, fmt.Errorf("cgroup %s: %w", j.name, err)
	}
	if us, ok := keyed(b, "usage_usec"); ok {
		u.CPUTime = time.Duration(us) * time.Microsecond
	}
	if j.m.Has("memory") {
		var e1 error
		u.MemBytes, e1 = readInt(filepath.Join(j.dir, "memory.current"))
		if e1 != nil {
			return u, fmt.Errorf("cgroup %s: %w", j.name, e1)
		}
		if peak, err := readInt(filepath.Join(j.dir, "memory.peak")); err == nil {
			u.MaxBytes = peak
		}
		if ev, err := os.ReadFile(filepath.Join(j.dir, "memory.events")); err == nil {
			u.OOMKills, _ = keyed(ev, "oom_kill")
		}
	}
	u.Pids, err = j.Pids()
	return u, err
}

func (j *v2Job) CPUTime() (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(j.dir, "cpu.stat"))
	if err != nil {
		return 0, err
	}
	us, _ := keyed(b, "usage_usec")
	return time.Duration(us) * time.Microsecond, nil
}

// Resident is memory.stat's anon and file_mapped.
func (j *v2Job) Resident() (int64, error) {
	if !j.m.Has("memory") {
		return 0, errors.New("no memory controller")
	}
	b, err := os.ReadFile(filepath.Join(j.dir, "memory.stat"))
	if err != nil {
		return 0, fmt.Errorf("cgroup %s: %w", j.name, err)
	}
	anon, _ := keyed(b, "anon")
	mapped, _ := keyed(b, "file_mapped")
	return anon + mapped, nil
}

func (j *v2Job) MemLimit() (int64, error) {
	b, err := os.ReadFile(filepath.Join(j.dir, "memory.max"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v := strings.TrimSpace(string(b))
	if v == "max" {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

// EndUsage is Usage less the processes (v2's files are few).
func (j *v2Job) EndUsage() (Usage, error) {
	u, err := j.Usage()
	u.Pids = nil
	return u, err
}

func (j *v2Job) SetMemLimit(kb int64) error {
	if !j.m.Has("memory") {
		return errors.New("no memory controller")
	}
	v := "max"
	if kb > 0 {
		v = strconv.FormatInt(kb<<10, 10)
	}
	if err := os.WriteFile(filepath.Join(j.dir, "memory.max"), []byte(v), 0o644); err != nil {
		return fmt.Errorf("cgroup %s: %w", j.name, err)
	}
	return nil
}

func (j *v2Job) Remove() error {
	if err := j.Kill(); err != nil {
		return err
	}
	var err error
	for i := 0; i < 50; i++ {
		if err = rmTree(j.dir); err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", j.dir, err)
}
