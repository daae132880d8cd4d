package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The CPU time a job's cgroup measured is what its fairshare account is
// charged: a job whose busy loop left its session (setsid, double fork)
// ends with that loop's CPU time in bacct and in its user's CPU_TIME in
// bqueues -r's share table.
func TestCgroupCPUChargedToFairshare(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(conf, []byte("[cluster]\ndefault_queue = \"fair\"\n\n[queues.fair]\nfairshare = { default = 1 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, uid := cgCluster(t, "--config", conf)
	// A loop that runs until it has used half a second of CPU (50 ticks
	// of its own utime and stime), on any machine and at any load.
	loop := `while :; do read -r s < /proc/$$/stat; set -- ${s##*) }; [ $(( ${12} + ${13} )) -ge 50 ] && break; done; touch loop.done`
	id := submitAs(t, c, uid, "-o", "/dev/null", `(setsid sh -c '`+loop+`' &); while [ ! -e loop.done ]; do sleep 0.1; done`)
	c.waitState(id, "DONE")

	acct := c.must("", "bacct", "-l", id)
	if cpu := acctCPU(acct); cpu < 0.45 {
		t.Errorf("bacct CPU_T %.2f s, want the loop's (at least 0.45 s):\n%s", cpu, acct)
	}
	out := c.must("", "bqueues", "-r", "fair")
	var row []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 8 && f[0] == "xcetest1" {
			row = f
		}
	}
	if row == nil {
		t.Fatalf("no share account of xcetest1 in bqueues -r:\n%s", out)
	}
	t.Logf("bacct CPU_T %.2f s, CPU_TIME %s s", acctCPU(acct), row[5])
	if cpu, _ := strconv.ParseFloat(row[5], 64); cpu < 0.45 {
		t.Errorf("xcetest1's CPU_TIME %s, want the loop's (at least 0.45 s):\n%s", row[5], out)
	}
}

// acctCPU is the CPU_T of bacct -l's usage line, -1 if there is none.
func acctCPU(acct string) float64 {
	lines := strings.Split(acct, "\n")
	for i, l := range lines {
		if strings.Contains(l, "CPU_T") && i+1 < len(lines) {
			if f := strings.Fields(lines[i+1]); len(f) > 0 {
				v, err := strconv.ParseFloat(f[0], 64)
				if err == nil {
					return v
				}
			}
		}
	}
	return -1
}
