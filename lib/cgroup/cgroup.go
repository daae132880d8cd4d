// Package cgroup owns the kernel side of a job's containment on a host:
// one cgroup per job, made before the job's first process and removed
// after its last, through which the worker (root) tracks, freezes,
// signals, kills, measures and limits everything the job runs.
//
// # Where the cgroups live
//
// A job's cgroup is `xce/<cluster>/job.<ID>.<IDX>` under a parent in each
// hierarchy the worker uses. The parent is the worker's own cgroup in
// that hierarchy (from /proc/self/cgroup), which is what systemd's
// delegation (Delegate=yes on xced's unit) hands a service, so the jobs
// count within the service's own accounting and limits; Config.Parent
// (xced's XCE_CGROUP_PARENT) names another parent, relative to each
// hierarchy's root (tests use a scratch one, so that clusters on one
// machine never share a job's cgroup).
//
// On a host with cgroup v1 controllers (legacy or hybrid mounts) the
// hierarchies are the v1 controllers freezer (required: tracking, freeze
// and the end's kill), cpuacct and memory (accounting), and, where
// mounted, pids, cpuset and devices; on a host with only the unified tree
// (cgroup v2) the job's cgroup is one directory there, with the memory,
// cpuset and pids controllers enabled down to it where the parent
// allows. Neither version's cpu controller is used: the jobs set no CPU
// weight or quota, and a scheduling group per job would change how the
// kernel shares the CPU between jobs and the rest of the host (v1's
// cpuacct and v2's cpu.stat measure without it). A hybrid host uses its v1 controllers: its unified
// tree holds no resource controller.
//
// The files are handled by containerd's cgroups library (cgroup1 and
// cgroup2), which knows the versions' quirks (cpuset's inherited cpus and
// mems on v1, controllers enabled along a v2 path, the freezer's
// intermediate states, removal while the kernel still drains a cgroup).
//
// # Root stays root's
//
// Every directory and file is created by root and stays root's; nothing
// is delegated to the job's user, so the job can neither raise its limits
// nor move itself out (writing cgroup.procs elsewhere needs write access
// to the target's cgroup.procs and to a common ancestor's).
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

	cgroups "github.com/containerd/cgroups/v3"
)

// Version says which cgroup interface a Manager drives.
type Version int

const (
	V1 Version = 1 // named v1 controllers (legacy or hybrid hosts)
	V2 Version = 2 // the unified tree
)

// Config says where a worker's cgroups go.
type Config struct {
	Cluster string
	// Parent, when set, replaces the worker's own cgroup as the parent of
	// xce/ in every hierarchy (a path from the hierarchy's root).
	Parent string
	// Root is where the hierarchies are mounted (tests); default
	// /sys/fs/cgroup.
	Root string
}

// Limits are what the kernel enforces on a job (Launch.containment).
type Limits struct {
	MemKB int64 // > 0: the memory limit (and memory+swap where v1 has memsw)
	CPUs  []int // non-nil: the cpuset holds exactly these cores
	// DenyDevices, non-nil: devices the job may not open (the GPUs that
	// are not its own; see GPUDeviceRules).
	DenyDevices []Device
	// Everywhere: the cgroup is in every hierarchy the manager uses, even
	// those no limit needs (v1; its cpuset is its parent's and its devices
	// are not restricted). A process moved into it leaves every job's
	// cgroup (the idle shepherds' cgroup, lib/worker/reuse.go).
	Everywhere bool
}

// Usage is what a job's cgroup measured.
type Usage struct {
	CPUTime  time.Duration // user+system of every process that ever ran in it
	MemBytes int64         // memory charged now
	MaxBytes int64         // the peak of MemBytes since the cgroup was made
	OOMKills int64         // processes the kernel killed for the memory limit
	Pids     []int         // the processes in it now
}

