package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestElimScratch: an elim reports scratch; lsload -l shows it, and
// select[scratch>N] runs a job that fits and leaves one asking more
// pending. A dying elim and one writing garbage change nothing else.
func TestElimScratch(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("elims run only when root owns them")
	}
	elims := t.TempDir() // 0700, root's
	for name, body := range map[string]string{
		"elim.scratch": "while :; do echo '2 scratch 500 undefined_res 1'; sleep 0.2; done\n",
		"elim.garbage": "while :; do echo 'garbage here'; sleep 0.2; done\n",
		"elim.dies":    "exit 1\n",
	} {
		if err := os.WriteFile(filepath.Join(elims, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(t.TempDir(), "xce.toml")
	text := "[cluster]\nelim_dir = \"" + elims + "\"\n\n[resources.scratch]\ndescription = \"scratch space (MB)\"\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", conf)

	var out string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		out = c.must("", "lsload", "-l")
		if strings.Contains(out, "scratch") && strings.Contains(out, " 500") {
			break
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.HasSuffix(lines[0], " scratch") || !strings.HasSuffix(lines[1], " 500") {
		t.Fatalf("lsload -l does not show scratch:\n%s", out)
	}
	if strings.Contains(out, "undefined_res") {
		t.Errorf("lsload -l shows a resource the configuration does not define:\n%s", out)
	}

	big := c.submit("", "-R", "select[scratch>1000]", "true")
	small := c.submit("", "-R", "select[scratch>100]", "true")
	c.waitState(small, "DONE")
	if got := c.stat(big); got != "PEND" {
		t.Errorf("job asking scratch>1000 is %s, want PEND", got)
	}
}
