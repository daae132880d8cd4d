package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// hog is a job that holds about 64 MB for 3 seconds, then ends with 0.
const hog = `perl -e '$x = "a" x (64 << 20); sleep 3; exit 0'`

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
	hard := c.submit("", "-M", "16MB!", hog)
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
			over := c.submit("", "-M", "16MB", hog)
			queue := c.submit("", "-q", "memq", hog)
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