// Manager makes and finds a worker's job cgroups.
type Manager struct {
	version Version
	root    string
	cluster string
	// v1: the parent of xce/ in each controller's hierarchy, from the
	// hierarchy's root; v2: parents["unified"].
	parents map[string]string
	ctrls   []string // v1: the controllers used; v2: those enabled for jobs
	made    []string // directories New made (absolute), removed by Close when empty
	// cloneCpuset: the v1 cpuset of xce/<cluster> has cgroup.clone_children
	// set, so a job's cpuset starts with its parent's cores and nodes.
	cloneCpuset bool
}

// v1 controllers: the required ones first.
var (
	v1Required = []string{"freezer"}
	// Not "cpu": the job sets no CPU weight or quota, and a CFS group of
	// its own would only change how the kernel shares CPU between jobs
	// and everything else (cpuacct measures).
	v1Optional = []string{"cpuacct", "memory", "pids", "cpuset", "devices"}
)

// New finds the host's cgroups and makes sure the worker can make its
// jobs' cgroups (it creates xce/<cluster> in each hierarchy). An error
// says why it cannot: the caller falls back to tracking by process tree.
func New(cfg Config) (*Manager, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the worker does not run as root")
	}
	return newManager(cfg)
}

// newManager is New without the check for root (tests over a fake tree).
func newManager(cfg Config) (*Manager, error) {
	if cfg.Cluster == "" || strings.ContainsAny(cfg.Cluster, "/\x00") || cfg.Cluster == "." || cfg.Cluster == ".." {
		return nil, fmt.Errorf("cluster name %q cannot name a cgroup", cfg.Cluster)
	}
	m := &Manager{root: cfg.Root, cluster: cfg.Cluster, parents: map[string]string{}}
	if m.root == "" {
		m.root = "/sys/fs/cgroup"
		switch cgroups.Mode() {
		case cgroups.Unified:
			m.version = V2
		case cgroups.Legacy, cgroups.Hybrid:
			m.version = V1
		default:
			return nil, errors.New("no cgroup file system is mounted at /sys/fs/cgroup")
		}
	} else {
		m.version = V1
		if _, err := os.Stat(filepath.Join(m.root, "cgroup.controllers")); err == nil {
			m.version = V2
		}
	}
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	if m.version == V2 {
		return m, m.initV2(cfg, own)
	}
	return m, m.initV1(cfg, own)
}

// ownCgroups reads /proc/self/cgroup: controller (v1) or "unified" (v2)
// to the path from its hierarchy's root.
func ownCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read the worker's own cgroups: %w", err)
	}
	own := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			own["unified"] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	return own, nil
}

func (m *Manager) base(parent string) string {
	return filepath.Join(parent, "xce", m.cluster)
}

// mkdirs makes dir and its missing parents under top, remembering the
// ones it made.
func (m *Manager) mkdirs(top, dir string) error {
	var missing []string
	for d := dir; d != top && len(d) > len(top); d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	for _, d := range slices.Backward(missing) {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		m.made = append(m.made, d)
	}
	return nil
}

// Version is the cgroup interface in use.
func (m *Manager) Version() Version { return m.version }

// String says what the worker uses, for its log.
func (m *Manager) String() string {
	if m.version == V2 {
		return fmt.Sprintf("cgroup v2 at %s (controllers: %s)",
			filepath.Join(m.root, m.base(m.parents["unified"])), strings.Join(m.ctrls, " "))
	}
	var parts []string
	for _, c := range m.ctrls {
		parts = append(parts, c+":"+m.base(m.parents[c]))
	}
	return "cgroup v1 (" + strings.Join(parts, " ") + ")"
}

// Has says whether a controller (v1 name; v2 memory, cpu, cpuset, pids)
// is in use.
func (m *Manager) Has(ctrl string) bool { return slices.Contains(m.ctrls, ctrl) }

// CanEnforce says whether limits of a kind ("memory", "cpu", "gpu") can
// be enforced.
func (m *Manager) CanEnforce(kind string) bool {
	switch kind {
	case "memory":
		return m.Has("memory")
	case "cpu":
		return m.Has("cpuset")
	case "gpu":
		return m.Has("devices") || m.version == V2
	}
	return false
}

// JobName is the name of a job's cgroup in xce/<cluster>.
func JobName(id int64, idx int32) string {
	return "job." + strconv.FormatInt(id, 10) + "." + strconv.Itoa(int(idx))
}

