package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// blaunch in a -n 4 job of the single-host default: the rsh form on the
// job's host, one task per slot without a host, -z, the first failing
// task's exit code, a host outside the allocation refused, SIGTERM to
// blaunch reaching its task; blaunch outside a job refused.
func TestBlaunchSingleHost(t *testing.T) {
	c := newCluster(t)
	script := `H=${LSB_HOSTS%% *}
blaunch $H "echo task \$LSF_PM_TASKID"; echo "rc1=$?"
blaunch 'echo slot $LSF_PM_TASKID' > slots.out; echo "rc2=$?"
blaunch -z "$H $H" echo z; echo "rc3=$?"
blaunch 'exit 3'; echo "rc4=$?"
blaunch nosuchhost hostname; echo "rc5=$?"
blaunch -no-shell sh -c 'echo noshell $LSF_PM_TASKID $LSB_JOBID'; echo "rc6=$?"
blaunch $H 'trap "echo got TERM; exit 7" TERM; : > ready; sleep 100 & wait' & b=$!
while [ ! -e ready ]; do sleep 0.1; done
kill -TERM $b; wait $b; echo "rc7=$?"
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
		"got TERM\nrc7=7\n",
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
	id = c.submit("", "-n", "2", "-o", "burn.out", "blaunch '"+burn+"'")
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

// blWorkers starts a controller that runs no jobs itself and one worker
// per name, each with 2 slots (the cluster harness of cluster_test.go);
// it returns the controller's cluster.
func blWorkers(t *testing.T, names ...string) *cluster {
	t.Helper()
	m := newMulti(t)
	want := map[string]string{}
	for _, n := range names {
		m.worker(n, 2)
		want[n] = "ok"
	}
	m.waitHosts(want)
	return m.cluster
}

// A -n 6 span[ptile=2] job on three of four worker processes: blaunch
// reaches each of its hosts through that host's worker (the parent of the
// task's subreaper is the worker named for it), one task per slot without
// a host, a remote task's exit code comes back, and the host the job was not given is
// refused.
func TestBlaunchCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a controller and four workers")
	}
	c := blWorkers(t, "h1", "h2", "h3", "h4")
	script := `echo "mcpu=$LSB_MCPU_HOSTS"
for h in $(echo $LSB_MCPU_HOSTS | awk '{for (i = 1; i <= NF; i += 2) print $i}'); do
  blaunch $h 'w=$(cut -d" " -f4 /proc/$PPID/stat); echo "on $(tr "\0" " " < /proc/$w/cmdline | grep -o "name h[0-9]")"'
done
echo "rc1=$?"
blaunch echo slot '$LSF_PM_TASKID' > slots.out; echo "rc2=$?"
last=$(echo $LSB_MCPU_HOSTS | awk '{print $5}')
blaunch $last 'exit 5'; echo "rc3=$?"
for h in h1 h2 h3 h4; do case " $LSB_MCPU_HOSTS " in *" $h "*) ;; *) blaunch $h true; echo "rc4=$?";; esac; done
`
	id := c.submit(script, "-n", "6", "-R", "span[ptile=2]", "-o", "cl.out")
	c.waitState(id, "DONE")
	b, err := os.ReadFile(filepath.Join(c.work, "cl.out"))
	if err != nil {
		t.Fatal(err)
	}
	out := jobOutput(t, string(b))
	var mcpu []string
	for _, line := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(line, "mcpu="); ok {
			mcpu = strings.Fields(m)
		}
	}
	if len(mcpu) != 6 {
		t.Fatalf("LSB_MCPU_HOSTS %q, want three hosts with 2 slots each:\n%s", mcpu, out)
	}
	for i := 0; i < 6; i += 2 {
		if !strings.Contains(out, "on name "+mcpu[i]+"\n") {
			t.Errorf("no task ran through the worker of %s:\n%s", mcpu[i], out)
		}
	}
	for _, want := range []string{"rc1=0\n", "rc2=0\n", "rc3=5\n", "rc4=255\n", "is not allocated to job <" + id + ">"} {
		if !strings.Contains(out, want) {
			t.Errorf("the job's output lacks %q:\n%s", want, out)
		}
	}
	slots, _ := os.ReadFile(filepath.Join(c.work, "slots.out"))
	lines := strings.Split(strings.TrimSpace(string(slots)), "\n")
	sort.Strings(lines)
	if strings.Join(lines, ",") != "slot 4,slot 5,slot 6,slot 7,slot 8,slot 9" {
		t.Errorf("blaunch without a host: %q, want slots 4 to 9", lines)
	}

	// bkill kills the tasks on every host.
	mark := "4" + strconv.Itoa(os.Getpid()%10000+10000)
	id = c.submit("", "-n", "6", "-R", "span[ptile=2]", "-o", "clkill.out", "blaunch -no-shell sleep "+mark)
	c.waitState(id, "RUN")
	if !blWaitProcs(t, "sleep\x00"+mark+"\x00", 6) {
		t.Fatal("the six tasks did not start")
	}
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
	if !blWaitProcs(t, "sleep\x00"+mark+"\x00", 0) {
		t.Error("tasks outlived bkill of their job")
	}
}

// An MPI hello world across three workers, launched by MPICH's hydra
// through blaunch (its lsf bootstrap and resource manager); skipped where
// MPICH is not installed.
func TestBlaunchMPI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a controller and three workers")
	}
	mpicc, err := exec.LookPath("mpicc")
	if err != nil {
		t.Skip("no MPICH (mpicc) here")
	}
	c := blWorkers(t, "h1", "h2", "h3")
	src := filepath.Join(c.work, "hello.c")
	os.WriteFile(src, []byte(`#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int rank, size, sum = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("hello rank %d of %d task %s sum %d\n", rank, size, getenv("LSF_PM_TASKID") ? "set" : "unset", sum);
	MPI_Finalize();
	return 0;
}
`), 0o644)
	if out, err := exec.Command(mpicc, "-o", filepath.Join(c.work, "hello"), src).CombinedOutput(); err != nil {
		t.Skipf("mpicc: %v\n%s", err, out)
	}
	id := c.submit("", "-n", "6", "-R", "span[ptile=2]", "-o", "mpi.out",
		"mpiexec -rmk lsf -launcher lsf -launcher-exec $(command -v blaunch) ./hello")
	c.waitState(id, "DONE", "EXIT")
	b, _ := os.ReadFile(filepath.Join(c.work, "mpi.out"))
	out := jobOutput(t, string(b))
	for r := 0; r < 6; r++ {
		if !strings.Contains(out, fmt.Sprintf("hello rank %d of 6 task set sum 15\n", r)) {
			t.Errorf("rank %d missing:\n%s", r, out)
		}
	}
}
