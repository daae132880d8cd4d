package tests

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clusterWith is an xce.toml: a normal queue, one with a default memory
// limit, and the [cluster] keys given.
func clusterWith(t *testing.T, clusterKeys string) string {
	t.Helper()
	text := "[cluster]\nname = \"e2e\"\ndefault_queue = \"normal\"\n" + clusterKeys + `
[queues.normal]
priority = 30

[queues.memq]
priority = 20
default_mem = "16MB"
`
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hog is a job that holds about 64 MB for 3 seconds, then ends with 0;
// longHog holds it for 30 seconds, time enough to be caught on a busy host.
const (
	hog     = `perl -e '$x = "a" x (64 << 20); sleep 3; exit 0'`
	longHog = `perl -e '$x = "a" x (64 << 20); sleep 30; exit 0'`
)

func needPerl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl (the memory-hungry job) is not installed")
	}
}

// exitReason is bjobs' exit_reason of a job.
func exitReason(c *cluster, id string) string {
	return strings.TrimSpace(c.must("", "bjobs", "-a", "-noheader", "-o", "exit_reason", id))
}

// -M by default is LSF's: a per-process soft RLIMIT_RSS, which Linux does
// not enforce, so a job over it runs to its end; -M N! still kills it.
func TestMemLimitDefaultNotEnforced(t *testing.T) {
	needPerl(t)
	c := newCluster(t, "--config", clusterWith(t, ""))
	over := c.submit("", "-M", "16MB", hog)
	queue := c.submit("", "-q", "memq", hog)
	hard := c.submit("", "-M", "16MB!", longHog)
	c.waitState(over, "DONE")
	c.waitState(queue, "DONE")
	c.waitState(hard, "EXIT")
	if r := exitReason(c, hard); !strings.Contains(r, "TERM_MEMLIMIT") {
		t.Errorf("-M N! job's exit reason %q, want TERM_MEMLIMIT", r)
	}
	if l := c.must("", "bjobs", "-l", over); strings.Contains(l, "TERM_MEMLIMIT") {
		t.Errorf("a job over a soft -M was killed:\n%s", l)
	}
}

// With LSB_JOB_MEMLIMIT or LSB_MEMLIMIT_ENFORCE the whole job is killed at
// its limit, -M's or the queue's.
func TestMemLimitEnforced(t *testing.T) {
	needPerl(t)
	for _, key := range []string{"job_memlimit", "memlimit_enforce"} {
		t.Run(key, func(t *testing.T) {
			c := newCluster(t, "--config", clusterWith(t, key+" = true\n"))
			over := c.submit("", "-M", "16MB", longHog)
			queue := c.submit("", "-q", "memq", longHog)
			under := c.submit("", "-M", "1GB", hog)
			for _, id := range []string{over, queue} {
				c.waitState(id, "EXIT")
				if r := exitReason(c, id); !strings.Contains(r, "TERM_MEMLIMIT") {
					t.Errorf("job %s: exit reason %q, want TERM_MEMLIMIT", id, r)
				}
			}
			c.waitState(under, "DONE")
		})
	}
}

// reportRule starts the job report LSB_STDOUT_DIRECT appends after the
// output.
const reportRule = "\n------------------------------------------------------------\nSender: LSF System <"

// jobOutput is the job's own output in an -o file of either layout: the
// spooled one (the report first, the output after "The output (if any)
// follows:", before any PS: part) or LSB_STDOUT_DIRECT's (the output, then
// the report).
func jobOutput(t *testing.T, file string) string {
	t.Helper()
	if strings.HasPrefix(file, "Sender: LSF System <") {
		_, out, ok := strings.Cut(file, "\nThe output (if any) follows:\n\n")
		if !ok {
			t.Errorf("a spooled -o file without its output part:\n%s", file)
		}
		out, _, _ = strings.Cut(out, "\n\nPS:\n\nRead file <")
		return out
	}
	out, _, ok := strings.Cut(file, reportRule)
	if !ok {
		t.Errorf("an -o file without a job report:\n%s", file)
	}
	return out
}

