package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lsfDir writes an LSF configuration directory for the local host: files
// maps a file name to its text, where THISHOST stands for the host's
// name.
func lsfDir(t *testing.T, files map[string]string) string {
	t.Helper()
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(text, "THISHOST", host)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// xced runs xced with args (not a controller: its config subcommands).
func xced(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "xced"), args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("xced %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// importLSF imports dir into an xce.toml and returns its path; the import
// must succeed without --accept-loss.
func importLSF(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "xce.toml")
	if r := xced(t, "config", "import-lsf", dir, "-o", path); r.code != 0 {
		t.Fatalf("import-lsf: exit %d\n%s", r.code, r.stderr)
	}
	return path
}

var lsfPolicyFiles = map[string]string{
	"lsf.conf": "LSF_UNIT_FOR_LIMITS=KB\n",
	"lsf.shared": `Begin Cluster
ClusterName
imported
End Cluster
Begin HostModel
MODELNAME  CPUFACTOR  ARCHITECTURE
fastbox    42.5       ()
End HostModel
Begin Resource
RESOURCENAME  TYPE     INTERVAL INCREASING CONSUMABLE DESCRIPTION
matlab_lic    Numeric  ()       N          Y          (MATLAB licences)
End Resource
`,
	"lsf.cluster.imported": `Begin Host
HOSTNAME  model    type  server  RESOURCES
THISHOST      fastbox  !     1       ()
End Host
Begin ResourceMap
RESOURCENAME  LOCATION
matlab_lic    (1@[all])
End ResourceMap
`,
	"lsb.params": `Begin Parameters
DEFAULT_QUEUE     = normal
MAX_USER_PRIORITY = 10
End Parameters
`,
	"lsb.hosts": `Begin Host
HOST_NAME  MXJ
THISHOST       4
End Host
`,
	"lsb.queues": `Begin Queue
QUEUE_NAME = normal
PRIORITY   = 30
End Queue
Begin Queue
QUEUE_NAME  = inter
INTERACTIVE = ONLY
End Queue
Begin Queue
QUEUE_NAME  = batch
INTERACTIVE = NO
End Queue
`,
	"lsb.applications": `Begin Application
NAME    = matlab
RES_REQ = rusage[matlab_lic=1]
RUNTIME = 10
End Application
`,
}

// TestImportLSFRefusesAsLSF imports an LSF configuration and checks, by
// submitting jobs, that the imported cluster refuses and holds what the
// LSF files say: INTERACTIVE = ONLY and NO, MAX_USER_PRIORITY, the
// ResourceMap [all] licence count a profile's rusage consumes,
// LSF_UNIT_FOR_LIMITS=KB for a bare rusage[mem=] amount, and the CPU
// factor of a host's model. Before, the import dropped these (or read the
// amount as MB) and the controller started anyway.
func TestImportLSFRefusesAsLSF(t *testing.T) {
	// Policy that cannot be translated fails the import, naming it.
	lossy := map[string]string{"lsb.resources": "Begin Limit\nNAME = p\nUSERS = all\nELIGIBLE_PEND_JOBS = 3\nEnd Limit\n"}
	for k, v := range lsfPolicyFiles {
		lossy[k] = v
	}
	out := filepath.Join(t.TempDir(), "lossy.toml")
	r := xced(t, "config", "import-lsf", lsfDir(t, lossy), "-o", out)
	if r.code == 0 || !strings.Contains(r.stderr, "lsb.resources:4: ELIGIBLE_PEND_JOBS: policy lost: ") {
		t.Errorf("an import that loses a Limit: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the failed import wrote its xce.toml")
	}

	conf := importLSF(t, lsfDir(t, lsfPolicyFiles))
	if r := xced(t, "config", "check", conf); r.code != 0 {
		t.Fatalf("xced config check: %s%s", r.stdout, r.stderr)
	}
	c := newCluster(t, "--config", conf)

	refused := func(want string, args ...string) {
		t.Helper()
		if r := c.run("", "bsub", args...); r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("bsub %v: exit %d, %q %q; want %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	refused("Queue only accepts interactive jobs", "-q", "inter", "true")
	refused("Queue does not accept interactive jobs", "-q", "batch", "-I", "true")
	refused("99999999999: Bad user priority", "-sp", "99999999999", "true")

	// One matlab_lic licence in the cluster: the second job of the
	// profile waits for the first, while other jobs run.
	first := c.submit("", "-app", "matlab", "sleep 60")
	c.waitState(first, "RUN")
	second := c.submit("", "-app", "matlab", "true")
	other := c.submit("", "true")
	c.waitState(other, "DONE")
	if s := c.stat(second); s != "PEND" {
		t.Errorf("the second licensed job is %s while the only licence is held", s)
	}
	c.must("", "bkill", first)
	c.waitState(second, "DONE")

	// rusage[mem=500000] is 500000 KB (488 MB) under LSF_UNIT_FOR_LIMITS=KB;
	// read as MB it asked for 488 GB and pended forever.
	mem := c.submit("", "-R", "select[mem>1000] rusage[mem=500000]", "true")
	c.waitState(mem, "DONE")

	if out := c.must("", "lshosts"); !strings.Contains(out, "42.5") {
		t.Errorf("lshosts does not show the model's CPU factor 42.5:\n%s", out)
	}

	// -sp within MAX_USER_PRIORITY for a user; administrators go beyond.
	if os.Geteuid() != 0 {
		t.Skip("needs root to submit -sp as a user who is not an administrator")
	}
	const nobody = 65534
	os.Chmod(c.dir, 0o755)
	os.Chmod(c.work, 0o777)
	if r := c.runAs(nobody, "", "bsub", "-sp", "11", "-H", "true"); r.code == 0 || !strings.Contains(r.stderr, "Bad user priority") {
		t.Errorf("bsub -sp 11 as a user, MAX_USER_PRIORITY 10: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := c.runAs(nobody, "", "bsub", "-sp", "10", "-H", "true"); r.code != 0 {
		t.Errorf("bsub -sp 10 as a user: exit %d %q", r.code, r.stderr)
	}
	c.submit("", "-sp", "1000", "-H", "true") // an administrator
}

// TestImportLSFLimits imports a Limit section and a host's JL/U as
// [[limits]] and checks that the cluster holds them. (PJOB_LIMIT's
// translation is checked by lib/config/lsfimport's goldens: what it
// allows depends on the host's processors.)
func TestImportLSFLimits(t *testing.T) {
	files := map[string]string{
		"lsf.conf":   "LSF_UNIT_FOR_LIMITS=MB\n",
		"lsf.shared": "Begin Cluster\nClusterName\nlim\nEnd Cluster\n",
		"lsf.cluster.lim": `Begin Host
HOSTNAME  model  type  server  RESOURCES
THISHOST      !      !     1       ()
End Host
`,
		"lsb.hosts": "Begin Host\nHOST_NAME  MXJ  JL/U\nTHISHOST   4    2\nEnd Host\n",
		"lsb.queues": `Begin Queue
QUEUE_NAME = normal
PRIORITY   = 30
End Queue
Begin Queue
QUEUE_NAME = capped
PRIORITY   = 30
End Queue
`,
		"lsb.params": "Begin Parameters\nDEFAULT_QUEUE = normal\nEnd Parameters\n",
		"lsb.resources": `Begin Limit
NAME   = capped_queue
QUEUES = capped
SLOTS  = 1
End Limit
`,
	}
	conf := importLSF(t, lsfDir(t, files))
	if r := xced(t, "config", "check", conf); r.code != 0 {
		t.Fatalf("xced config check: %s%s", r.stdout, r.stderr)
	}
	c := newCluster(t, "--config", conf)
	// held submits n jobs to queue; the first n-1 run, the last is held.
	// A probe job in probeQueue (when given) runs meanwhile, so the last
	// one has been scheduled past, not merely not yet reached.
	held := func(queue string, n int, probeQueue string) {
		t.Helper()
		var ids []string
		for range n {
			ids = append(ids, c.submit("", "-q", queue, "sleep 60"))
		}
		for _, id := range ids[:n-1] {
			c.waitState(id, "RUN")
		}
		if probeQueue != "" {
			c.waitState(c.submit("", "-q", probeQueue, "true"), "DONE")
		}
		if s := c.stat(ids[n-1]); s != "PEND" {
			t.Errorf("queue %s: job %d of %d is %s, beyond the limit", queue, n, n, s)
		}
		for _, id := range ids {
			c.runQuiet("bkill", id)
		}
		for _, id := range ids {
			c.waitState(id, "EXIT")
		}
	}
	held("capped", 2, "normal") // Limit QUEUES = capped SLOTS = 1
	held("normal", 3, "")       // JL/U 2 on the host
}