// Close removes the directories New made, where they are empty.
func (m *Manager) Close() {
	for _, d := range slices.Backward(m.made) {
		syscall.Rmdir(d)
	}
}

// Job is one job's cgroup.
type Job interface {
	// Add moves a process (and the children it will have) in.
	Add(pid int) error
	// Pids lists the processes in the cgroup.
	Pids() ([]int, error)
	Freeze() error
	Thaw() error
	// Signal sends sig to every process in the cgroup but those in
	// except; it returns how many it reached.
	Signal(sig syscall.Signal, except ...int) (int, error)
	// Kill kills every process in the cgroup and waits (up to a few
	// seconds) for it to be empty.
	Kill() error
	// Usage reads the cgroup's accounting.
	Usage() (Usage, error)
	// EndUsage reads what a job's end needs of it: CPU time, peak memory
	// and OOM kills (not the memory charged now, nor the processes).
	EndUsage() (Usage, error)
	// CPUTime is the CPU time of every process that ever ran in it.
	CPUTime() (time.Duration, error)
	// Resident is the memory its processes have resident, in bytes:
	// anonymous and file-mapped pages, not the page cache the cgroup is
	// also charged (LSF's cgroup measure without
	// LSB_CGROUP_MEM_INCLUDE_CACHE; the shepherd's sum of RSS).
	Resident() (int64, error)
	// MemLimit is the memory limit the cgroup has, in bytes (0: none).
	MemLimit() (int64, error)
	// SetMemLimit changes the memory limit (0: none).
	SetMemLimit(kb int64) error
	// Remove kills what is left and removes the cgroup, retrying while
	// the kernel still holds it.
	Remove() error
	// Path is the cgroup's path in its (first) hierarchy, for logs.
	Path() string
	// Dir is the cgroup's directory in hierarchy ctrl ("" on v2).
	Dir(ctrl string) string
}

// Create makes job id[idx]'s cgroup with limits; an existing one (a job
// dispatched again after a worker restart) is emptied and reused.
func (m *Manager) Create(id int64, idx int32, lim Limits) (Job, error) {
	if m.version == V2 {
		return m.createV2(JobName(id, idx), lim)
	}
	return m.createV1(JobName(id, idx), lim)
}

// CreateNamed is Create for a cgroup named in xce/<cluster> (tests).
func (m *Manager) CreateNamed(name string, lim Limits) (Job, error) {
	if m.version == V2 {
		return m.createV2(name, lim)
	}
	return m.createV1(name, lim)
}

// Load finds job id[idx]'s existing cgroup (after a worker restart); it
// is nil when there is none.
func (m *Manager) Load(id int64, idx int32) Job {
	name := JobName(id, idx)
	if m.version == V2 {
		return m.loadV2(name)
	}
	return m.loadV1(name)
}

// killWaitEmpty is how long Kill waits for a cgroup to empty.
const killWaitEmpty = 5 * time.Second

// signalPids sends sig to the processes inCgroup lists: each is
// opened as a pidfd first and checked against a fresh list (inCgroup), so
// a pid that ended and was reused outside the cgroup in between is not
// signalled.
func signalPids(inCgroup func() ([]int, error), sig syscall.Signal, except []int) (int, error) {
	pids, err := inCgroup()
	if err != nil {
		return 0, err
	}
	n := 0
	var fds []int
	var fdPids []int
	for _, pid := range pids {
		if pid <= 1 || slices.Contains(except, pid) {
			continue
		}
		fd, err := pidfdOpen(pid)
		if err != nil {
			continue // gone
		}
		fds = append(fds, fd)
		fdPids = append(fdPids, pid)
	}
	defer func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}()
	if len(fds) == 0 {
		return 0, nil
	}
	now, err := inCgroup()
	if err != nil {
		return 0, err
	}
	for i, fd := range fds {
		if !slices.Contains(now, fdPids[i]) {
			continue
		}
		if err := pidfdSendSignal(fd, sig); err == nil {
			n++
		}
	}
	return n, nil
}
