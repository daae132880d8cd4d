package cgroup

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// scratch is a manager whose tree lives under a scratch parent of this
// test's own, removed at the end; the test is skipped where cgroups
// cannot be made.
func scratch(t *testing.T) *Manager { return scratchAt(t, "") }

// scratchAt is scratch with the hierarchies mounted at root ("": the
// host's).
func scratchAt(t *testing.T, root string) *Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make cgroups")
	}
	m, err := New(Config{Cluster: "unit", Parent: fmt.Sprintf("xce-unit-%d", os.Getpid()), Root: root})
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

// gated starts sh -c script, which waits for a line on its stdin before
// it runs script: the test moves it into a cgroup first.
func gated(t *testing.T, j Job, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "read go; "+script)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if err := j.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	io.WriteString(in, "go\n")
	return cmd
}

func create(t *testing.T, m *Manager, lim Limits) Job {
	t.Helper()
	j, err := m.CreateNamed(fmt.Sprintf("job.%d.%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")), lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := j.Remove(); err != nil {
			t.Error(err)
		}
	})
	return j
}

func waitPids(t *testing.T, j Job, n int) []int {
	t.Helper()
	for i := 0; i < 500; i++ {
		pids, _ := j.Pids()
		if len(pids) >= n {
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
	pids, _ := j.Pids()
	t.Fatalf("cgroup has %d processes, want %d", len(pids), n)
	return nil
}

// A process that leaves its session and double-forks stays in the
// cgroup; the cgroup's freeze stops its CPU time, thaw lets it go on, and
// Kill leaves nothing; the cgroup's accounting counts it.
func TestTrackFreezeKill(t *testing.T) { trackFreezeKill(t, scratch(t)) }

// The same on the v2 tree, where the host has one beside its v1
// controllers (a hybrid host: no controller there, but the freezer,
// cgroup.kill and cpu.stat are the kernel's own).
func TestTrackFreezeKillV2(t *testing.T) {
	const unified = "/sys/fs/cgroup/unified"
	if _, err := os.Stat(filepath.Join(unified, "cgroup.controllers")); err != nil {
		t.Skip("no v2 tree beside the v1 controllers")
	}
	m := scratchAt(t, unified)
	if m.Version() != V2 {
		t.Fatalf("version %d at %s", m.Version(), unified)
	}
	trackFreezeKill(t, m)
}

func trackFreezeKill(t *testing.T, m *Manager) {
	j := create(t, m, Limits{})
	// The busy loop runs in a grandchild in a session of its own.
	gated(t, j, "setsid sh -c '(while :; do :; done) & exit 0' ; sleep 1000")
	pids := waitPids(t, j, 3)
	time.Sleep(200 * time.Millisecond)
	if err := j.Freeze(); err != nil {
		t.Fatal(err)
	}
	u1, err := j.Usage()
	if err != nil {
		t.Fatal(err)
	}
	measured := m.Has("cpuacct") || m.Version() == V2
	if measured && u1.CPUTime <= 0 {
		t.Errorf("no CPU time counted: %v", u1.CPUTime)
	}
	time.Sleep(300 * time.Millisecond)
	u2, _ := j.Usage()
	if u2.CPUTime != u1.CPUTime {
		t.Errorf("CPU time advanced while frozen: %v -> %v", u1.CPUTime, u2.CPUTime)
	}
	if err := j.Thaw(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	u3, _ := j.Usage()
	if measured && u3.CPUTime <= u2.CPUTime {
		t.Errorf("CPU time did not advance after thaw: %v -> %v", u2.CPUTime, u3.CPUTime)
	}
	if err := j.Kill(); err != nil {
		t.Fatal(err)
	}
	if left, _ := j.Pids(); len(left) != 0 {
		t.Errorf("left after Kill: %v", left)
	}
	for _, p := range pids {
		if unix.Kill(p, 0) == nil {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p)); err == nil && !strings.Contains(string(b), ") Z ") {
				t.Errorf("pid %d lives on: %s", p, b)
			}
		}
	}
}

// Signal reaches every process but the excepted ones.
func TestSignalExcept(t *testing.T) {
	m := scratch(t)
	j := create(t, m, Limits{})
	keep := gated(t, j, "exec sleep 1000")
	gated(t, j, "setsid sleep 1000")
	waitPids(t, j, 2)
	time.Sleep(100 * time.Millisecond)
	n, err := j.Signal(syscall.SIGTERM, keep.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		pids, _ := j.Pids()
		t.Logf("signalled %d of %v", n, pids)
	}
	time.Sleep(200 * time.Millisecond)
	pids, _ := j.Pids()
	if len(pids) != 1 || pids[0] != keep.Process.Pid {
		t.Errorf("after SIGTERM to all but %d: %v", keep.Process.Pid, pids)
	}
}

// The peak is the cgroup's: a short one between samples counts.
func TestPeakMemory(t *testing.T) {
	m := scratch(t)
	if !m.Has("memory") {
		t.Skip("no memory controller")
	}
	j := create(t, m, Limits{})
	cmd := gated(t, j, "x=$(head -c 60000000 /dev/zero | tr '\\0' a); exit 0")
	cmd.Wait()
	u, err := j.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.MaxBytes < 60e6 {
		t.Errorf("peak %d bytes, want at least 60e6", u.MaxBytes)
	}
}

// Over its memory limit, the kernel kills in the cgroup, and says so.
func TestMemoryLimitOOM(t *testing.T) {
	m := scratch(t)
	if !m.CanEnforce("memory") {
		t.Skip("no memory controller")
	}
	j := create(t, m, Limits{MemKB: 30 << 10})
	cmd := gated(t, j, "x=$(head -c 100000000 /dev/zero | tr '\\0' a); exit 0")
	err := cmd.Wait()
	u, uerr := j.Usage()
	if uerr != nil {
		t.Fatal(uerr)
	}
	if u.OOMKills == 0 {
		t.Errorf("no OOM kill counted (wait: %v, usage %+v)", err, u)
	}
	if u.MaxBytes > 31<<20 {
		t.Errorf("peak %d above the limit", u.MaxBytes)
	}
	if err := j.SetMemLimit(0); err != nil {
		t.Errorf("lift the limit: %v", err)
	}
}

// The cpuset holds exactly the cores given.
func TestCpuset(t *testing.T) {
	m := scratch(t)
	if !m.CanEnforce("cpu") {
		t.Skip("no cpuset controller")
	}
	j := create(t, m, Limits{CPUs: []int{0}})
	out, err := os.CreateTemp(t.TempDir(), "aff")
	if err != nil {
		t.Fatal(err)
	}
	cmd := gated(t, j, "grep Cpus_allowed_list /proc/self/status >"+out.Name())
	cmd.Wait()
	b, _ := os.ReadFile(out.Name())
	if got := strings.TrimSpace(strings.TrimPrefix(string(b), "Cpus_allowed_list:")); got != "0" {
		t.Errorf("affinity %q, want 0", got)
	}
}

// A GPU that is not the job's cannot be opened; the job's own can. The
// "GPUs" are nodes made for the test with /dev/zero's and /dev/full's
// numbers: the rule is the devices cgroup's, whatever the node.
func TestDeviceRules(t *testing.T) {
	m := scratch(t)
	if !m.CanEnforce("gpu") || m.Version() != V1 {
		t.Skip("no v1 devices controller")
	}
	dev := t.TempDir()
	for name, num := range map[string]uint64{"nvidia0": unix.Mkdev(1, 5), "nvidia1": unix.Mkdev(1, 7), "nvidiactl": unix.Mkdev(1, 3)} {
		if err := unix.Mknod(filepath.Join(dev, name), syscall.S_IFCHR|0o666, int(num)); err != nil {
			t.Skipf("mknod: %v", err)
		}
	}
	deny := GPUDeviceRules(dev, []int{0})
	if len(deny) != 1 || deny[0].Major != 1 || deny[0].Minor != 7 {
		t.Fatalf("rules %+v, want only nvidia1 (1:7) denied", deny)
	}
	j := create(t, m, Limits{DenyDevices: deny})
	out := filepath.Join(t.TempDir(), "out")
	cmd := gated(t, j, fmt.Sprintf("{ head -c1 %s/nvidia0 >/dev/null && echo ok0; head -c1 %s/nvidia1 >/dev/null || echo denied1; head -c1 %s/nvidiactl >/dev/null && echo okctl; } >%s 2>&1", dev, dev, dev, out))
	cmd.Wait()
	b, _ := os.ReadFile(out)
	for _, want := range []string{"ok0", "denied1", "okctl"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("output %q lacks %s", b, want)
		}
	}
}

