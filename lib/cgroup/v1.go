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
			// From here down the kernel copies them at mkdir: a job's
			// cpuset is one mkdir, not a walk of its ancestors.
			clone := filepath.Join(top, m.base(parent), "cgroup.clone_children")
			m.cloneCpuset = os.WriteFile(clone, []byte("1"), 0o644) == nil
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

// createV1 makes the job's cgroup with one mkdir per hierarchy, then sets
// the limits it has. containerd's cgroup1.New is not used here: it walks
// every ancestor of the cpuset (a stat and two reads each) and stats
// every directory before it makes it, which tripled the cost of a job's
// cgroup (issue 30's latency target); the library still sets the memory
// and device limits, adds processes, freezes and thaws.
func (m *Manager) createV1(name string, lim Limits) (Job, error) {
	j := &v1Job{m: m, name: name}
	if old := m.loadV1(name); old != nil {
		// Left by a worker that stopped before removing it.
		if err := old.Remove(); err != nil {
			return nil, fmt.Errorf("cgroup %s exists and cannot be emptied: %w", j.Path(), err)
		}
	}
	fail := func(err error) (Job, error) {
		j.rmdirs()
		return nil, fmt.Errorf("create cgroup %s: %w", j.Path(), err)
	}
	for _, c := range m.ctrls {
		if !jobNeeds(c, lim) {
			continue
		}
		if err := os.Mkdir(j.Dir(c), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fail(err)
		}
	}
	if m.Has("cpuset") && (lim.CPUs != nil || lim.Everywhere) {
		if err := j.setCpuset(lim.CPUs); err != nil {
			return fail(err)
		}
	}
	subs, _ := m.hierarchy()
	r := m.resourcesV1(lim)
	r.CPU = nil // set above
	for _, s := range subs {
		if (s.Name() == cgroup1.Memory && r.Memory != nil) || (s.Name() == cgroup1.Devices && r.Devices != nil) {
			if err := s.(interface {
				Create(string, *specs.LinuxResources) error
			}).Create(filepath.Join(m.base(m.parents[string(s.Name())]), name), r); err != nil {
				return fail(err)
			}
		}
	}
	cg, err := cgroup1.Load(m.pathV1(name), cgroup1.WithHierarchy(m.hierarchy))
	if err != nil {
		return fail(err)
	}
	j.cg = cg
	return j, nil
}

// jobNeeds says whether a job with limits lim gets a cgroup of its own in
// hierarchy c: freezer, cpuacct and memory always (tracking and
// accounting), cpuset and devices only for the limits they enforce, pids
// never (no limit uses it; the freezer lists the processes). Each
// hierarchy a job joins costs a mkdir, a write of cgroup.procs under the
// kernel's global cgroup lock and an rmdir; a job outside the others
// stays in the worker's cgroup there, as it would without cgroups.
func jobNeeds(c string, lim Limits) bool {
	if lim.Everywhere {
		return true
	}
	switch c {
	case "cpuset":
		return lim.CPUs != nil
	case "devices":
		return lim.DenyDevices != nil
	case "pids":
		return false
	}
	return true
}

// setCpuset gives the job's cpuset its cores (nil: its parent's) and its
// parent's memory nodes, where the kernel did not copy them at mkdir.
func (j *v1Job) setCpuset(cpus []int) error {
	d := j.Dir("cpuset")
	for _, f := range []string{"cpuset.mems", "cpuset.cpus"} {
		v := []byte(nil)
		if f == "cpuset.cpus" && cpus != nil {
			v = []byte(cpuList(cpus))
		} else if j.m.cloneCpuset {
			continue
		} else {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(d), f))
			if err != nil {
				return err
			}
			v = b
		}
		if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
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
	return procsTree(j.Dir("freezer")) // a container's cgroup below too (nested.go)
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
	return signalPids(j.Pids, sig, except)
}

// Kill freezes the cgroup (nothing in it can fork meanwhile), kills every
// process in it, thaws it so that the kill lands, and waits for it to
// empty: v1 has no cgroup.kill.
func (j *v1Job) Kill() error {
	_, err := j.kill()
	return err
}