// Without LSB_STDOUT_DIRECT (the default) a job's output is spooled and
// copied to -o when it ends, the report at the top: a job may create the
// directory of its own -o file, and bpeek reads the spool meanwhile.
func TestOutputSpooled(t *testing.T) {
	c := newCluster(t)
	script := "#BSUB -o logs/%J.out\nmkdir -p logs\necho first\nsleep 300\n"
	id := c.submit(script)
	c.waitState(id, "RUN")
	var peek string
	for i := 0; i < 200 && !strings.Contains(peek, "first"); i++ {
		if r := c.run("", "bpeek", id); r.code == 0 {
			peek = r.stdout
		}
		time.Sleep(25 * time.Millisecond)
	}
	if peek != "<< output from stdout >>\nfirst\n" {
		t.Errorf("bpeek of the running job: %q", peek)
	}
	if _, err := os.Stat(filepath.Join(c.work, "logs", id+".out")); !os.IsNotExist(err) {
		t.Errorf("the -o file exists while the job runs: %v", err)
	}
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
	var b []byte
	for i := 0; i < 200 && len(b) == 0; i++ { // the copy is done as the job's end is recorded
		b, _ = os.ReadFile(filepath.Join(c.work, "logs", id+".out"))
		time.Sleep(25 * time.Millisecond)
	}
	s := string(b)
	// Without administrators configured, the controller's own user (an
	// administrator always) sends the report.
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "Sender: LSF System <"+me.Username+"@") || !strings.Contains(s, "\nSubject: Job "+id+": ") ||
		!strings.Contains(s, "\nThe output (if any) follows:\n\nfirst\n") {
		t.Errorf("logs/%s.out:\n%s", id, s)
	}
}

// With stdout_direct (LSB_STDOUT_DIRECT=Y) the job writes into -o as it
// runs, the report appended after its output, and an -o directory that is
// missing when the job starts is an error.
func TestOutputDirect(t *testing.T) {
	c := newCluster(t, "--config", clusterWith(t, "stdout_direct = true\n"))
	id := c.submit("", "-o", "direct.out", "echo straight; sleep 300")
	c.waitState(id, "RUN")
	var b []byte
	for i := 0; i < 200 && !strings.Contains(string(b), "straight"); i++ {
		b, _ = os.ReadFile(filepath.Join(c.work, "direct.out"))
		time.Sleep(25 * time.Millisecond)
	}
	if string(b) != "straight\n" {
		t.Errorf("direct.out while the job runs: %q", b)
	}
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
	for i := 0; i < 200 && !strings.Contains(string(b), "Sender:"); i++ { // appended as the end is recorded
		b, _ = os.ReadFile(filepath.Join(c.work, "direct.out"))
		time.Sleep(25 * time.Millisecond)
	}
	if !strings.HasPrefix(string(b), "straight\n"+reportRule) {
		t.Errorf("direct.out:\n%s", b)
	}
	bad := c.submit("", "-o", "nodir/%J.out", "mkdir -p nodir; echo late")
	c.waitState(bad, "EXIT")
}

// A job its owner kills reports why, as LSF's report does ("TERM_OWNER:
// job killed by owner."), and the report comes from the primary cluster
// administrator the configuration names, not a fixed "lsfadmin"; bhist -l
// names the requirement the job was dispatched with even when it gave
// none.
func TestReportOfKilledJob(t *testing.T) {
	c := newCluster(t, "--config", clusterWith(t, "administrators = [\"opsadmin\"]\n"))
	id := c.submit("", "-o", "killed.out", "echo begun; sleep 300")
	c.waitState(id, "RUN")
	for i := 0; i < 400; i++ { // the job has started its command
		if r := c.run("", "bpeek", id); strings.Contains(r.stdout, "begun") {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
	var s string
	for i := 0; i < 400 && !strings.Contains(s, "Resource usage summary"); i++ {
		b, _ := os.ReadFile(filepath.Join(c.work, "killed.out"))
		s = string(b)
		time.Sleep(25 * time.Millisecond)
	}
	for _, want := range []string{
		"Sender: LSF System <opsadmin@",
		"\nTERM_OWNER: job killed by owner.\nExited with exit code ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the report lacks %q:\n%s", want, s)
		}
	}
	hist := c.must("", "bhist", "-l", id)
	if !strings.Contains(strings.ReplaceAll(hist, "\n                     ", ""), ", Effective RES_REQ <select[") {
		t.Errorf("bhist -l: the Dispatched line names no effective requirement:\n%s", hist)
	}
}
