package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// clusterConfig is an xce.toml for this host, with a limited queue and an
// application profile that wraps its jobs.
func clusterConfig(t *testing.T) string {
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	text := `
[cluster]
name = "e2e"
default_queue = "normal"

[hosts.` + host + `]
slots = 4

[queues.normal]
priority = 30

[queues.short]
priority = 50
max_run_limit = "1h"
max_slots_per_user = 1

[apps.wrapped]
res_req = "select[mem>0] span[hosts=1]"
fixed = ["res_req"]
pre_exec = "echo profile-pre"
job_starter = "env WRAPPED=yes %USRCMD"
env = { FROM_PROFILE = "1" }
`
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// xced --config: queues, ceilings, per-user limits and application
// profiles come from xce.toml.
func TestConfiguredCluster(t *testing.T) {
	c := newCluster(t, "--config", clusterConfig(t))
	if out := c.must("", "bqueues"); !regexp.MustCompile(`(?s)^QUEUE_NAME.*\nshort\s+50 .*\nnormal\s+30 `).MatchString(out) {
		t.Errorf("bqueues:\n%s", out)
	}
	r := c.run("", "bsub", "-q", "short", "-W", "120", "true")
	if r.code != 255 || !strings.Contains(r.stderr, "queue short allows at most") || !strings.HasSuffix(r.stderr, ". Job not submitted.\n") {
		t.Errorf("a run limit over the queue's: %d %q", r.code, r.stderr)
	}
	a := c.submit("", "-q", "short", "sleep 30")
	b := c.submit("", "-q", "short", "sleep 30")
	c.waitState(a, "RUN")
	var reasons string
	for i := 0; i < 100 && !strings.Contains(reasons, "per-user"); i++ {
		time.Sleep(20 * time.Millisecond)
		reasons = c.must("", "bjobs", "-p", b)
	}
	if !strings.Contains(reasons, " User has reached the per-user job slot limit of the queue;") {
		t.Errorf("bjobs -p:\n%s", reasons)
	}
	c.must("", "bkill", a, b)

	w := c.submit("", "-app", "wrapped", "-o", "w.%J", "-E", "echo job-pre", `echo $WRAPPED $FROM_PROFILE`)
	c.waitState(w, "DONE")
	out, _ := os.ReadFile(filepath.Join(c.work, "w."+w))
	if !strings.HasPrefix(jobOutput(t, string(out)), "profile-pre\njob-pre\nyes 1\n") {
		t.Errorf("profile pre-exec, job starter and environment: %q", out)
	}
	r = c.run("", "bsub", "-app", "wrapped", "-R", "span[ptile=2]", "true")
	if r.code != 255 || !strings.Contains(r.stderr, "wrapped") {
		t.Errorf("-R against a fixed profile requirement: %d %q", r.code, r.stderr)
	}
}

// xced config check validates a file and prints the effective
// configuration, or the errors with file and line.
func TestConfigCheck(t *testing.T) {
	good := clusterConfig(t)
	out, err := exec.Command(filepath.Join(binDir, "xced"), "config", "check", good).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "[queues.short]") {
		t.Errorf("config check of a good file: %v\n%s", err, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[cluster]\nname = \"x\"\n\n[queues.normal]\npriority = 30\nmax_memory = \"1GB\"\n"), 0o644)
	out, err = exec.Command(filepath.Join(binDir, "xced"), "config", "check", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bad.toml:6: queues.normal.max_memory: unknown key") {
		t.Errorf("config check of a bad file: %v\n%s", err, out)
	}
	// Without a file it says what to give, not cobra's count of arguments.
	out, err = exec.Command(filepath.Join(binDir, "xced"), "config", "check").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "name the configuration file to check") || strings.Contains(string(out), "arg(s)") {
		t.Errorf("config check without a file: %v\n%s", err, out)
	}
}

// A user's cluster-wide slot limit (users.NAME.max_slots): jobs beyond it
// pend with LSF's reason, and busers shows it as MAX.
func TestUserSlotLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	os.WriteFile(path, []byte("[queues.normal]\n\n[users.default]\nmax_slots = 1\n"), 0o644)
	c := newCluster(t, "--config", path)
	a := c.submit("", "sleep 30")
	b := c.submit("", "sleep 30")
	c.waitState(a, "RUN")
	var why string
	for i := 0; i < 100 && !strings.Contains(why, "job slot limit"); i++ {
		time.Sleep(20 * time.Millisecond)
		why = c.must("", "bjobs", "-p", b)
	}
	if !strings.Contains(why, " The user has reached his/her job slot limit;") {
		t.Errorf("bjobs -p:\n%s", why)
	}
	user := strings.Fields(c.must("", "bjobs", "-noheader", "-o", "user", a))[0]
	out := c.must("", "busers", user)
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(user) + `\s+-\s+1\s+2\s+1\s+1\s`).MatchString(out) {
		t.Errorf("busers:\n%s", out)
	}
	if r := c.run("", "bsub", "-n", "2", "true"); r.code != 255 || !strings.Contains(r.stderr, "may use at most 1 job slot.") {
		t.Errorf("a job over the user's limit: %d %q", r.code, r.stderr)
	}
	c.must("", "bkill", a, b)
}

// xced writes an LSF environment directory; with LSF_ENVDIR pointing at
// it (and no XCE_DIR), the commands find the controller and read memory
// limits in its LSF_UNIT_FOR_LIMITS (MB), as workflow tools expect.
func TestLSFEnvDir(t *testing.T) {
	c := newCluster(t)
	envdir := filepath.Join(c.dir, "state", "conf")
	conf, err := os.ReadFile(filepath.Join(envdir, "lsf.conf"))
	if err != nil || !strings.Contains(string(conf), "LSF_UNIT_FOR_LIMITS=MB") {
		t.Fatalf("lsf.conf: %v\n%s", err, conf)
	}
	cmd := exec.Command(filepath.Join(binDir, "bsub"), "-M", "4000", "-H", "true")
	cmd.Dir = c.work
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XCE_DIR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "LSF_ENVDIR="+envdir)
	out, err := cmd.CombinedOutput()
	m := submittedRE.FindStringSubmatch(string(out))
	if err != nil || m == nil {
		t.Fatalf("bsub with LSF_ENVDIR only: %v %s", err, out)
	}
	if lim := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "memlimit", m[1])); !strings.HasPrefix(lim, "3.9") {
		t.Errorf("memlimit of -M 4000 in MB: %q", lim)
	}
}
