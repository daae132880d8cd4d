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

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func (m *Manager) initV1(cfg Config, own map[string]string) error {
	for _, c := range append(slices.Clone(v1Required), v1Optional...) {
		if _, err := os.Stat(filepath.Join(m.root, c, "cgroup.procs")); err != nil {
			if slices.Contains(v1Required, c) {
				return fmt.Errorf("no cgroup v1 %s controller at %s", c, filepath.Join(m.root, c))
			}
			continue
		}
		parent := cfg.Parent
		if parent == "" {
			p, ok := own[c]
			if !ok {
				continue
			}
			parent = p
		}
		parent = filepath.Join("/", parent)
		top := filepath.Join(m.root, c)
		if err := m.mkdirs(top, filepath.Join(top, m.base(parent))); err != nil {
			if slices.Contains(v1Required, c) {
				return fmt.Errorf("cannot make cgroups in the %s hierarchy: %w", c, err)
			}
			continue
		}
		if c == "cpuset" {
			// A new v1 cpuset holds no CPU until given its parent's.
			if err := inheritCpuset(top, m.base(parent)); err != nil {
				continue
			}
		}
		m.parents[c] = parent
		m.ctrls = append(m.ctrls, c)
	}
	return nil
}

// inheritCpuset fills the empty cpuset.cpus and cpuset.mems of the
// directories of rel (from top) from their parents.
func inheritCpuset(top, rel string) error {
	dir := top
	for _, part := range strings.Split(strings.Trim(rel, "/"), "/") {
		parent := dir
		dir = filepath.Join(dir, part)
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			cur, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return err
			}
			if strings.TrimSpace(string(cur)) != "" {
				continue
			}
			v, err := os.ReadFile(filepath.Join(parent, f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// hierarchy is the subsystems the manager uses, for containerd's cgroup1.
func (m *Manager) hierarchy() ([]cgroup1.Subsystem, error) {
	var subs []cgroup1.Subsystem
	for _, c := range m.ctrls {
		switch c {
		case "freezer":
			subs = append(subs, cgroup1.NewFreezer(m.root))
		case "cpuacct":
			subs = append(subs, cgroup1.NewCpuacct(m.root))
		case "memory":
			subs = append(subs, cgroup1.NewMemory(m.root, cgroup1.OptionalSwap()))
		case "pids":
			subs = append(subs, cgroup1.NewPids(m.root))
		case "cpuset":
			subs = append(subs, cgroup1.NewCpuset(m.root))
		case "devices":
			subs = append(subs, cgroup1.NewDevices(m.root))
		}
	}
	return subs, nil
}

func (m *Manager) pathV1(name string) cgroup1.Path {
	return func(n cgroup1.Name) (string, error) {
		p, ok := m.parents[string(n)]
		if !ok {
			return "", cgroup1.ErrControllerNotActive
		}
		return filepath.Join(m.base(p), name), nil
	}
}

// v1Job is a job's cgroup in every v1 hierarchy the manager uses.
type v1Job struct {
	m    *Manager
	name string
	cg   cgroup1.Cgroup
}

func (m *Manager) resourcesV1(lim Limits) *specs.LinuxResources {
	r := &specs.LinuxResources{}
	if lim.MemKB > 0 && m.Has("memory") {
		b := lim.MemKB << 10
		r.Memory = &specs.LinuxMemory{Limit: &b}
		if m.hasMemsw() {
			// Memory and swap together: the job cannot swap past it.
			s := b
			r.Memory.Swap = &s
		}
	}
	if lim.CPUs != nil && m.Has("cpuset") {
		r.CPU = &specs.LinuxCPU{Cpus: cpuList(lim.CPUs)}
	}
	if lim.DenyDevices != nil && m.Has("devices") {
		for _, d := range lim.DenyDevices {
			r.Devices = append(r.Devices, d.rule())
		}
	}
	return r
}

func (m *Manager) hasMemsw() bool {
	p, ok := m.parents["memory"]
	if !ok {
		return false
	}
	_, err := os.Stat(filepath.Join(m.root, "memory", m.base(p), "memory.memsw.limit_in_bytes"))
	return err == nil
}

func (m *Manager) createV1(name string, lim Limits) (Job, error) {
	j := &v1Job{m: m, name: name}
	if old := m.loadV1(name); old != nil {
		// Left by a worker that stopped before removing it.
		if err := old.Remove(); err != nil {
			return nil, fmt.Errorf("cgroup %s exists and cannot be emptied: %w", j.Path(), err)
		}
	}
	cg, err := cgroup1.New(m.pathV1(name), m.resourcesV1(lim), cgroup1.WithHierarchy(m.hierarchy))
	if err != nil {
		j.cg = cg
		if cg != nil {
			cg.Delete()
		} else {
			j.rmdirs()
		}
		return nil, fmt.Errorf("create cgroup %s: %w", j.Path(), err)
	}
	j.cg = cg
	return j, nil
}

func (m *Manager) loadV1(name string) Job {
	if _, err := os.Stat(filepath.Join(m.root, "freezer", m.base(m.parents["freezer"]), name)); err != nil {
		return nil
	}
	cg, err := cgroup1.Load(m.pathV1(name), cgroup1.WithHierarchy(m.hierarchy))
	if err != nil {
		return nil
	}
	return &v1Job{m: m, name: name, cg: cg}
}

func (j *v1Job) Dir(ctrl string) string {
	p, ok := j.m.parents[ctrl]
	if !ok {
		return ""
	}
	return filepath.Join(j.m.root, ctrl, j.m.base(p), j.name)
}

func (j *v1Job) Path() string { return j.Dir("freezer") }

func (j *v1Job) Add(pid int) error {
	if err := j.cg.AddProc(uint64(pid)); err != nil {
		return fmt.Errorf("move pid %d into %s: %w", pid, j.name, err)
	}
	return nil
}

func (j *v1Job) Pids() ([]int, error) {
	return readProcs(filepath.Join(j.Dir("freezer"), "cgroup.procs"))
}

func readProcs(file string) ([]int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids, nil
}

func (j *v1Job) Freeze() error { return j.cg.Freeze() }
func (j *v1Job) Thaw() error   { return j.cg.Thaw() }

func (j *v1Job) Signal(sig syscall.Signal, except ...int) (int, error) {
	pids, err := j.Pids()
	if err != nil {
		return 0, err
	}
	return signalPids(pids, sig, except, j.Pids)
}

// Kill freezes the cgroup (nothing in it can fork meanwhile), kills every
// process in it, thaws it so that the kill lands, and waits for it to
// empty: v1 has no cgroup.kill.
func (j *v1Job) Kill() error {
	deadline := time.Now().Add(killWaitEmpty)
	for {
		pids, err := j.Pids()
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: %d processes left after SIGKILL", j.name, len(pids))
		}
		frozen := j.cg.Freeze() == nil
		if pids, err = j.Pids(); err == nil {
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
		if frozen {
			j.cg.Thaw()
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (j *v1Job) Usage() (Usage, error) {
	var u Usage
	st, err := j.cg.Stat(cgroup1.IgnoreNotExist)
	if err != nil {
		return u, fmt.Errorf("cgroup %s: %w", j.name, err)
	}
	if c := st.GetCPU().GetUsage(); c != nil {
		u.CPUTime = time.Duration(c.Total)
	}
	if mu := st.GetMemory().GetUsage(); mu != nil {
		u.MemBytes, u.MaxBytes = int64(mu.Usage), int64(mu.Max)
	}
	u.OOMKills = int64(st.GetMemoryOomControl().GetOomKill())
	u.Pids, err = j.Pids()
	return u, err
}

func (j *v1Job) SetMemLimit(kb int64) error {
	d := j.Dir("memory")
	if d == "" {
		return errors.New("no memory controller")
	}
	v := "-1"
	if kb > 0 {
		v = strconv.FormatInt(kb<<10, 10)
	}
	files := []string{"memory.limit_in_bytes"}
	if j.m.hasMemsw() {
		// memory.limit_in_bytes may not exceed memory.memsw's: the one
		// that leaves room for the other goes first.
		cur, _ := os.ReadFile(filepath.Join(d, "memory.limit_in_bytes"))
		n, _ := strconv.ParseInt(strings.TrimSpace(string(cur)), 10, 64)
		if kb <= 0 || kb<<10 > n {
			files = []string{"memory.memsw.limit_in_bytes", "memory.limit_in_bytes"}
		} else {
			files = []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"}
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(d, f), []byte(v), 0o644); err != nil {
			return fmt.Errorf("cgroup %s: %w", j.name, err)
		}
	}
	return nil
}

// Remove kills what is left and removes the cgroup from every hierarchy,
// retrying while the kernel still holds it (a process that has been
// killed but not yet released).
func (j *v1Job) Remove() error {
	if err := j.Kill(); err != nil {
		return err
	}
	j.cg.Thaw() // a frozen empty cgroup is removable, but say it plainly
	var err error
	for i := 0; i < 50; i++ {
		if err = j.rmdirs(); err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

func (j *v1Job) rmdirs() error {
	var bad []string
	for _, c := range j.m.ctrls {
		d := j.Dir(c)
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
			bad = append(bad, fmt.Sprintf("%s: %v", d, err))
		}
	}
	if len(bad) > 0 {
		return errors.New("remove cgroup: " + strings.Join(bad, "; "))
	}
	return nil
}
