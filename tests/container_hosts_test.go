package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContainerBlaunchHosts: a container job on two workers (two worker
// processes of this machine): blaunch from inside the job's container to
// its other host runs the task in a container of the same image there,
// which is gone once the task has ended.
func TestContainerBlaunchHosts(t *testing.T) {
	env := podmanEnv(t)
	// The job's container sees the system's temporary directory, which
	// holds the test's binaries (blaunch) and the worker's task socket.
	tmp := os.TempDir()
	m := newMulti(t, `name = "ctr"

[apps.par]
container = "podman[image(`+podmanImages[0]+`) options(-v `+tmp+`:`+tmp+`)]"
`)
	m.worker("h1", 1)
	m.worker("h2", 1)
	m.waitHosts(map[string]string{"h1": "ok", "h2": "ok"})
	// The job's first host is the first of LSB_HOSTS; the task goes to
	// the other.
	script := `for h in $LSB_HOSTS; do other=$h; done
` + filepath.Join(binDir, "blaunch") + ` $other 'echo task=$LSF_PM_TASKID $(cat /xce-marker)'; echo rc=$?
`
	r := m.runWith(-1, env, "", "bsub", "-app", "par", "-n", "2", "-R", "span[ptile=1]", "-o", "hosts.out", script)
	mm := submittedRE.FindStringSubmatch(r.stdout)
	if mm == nil {
		t.Fatalf("bsub: %s%s", r.stdout, r.stderr)
	}
	id := mm[1]
	m.waitState(id, "DONE", "EXIT")
	out, _ := os.ReadFile(filepath.Join(m.work, "hosts.out"))
	for _, want := range []string{"task=1 " + podmanImages[0], "rc=0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the job's output lacks %q:\n%s", want, out)
		}
	}
	if left := podman(env, "ps", "-a", "--format", "{{.Names}}").stdout; strings.Contains(left, "xce-ctr-"+id) {
		t.Errorf("containers of job %s left: %s", id, left)
	}
}