// The cgroup's files are root's and closed to others.
func TestRootOwned(t *testing.T) {
	m := scratch(t)
	j := create(t, m, Limits{MemKB: 1 << 20})
	for _, c := range []string{"freezer", "memory"} {
		d := j.Dir(c)
		if d == "" {
			continue
		}
		for _, f := range []string{"", "cgroup.procs", "memory.limit_in_bytes", "freezer.state"} {
			fi, err := os.Stat(filepath.Join(d, f))
			if err != nil {
				continue
			}
			st := fi.Sys().(*syscall.Stat_t)
			if st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
				t.Errorf("%s: owner %d mode %v", filepath.Join(d, f), st.Uid, fi.Mode())
			}
		}
	}
}

// BenchmarkCreateRemove makes and removes an empty job cgroup, with its
// parts timed: Create, Usage, Kill of an empty cgroup, Remove.
func BenchmarkCreateRemove(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	m, err := New(Config{Cluster: "bench", Parent: fmt.Sprintf("xce-unit-%d", os.Getpid())})
	if err != nil {
		b.Skip(err)
	}
	defer m.Close()
	var create, usage, kill, remove, add time.Duration
	adds := 0
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		j, err := m.CreateNamed(fmt.Sprintf("job.%d", i), Limits{})
		if err != nil {
			b.Fatal(err)
		}
		create += time.Since(t0)
		if i%5 == 0 {
			cmd := exec.Command("sleep", "0.01")
			cmd.Start()
			ta := time.Now()
			j.Add(cmd.Process.Pid)
			add += time.Since(ta)
			cmd.Wait()
			adds++
		}
		t1 := time.Now()
		j.Usage()
		t2 := time.Now()
		j.Kill()
		t3 := time.Now()
		if err := j.Remove(); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		usage, kill, remove = usage+t2.Sub(t1), kill+t3.Sub(t2), remove+t4.Sub(t3)
	}
	n := float64(b.N)
	b.ReportMetric(float64(create.Microseconds())/n, "create-us")
	b.ReportMetric(float64(usage.Microseconds())/n, "usage-us")
	b.ReportMetric(float64(kill.Microseconds())/n, "kill-us")
	b.ReportMetric(float64(remove.Microseconds())/n, "remove-us")
	b.ReportMetric(float64(add.Microseconds())/float64(max(adds, 1)), "add-us")
}

// A job's cgroup with a container's below it (RuntimeParent): Remove takes
// both, in every hierarchy.
func TestRemoveNested(t *testing.T) {
	m := scratch(t)
	j, err := m.Create(31, 0, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	if m.Version() == V2 {
		dirs = []string{j.Path()}
	} else {
		for _, c := range m.ctrls {
			dirs = append(dirs, j.Dir(c))
		}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(d, "ctr", "inner"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", d, err)
		}
	}
}