// kill is Kill, and says whether it had anything to kill (whether it
// froze the cgroup at all).
func (j *v1Job) kill() (killed bool, _ error) {
	deadline := time.Now().Add(killWaitEmpty)
	for ; ; killed = true {
		pids, err := j.Pids()
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return killed, nil
			}
			return killed, err
		}
		if len(pids) == 0 {
			return killed, nil
		}
		if time.Now().After(deadline) {
			return killed, fmt.Errorf("cgroup %s: %d processes left after SIGKILL", j.name, len(pids))
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

// Usage reads the few files a job's usage needs. containerd's Stat reads
// every file of every controller (memory.stat, the per-CPU times, the
// kernel memory counters...), which was most of the cost of a job's end.
func (j *v1Job) Usage() (Usage, error) {
	var u Usage
	var err error
	if d := j.Dir("cpuacct"); d != "" {
		ns, rerr := readInt(filepath.Join(d, "cpuacct.usage"))
		u.CPUTime, err = time.Duration(ns), errors.Join(err, rerr)
	}
	if d := j.Dir("memory"); d != "" {
		var e1, e2 error
		u.MemBytes, e1 = readInt(filepath.Join(d, "memory.usage_in_bytes"))
		u.MaxBytes, e2 = readInt(filepath.Join(d, "memory.max_usage_in_bytes"))
		u.OOMKills = oomKills(filepath.Join(d, "memory.oom_control"), filepath.Join(d, "memory.failcnt"))
		err = errors.Join(err, e1, e2)
	}
	if err != nil {
		return u, fmt.Errorf("cgroup %s: %w", j.name, err)
	}
	u.Pids, err = j.Pids()
	return u, err
}

func (j *v1Job) EndUsage() (Usage, error) {
	var u Usage
	var err error
	if d := j.Dir("cpuacct"); d != "" {
		ns, rerr := readInt(filepath.Join(d, "cpuacct.usage"))
		u.CPUTime, err = time.Duration(ns), rerr
	}
	if d := j.Dir("memory"); d != "" {
		var e error
		u.MaxBytes, e = readInt(filepath.Join(d, "memory.max_usage_in_bytes"))
		u.OOMKills = oomKills(filepath.Join(d, "memory.oom_control"), filepath.Join(d, "memory.failcnt"))
		err = errors.Join(err, e)
	}
	if err != nil {
		return u, fmt.Errorf("cgroup %s: %w", j.name, err)
	}
	return u, nil
}

func (j *v1Job) CPUTime() (time.Duration, error) {
	d := j.Dir("cpuacct")
	if d == "" {
		return 0, errors.New("no cpuacct controller")
	}
	ns, err := readInt(filepath.Join(d, "cpuacct.usage"))
	return time.Duration(ns), err
}

// Resident is memory.stat's total_rss (anonymous, transparent huge
// pages included) and total_mapped_file.
func (j *v1Job) Resident() (int64, error) {
	d := j.Dir("memory")
	if d == "" {
		return 0, errors.New("no memory controller")
	}
	b, err := os.ReadFile(filepath.Join(d, "memory.stat"))
	if err != nil {
		return 0, fmt.Errorf("cgroup %s: %w", j.name, err)
	}
	rss, _ := keyed(b, "total_rss")
	mapped, _ := keyed(b, "total_mapped_file")
	return rss + mapped, nil
}

// noMemLimit: a v1 limit at or above it is the kernel's "unlimited"
// (PAGE_COUNTER_MAX pages, rounded to the page size).
const noMemLimit = 1 << 62

func (j *v1Job) MemLimit() (int64, error) {
	d := j.Dir("memory")
	if d == "" {
		return 0, nil
	}
	n, err := readInt(filepath.Join(d, "memory.limit_in_bytes"))
	if err != nil || n >= noMemLimit {
		return 0, err
	}
	return n, nil
}

// oomKills is the kernel's count of OOM kills in a v1 memory cgroup
// (memory.oom_control's oom_kill, since Linux 4.13); on an older kernel,
// 1 when the limit was ever hit (memory.failcnt), which is as near as it
// says.
func oomKills(oomControl, failcnt string) int64 {
	if b, err := os.ReadFile(oomControl); err == nil {
		if n, ok := keyed(b, "oom_kill"); ok {
			return n
		}
	}
	if n, err := readInt(failcnt); err == nil && n > 0 {
		return 1
	}
	return 0
}

// keyed finds "key N" among the lines of a cgroup file.
func keyed(b []byte, key string) (int64, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// readInt reads a cgroup file that holds one number.
func readInt(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
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
	killed, err := j.kill()
	if err != nil {
		return err
	}
	if killed {
		// A frozen empty cgroup is removable, but say it plainly. An
		// empty one kill found (a job that ended by itself, the usual
		// case) is left as it is: the thaw is a write and a poll of
		// freezer.state per job.
		j.cg.Thaw()
	}
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
		// With a container's cgroup below it (nested.go).
		if err := rmTree(j.Dir(c)); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return errors.New("remove cgroup: " + strings.Join(bad, "; "))
	}
	j.removeForeignV1()
	return nil
}
