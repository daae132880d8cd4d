package tests

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// maskKeepingWidth replaces the word name with token; where spaces follow
// it (a table column), as many as keep the column's width, so the files
// are the same on machines whose user and host names differ in length.
func maskKeepingWidth(s, name, token string) string {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b( *)`)
	return re.ReplaceAllStringFunc(s, func(m string) string {
		pad := len(m) - len(name)
		if pad == 0 {
			return token
		}
		return token + strings.Repeat(" ", max(1, len(m)-len(token)))
	})
}

// TestGoldenOutputs checks the formats of the commands' outputs that do
// not depend on timing or on the machine, produced by the real binaries
// against a real xced: bjobs -l/-UF/-w/-W/-p/-sum/-A of pending and held
// jobs, bapp, busers, bparams, bugroup, bmgroup, bjgroup, lsid and bpeek.
// (bqueues, bhosts, lshosts, lsload, bhist, bacct and showstatus have
// tests of their own; running jobs' usage and times vary from run to run.)
func TestGoldenOutputs(t *testing.T) {
	me := "root"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	conf := `[cluster]
name = "golden"
default_queue = "normal"

[hosts.` + host + `]
slots = 4

[host_groups.compute]
members = ["` + host + `"]

[user_groups.chem]
members = ["` + me + `", "bob"]

[queues.normal]
priority = 30
description = "the default queue"

[queues.short]
priority = 40
max_run_limit = "1h"

[apps.fluent]
description = "CFD solver"
res_req = "select[mem > 100]"
run_limit = "30m"
`
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", path)
	work := c.work
	norm := func(s string) string {
		s = strings.ReplaceAll(s, work, "WORK")
		s = maskDates(s)
		return maskKeepingWidth(maskKeepingWidth(s, host, "HOST"), me, "USER")
	}

	// Submitted from "/": bjobs -l wraps the CWD, whose length must not
	// change from run to run.
	sub := exec.Command(filepath.Join(binDir, "bsub"), "-H", "-J", "held", "-q", "short", "-n", "2", "-R", "select[mem > 10] rusage[mem=100]",
		"-M", "2GB", "-W", "30", "-P", "proj1", "-G", "chem", "-g", "/risk/daily", "-Jd", "a held job", "sleep 1")
	sub.Dir, sub.Env = "/", append(os.Environ(), "XCE_DIR="+filepath.Join(c.dir, "state"))
	b, err := sub.CombinedOutput()
	m := submittedRE.FindStringSubmatch(string(b))
	if err != nil || m == nil {
		t.Fatalf("bsub from /: %v: %s", err, b)
	}
	held := m[1]
	c.submit("", "-H", "-J", "arr[1-3]%2", "-app", "fluent", "true")
	run := c.submit("", "-J", "printer", "-o", "printer.out", "echo printed; sleep 300")
	c.waitState(run, "RUN")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"bjobs_uf", []string{"bjobs", "-UF", held}},
		{"bjobs_wide_pending", []string{"bjobs", "-w", "-p"}},
		{"bjobs_stats_pending", []string{"bjobs", "-W", "-p"}},
		{"bjobs_sum", []string{"bjobs", "-sum"}},
		{"bjobs_arrays", []string{"bjobs", "-A"}},
		{"bapp", []string{"bapp"}},
		{"bapp_long", []string{"bapp", "-l", "fluent"}},
		{"busers_wide", []string{"busers", "-w"}},
		{"bparams", []string{"bparams"}},
		{"bugroup", []string{"bugroup"}},
		{"bmgroup", []string{"bmgroup"}},
		{"bjgroup", []string{"bjgroup", "-s"}},
	} {
		out := c.must("", tc.args[0], tc.args[1:]...)
		golden(t, "cmd_"+tc.name, norm(out))
	}
	// bjobs -l wraps -UF's lines at 80 columns (where depends on the
	// user's and host's names, so it is compared with -UF, not a file).
	long := c.must("", "bjobs", "-l", held)
	for _, l := range strings.Split(long, "\n") {
		if len(l) > 80 {
			t.Errorf("bjobs -l line over 80 columns: %q", l)
		}
	}
	// The paragraphs before the limits are the wrapped ones.
	head := func(s string) string { h, _, _ := strings.Cut(s, "\n\n RUNLIMIT"); return h }
	if uf := c.must("", "bjobs", "-UF", held); strings.ReplaceAll(head(long), "\n"+strings.Repeat(" ", 21), "") != head(uf) {
		t.Errorf("bjobs -l unwrapped is not bjobs -UF:\n%s\n---\n%s", long, uf)
	}

	// lsid's version line and bpeek's output of a running job.
	out := c.must("", "lsid")
	golden(t, "cmd_lsid", norm(regexp.MustCompile(`XCE [^,]+, revision [^,]+, go[^,]+,`).ReplaceAllString(out, "XCE VERSION, revision REV, GO,")))
	var peek string
	for i := 0; i < 100 && !strings.Contains(peek, "printed"); i++ {
		// Until the shepherd has opened the spool file, bpeek finds none.
		if r := c.run("", "bpeek", run); r.code == 0 {
			peek = r.stdout
		}
		time.Sleep(20 * time.Millisecond)
	}
	golden(t, "cmd_bpeek", peek)
	c.must("", "bkill", "0")
}
