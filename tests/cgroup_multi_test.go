package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xce/lib/cgroup"
	"xce/lib/testenv"
)

// A job on two hosts is contained on both: the task blaunch starts on
// each host runs in that host's cgroup of the job (under the worker's
// own parent), with the job's memory limit (-M times the job's slots on
// the host) above it, and in the job's freezer cgroup, which bstop
// freezes.
func TestCgroupMultiHost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the workers make cgroups")
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/cgroup.procs"); err != nil {
		t.Skip("no cgroup v1 memory hierarchy here: the test reads the hierarchical limit from it")
	}
	probe := fmt.Sprintf("xce-e2e-probe-%d", os.Getpid())
	pm, err := cgroup.New(cgroup.Config{Cluster: "probe", Parent: probe})
	if err != nil {
		t.Skipf("no cgroups the worker could make here: %v", err)
	}
	pm.Close()
	testenv.RemoveCgroupTree(probe)

	m := newMulti(t, `resource_enforce = ["memory"]`)
	m.worker("hA", 1)
	m.worker("hB", 1)
	m.waitHosts(map[string]string{"hA": "ok", "hB": "ok"})
	// Each task prints its host, its memory and freezer cgroups, and the
	// memory limit that holds it.
	script := `for h in $LSB_HOSTS; do
  blaunch $h "mem=\$(grep -E '^[0-9]+:memory:' /proc/self/cgroup | cut -d: -f3)
fz=\$(grep -E '^[0-9]+:freezer:' /proc/self/cgroup | cut -d: -f3)
lim=\$(awk '/^hierarchical_memory_limit/ {print \$2}' /sys/fs/cgroup/memory\$mem/memory.stat)
echo task $h \$mem \$fz \$lim"
done
`
	id := m.submit(script, "-n", "2", "-R", "span[ptile=1]", "-M", "64MB", "-o", "cg.out")
	m.waitState(id, "DONE")
	out, err := os.ReadFile(filepath.Join(m.work, "cg.out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the job's output:\n%s", out)
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[0] != "task" {
			continue
		}
		host, mem, fz, lim := f[1], f[2], f[3], f[4]
		seen[host] = true
		job := "/job." + id + "."
		own := "_w-" + host + "/"
		for _, p := range []string{mem, fz} {
			if !strings.Contains(p, job) || !strings.Contains(p, own) {
				t.Errorf("%s's task in cgroup %s: want the job's (%s) under its worker's parent (%s)", host, p, job, own)
			}
		}
		if lim != fmt.Sprint(64<<20) {
			t.Errorf("%s's task under a memory limit of %s bytes, want %d (-M 64MB, one slot there)", host, lim, 64<<20)
		}
	}
	if !seen["hA"] || !seen["hB"] {
		t.Fatalf("tasks reported from %v; the job's output:\n%s", seen, out)
	}
}

// A job that stops its own shepherd, as its user may, does not escape a
// memory limit enforced by sampling (memlimit_enforce): the worker reads
// the job's resident memory from its cgroup and ends it TERM_MEMLIMIT.
func TestCgroupShepherdStoppedMemLimit(t *testing.T) {
	needPerl(t)
	conf := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(conf, []byte("[cluster]\nmemlimit_enforce = true\n\n[queues.normal]\npriority = 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, uid := cgCluster(t, "--config", conf)
	id := submitAs(t, c, uid, "-o", "/dev/null", "-M", "32MB",
		`kill -STOP $LSB_JOBRES_PID; perl -e '$x = "a"; $x x= (100 << 20); sleep 60'`)
	c.waitStateWithin(id, 2*time.Minute, "EXIT")
	if r := exitReason(c, id); !strings.Contains(r, "TERM_MEMLIMIT") {
		t.Errorf("exit reason %q, want TERM_MEMLIMIT\n%s", r, c.must("", "bjobs", "-l", id))
	}
}
