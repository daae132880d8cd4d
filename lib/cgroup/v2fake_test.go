package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The v2 memory and cpuset paths over a fake unified tree: a directory
// with the files the kernel would show. The hosts these tests run on
// mount a unified tree without the memory and cpuset controllers (their
// v1 hierarchies hold them), so what the kernel itself does with the
// limits (the OOM kill, the affinity) is not tested here
// (TestV2MemoryAndCpuset, skipped there); what XCE writes and reads is.

// fakeV2 makes a unified tree at a scratch directory whose root and
// parent offer controllers offer, and a manager on it.
func fakeV2(t *testing.T, offer string, swap bool) (m *Manager, base string) {
	t.Helper()
	root := t.TempDir()
	base = filepath.Join(root, "fake", "xce", "unit")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"cgroup.controllers":          offer,
		"cgroup.subtree_control":      "",
		"fake/cgroup.controllers":     offer,
		"fake/xce/unit/cgroup.freeze": "0",
		"fake/xce/unit/cgroup.procs":  "",
		// The kernel's: in every cgroup.
		"fake/cgroup.subtree_control":          "",
		"fake/xce/cgroup.subtree_control":      "",
		"fake/xce/unit/cgroup.subtree_control": "",
	}
	if swap {
		files["fake/xce/unit/memory.swap.max"] = "max"
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := newManager(Config{Cluster: "unit", Parent: "fake", Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if m.Version() != V2 {
		t.Fatalf("a tree with cgroup.controllers at its root is version %d", m.Version())
	}
	return m, base
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// The controllers the parent offers are enabled down to xce/<cluster>,
// and a job's cgroup gets its memory limit (and no swap beyond it) and
// its cores in the files v2 names them.
func TestV2FakeLimits(t *testing.T) {
	m, base := fakeV2(t, "cpuset cpu io memory hugetlb pids", true)
	for _, c := range []string{"memory", "cpuset", "pids"} {
		// In use once "+c" was written to every cgroup.subtree_control
		// from the parent down to xce/unit (a fake file keeps the last).
		if !m.Has(c) {
			t.Errorf("controller %s not in use (%v)", c, m.ctrls)
		}
	}
	if m.Has("cpu") || m.Has("io") {
		t.Errorf("controllers beyond memory, cpuset and pids in use: %v", m.ctrls)
	}
	if !m.CanEnforce("memory") || !m.CanEnforce("cpu") || !m.CanEnforce("gpu") {
		t.Error("memory, cpu and gpu cannot be enforced on a v2 tree with memory and cpuset")
	}
	j, err := m.Create(7, 2, Limits{MemKB: 30 << 10, CPUs: []int{3, 1, 2, 6}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "job.7.2")
	if j.Path() != dir {
		t.Errorf("the job's cgroup is %s, want %s", j.Path(), dir)
	}
	for file, want := range map[string]string{"memory.max": "31457280", "memory.swap.max": "0", "cpuset.cpus": "3,1,2,6"} {
		if got := readFile(t, filepath.Join(dir, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if lim, err := j.MemLimit(); err != nil || lim != 30<<20 {
		t.Errorf("MemLimit %d %v, want %d", lim, err, 30<<20)
	}
	// bmod -M, then -Mn.
	if err := j.SetMemLimit(50 << 10); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "memory.max")); got != "52428800" {
		t.Errorf("after SetMemLimit(50 MB) memory.max = %q", got)
	}
	if err := j.SetMemLimit(0); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "memory.max")); got != "max" {
		t.Errorf("after SetMemLimit(0) memory.max = %q, want max", got)
	}
	if lim, err := j.MemLimit(); err != nil || lim != 0 {
		t.Errorf("MemLimit of an unlimited cgroup: %d %v", lim, err)
	}
	// Found again after a restart.
	if l := m.Load(7, 2); l == nil || l.Path() != dir {
		t.Errorf("Load found %v", l)
	}
}

// A host whose kernel has no memory.swap.max (swap accounting off) gets
// the memory limit alone; a tree without memory and cpuset enforces
// neither, and writes no such file.
func TestV2FakeWithout(t *testing.T) {
	m, base := fakeV2(t, "cpuset memory", false)
	if _, err := m.Create(1, 0, Limits{MemKB: 1 << 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "job.1.0", "memory.swap.max")); err == nil {
		t.Error("memory.swap.max written where the kernel has none")
	}
	m, base = fakeV2(t, "hugetlb", false)
	if m.Has("memory") || m.Has("cpuset") || m.CanEnforce("memory") || m.CanEnforce("cpu") {
		t.Errorf("a tree offering hugetlb only: controllers %v", m.ctrls)
	}
	j, err := m.Create(1, 0, Limits{MemKB: 1 << 10, CPUs: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"memory.max", "cpuset.cpus"} {
		if _, err := os.Stat(filepath.Join(base, "job.1.0", f)); err == nil {
			t.Errorf("%s written without its controller", f)
		}
	}
	if err := j.SetMemLimit(1 << 10); err == nil {
		t.Error("SetMemLimit without a memory controller did not fail")
	}
}

// Usage reads v2's CPU time, memory now, peak and OOM kills; Resident
// the job's resident memory.
func TestV2FakeUsage(t *testing.T) {
	m, base := fakeV2(t, "cpuset memory pids", true)
	j, err := m.Create(3, 0, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "job.3.0")
	for name, text := range map[string]string{
		"cpu.stat":       "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
		"memory.current": "104857600\n",
		"memory.peak":    "314572800\n",
		"memory.events":  "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n",
		"cgroup.procs":   "101\n102\n",
		"memory.stat":    "anon 73400320\nfile 524288000\nkernel 1048576\nfile_mapped 10485760\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	u, err := j.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.CPUTime != 2500*time.Millisecond || u.MemBytes != 100<<20 || u.MaxBytes != 300<<20 || u.OOMKills != 1 ||
		len(u.Pids) != 2 || u.Pids[0] != 101 || u.Pids[1] != 102 {
		t.Errorf("usage %+v", u)
	}
	e, err := j.EndUsage()
	if err != nil || e.MaxBytes != 300<<20 || e.OOMKills != 1 || e.Pids != nil {
		t.Errorf("end usage %+v %v", e, err)
	}
	// Resident: anonymous and mapped, not the page cache.
	if r, err := j.Resident(); err != nil || r != 80<<20 {
		t.Errorf("Resident %d %v, want %d", r, err, 80<<20)
	}
	if d, err := j.CPUTime(); err != nil || d != 2500*time.Millisecond {
		t.Errorf("CPUTime %v %v", d, err)
	}
}
