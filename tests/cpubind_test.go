package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"xce/lib/cgroup"
	"xce/lib/testenv"
)

// With resource_enforce = ["cpu"] the scheduler gives every job cores of
// its own: two -n 1 jobs running together are told different single
// cores (LSB_BIND_CPU_LIST), the affinity host file names the same, and
// each job's affinity mask (its cpuset) holds that one core.
func TestCPUBindDistinctCores(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: cpu enforcement puts each job in a cpuset cgroup, which only root's worker can make")
	}
	// The affinity mask is the cpuset's, where the worker has one.
	probe := fmt.Sprintf("xce-e2e-probe-%d", os.Getpid())
	var cpuset bool
	if m, err := cgroup.New(cgroup.Config{Cluster: "probe", Parent: probe}); err == nil {
		cpuset = m.CanEnforce("cpu")
		m.Close()
		testenv.RemoveCgroupTree(probe)
	}
	path := filepath.Join(t.TempDir(), "xce.toml")
	text := "[cluster]\nresource_enforce = [\"cpu\"]\n\n[queues.normal]\npriority = 30\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", path)
	var files [2]string
	var ids [2]string
	for i := range files {
		files[i] = filepath.Join(c.work, "bind"+strconv.Itoa(i))
		// Each job writes what it was told, then holds its core until the
		// other has written too, so that both run at once.
		script := "echo \"$LSB_BIND_CPU_LIST|$LSB_HOSTS|$(cat \"$LSB_AFFINITY_HOSTFILE\")|$(grep Cpus_allowed_list /proc/self/status | cut -f2)\" > " + files[i] + ".tmp; mv " + files[i] + ".tmp " + files[i] +
			"; while [ ! -s " + files[1-i] + " ]; do sleep 0.05; done"
		ids[i] = c.submit("", "-n", "1", "-o", "/dev/null", "sh", "-c", script)
	}
	var got [2]string
	for i := range files {
		got[i] = strings.TrimSpace(c.waitFile(files[i]))
	}
	for i := range ids {
		c.waitState(ids[i], "DONE")
	}
	var cores [2]string
	for i, g := range got {
		f := strings.SplitN(g, "|", 4)
		if len(f) != 4 {
			t.Fatalf("job %d wrote %q", i, g)
		}
		list, host, aff, mask := f[0], f[1], f[2], f[3]
		if _, err := strconv.Atoi(list); err != nil {
			t.Fatalf("job %d: LSB_BIND_CPU_LIST=%q, want one core", i, list)
		}
		if aff != host+" "+list {
			t.Errorf("job %d: affinity host file %q, want %q", i, aff, host+" "+list)
		}
		if cpuset && mask != list {
			t.Errorf("job %d: affinity mask %q, want its core %s", i, mask, list)
		}
		cores[i] = list
	}
	if cores[0] == cores[1] {
		t.Errorf("both jobs were bound to core %s\n%s\n%s\nxced log:\n%s", cores[0],
			c.run("", "bhist", "-l", ids[0], ids[1]).stdout, c.run("", "lshosts", "-l").stdout, c.log)
	}
}
