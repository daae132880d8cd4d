package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// blaunch in a -n 4 job of the single-host default: the rsh form on the
// job's host, one task per slot without a host, -z, the first failing
// task's exit code, a host outside the allocation refused; blaunch
// outside a job refused.
func TestBlaunchSingleHost(t *testing.T) {
	c := newCluster(t)
	script := `H=${LSB_HOSTS%% *}
blaunch $H sh -c "echo task \$LSF_PM_TASKID"; echo "rc1=$?"
blaunch sh -c 'echo slot $LSF_PM_TASKID' > slots.out; echo "rc2=$?"
blaunch -z "$H $H" echo z; echo "rc3=$?"
blaunch sh -c 'exit 3'; echo "rc4=$?"
blaunch nosuchhost hostname; echo "rc5=$?"
blaunch -no-shell sh -c 'echo noshell $LSF_PM_TASKID $LSB_JOBID'; echo "rc6=$?"
`
	id := c.submit(script, "-n", "4", "-o", "bl.out")
	c.waitState(id, "DONE")
	b, err := os.ReadFile(filepath.Join(c.work, "bl.out"))
	if err != nil {
		t.Fatal(err)
	}
	out := jobOutput(t, string(b))
	for _, want := range []string{
		"task 1\nrc1=0\n",
		"rc2=0\n",
		"z\nz\nrc3=0\n",
		"rc4=3\n",
		"blaunch: host <nosuchhost> is not allocated to job <" + id + ">\nrc5=255\n",
		"noshell 12 " + id + "\n",
		"rc6=0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the job's output lacks %q:\n%s", want, out)
		}
	}
	slots, _ := os.ReadFile(filepath.Join(c.work, "slots.out"))
	lines := strings.Split(strings.TrimSpace(string(slots)), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	if len(lines) != 4 || !seen["slot 2"] || !seen["slot 3"] || !seen["slot 4"] || !seen["slot 5"] {
		t.Errorf("blaunch without a host on a -n 4 job: %q, want slots 2 to 5", lines)
	}

	r := c.run("", "blaunch", "hostname")
	if r.code != 255 || r.stderr != "blaunch: cannot run without jobid\n" {
		t.Errorf("blaunch outside a job: exit %d, %q", r.code, r.stderr)
	}
}

// bkill of a job kills its blaunch tasks, and a task's CPU time counts
// in the job's.
func TestBlaunchKillAndUsage(t *testing.T) {
	c := newCluster(t)
	mark := "3" + strconv.Itoa(os.Getpid()%10000+10000) // a sleep no one else runs
	id := c.submit("", "-n", "2", "-o", "kill.out", "blaunch -no-shell sleep "+mark)
	c.waitState(id, "RUN")
	if !blWaitProcs(t, "sleep\x00"+mark+"\x00", 2) {
		t.Fatal("the tasks did not start")
	}
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
	if !blWaitProcs(t, "sleep\x00"+mark+"\x00", 0) {
		t.Error("the job's tasks outlived bkill")
	}

	// About a second of CPU in the tasks, none in the job's own shell.
	burn := `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done`
	id = c.submit("", "-n", "2", "-o", "burn.out", "blaunch sh -c '"+burn+"'")
	c.waitState(id, "DONE")
	cpu := strings.TrimSpace(c.must("", "bjobs", "-a", "-noheader", "-o", "cpu_used", id))
	if f := strings.Fields(cpu); len(f) == 0 || f[0] == "0.0" || f[0] == "00:00:00" || f[0] == "-" {
		t.Errorf("bjobs cpu_used %q: the tasks' CPU time is not the job's", cpu)
	}
}

// blWaitProcs waits until n processes have a command line containing
// cmdline (NUL-separated words).
func blWaitProcs(t *testing.T, cmdline string, n int) bool {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		got := 0
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if strings.Contains(string(b), cmdline) && !strings.Contains(string(b), "blaunch") {
				got++
			}
		}
		if got == n {
			return true
		}
	}
	return false
}
