package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	writeElims(t, elims)
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

// writeElims puts in dir an elim reporting scratch (500 unless a value
// is given) and an undefined resource, one writing garbage and one that
// exits at once.
func writeElims(t *testing.T, dir string, value ...string) {
	t.Helper()
	v := "500"
	if len(value) > 0 {
		v = value[0]
	}
	for name, body := range map[string]string{
		"elim.scratch": "while :; do echo '2 scratch " + v + " undefined_res 1'; sleep 0.2; done\n",
		"elim.garbage": "while :; do echo 'garbage here'; sleep 0.2; done\n",
		"elim.dies":    "exit 1\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestElimWorkers: the workers run their elims, one host with its own
// elim_dir; select[] places by their values.
func TestElimWorkers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("elims run only when root owns them")
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	writeElims(t, dirA, "500")
	writeElims(t, dirB, "50")
	m := newMulti(t, fmt.Sprintf("elim_dir = %q\n\n[resources.scratch]\n\n[hosts.ea]\n\n[hosts.eb]\nelim_dir = %q", dirA, dirB))
	m.worker("ea", 2)
	m.worker("eb", 2)
	var out string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		out = m.must("", "lsload", "-l", "ea", "eb")
		if strings.Contains(out, " 500\n") && strings.Contains(out, " 50\n") {
			break
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		if want := map[string]string{"ea": "500", "eb": "50"}[f[0]]; f[len(f)-1] != want {
			t.Errorf("lsload -l: %s has scratch %s, want %s:\n%s", f[0], f[len(f)-1], want, out)
		}
	}
	big := m.submit("", "-R", "select[scratch>1000]", "true")
	mid := m.submit("", "-R", "select[scratch>100]", "true")
	m.waitState(mid, "DONE")
	if eh := m.execHosts(mid); eh != "ea" {
		t.Errorf("job asking scratch>100 ran on %q, want ea", eh)
	}
	if got := m.stat(big); got != "PEND" {
		t.Errorf("job asking scratch>1000 is %s, want PEND", got)
	}
	// order[] sorts by the reported value: most first, or least with -.
	most := m.submit("", "-R", "order[scratch]", "true")
	least := m.submit("", "-R", "order[-scratch]", "true")
	m.waitState(most, "DONE")
	m.waitState(least, "DONE")
	if eh := m.execHosts(most); eh != "ea" {
		t.Errorf("job with order[scratch] ran on %q, want ea (scratch 500)", eh)
	}
	if eh := m.execHosts(least); eh != "eb" {
		t.Errorf("job with order[-scratch] ran on %q, want eb (scratch 50)", eh)
	}
}

// TestElimRusage: rusage[] reserves from a reported value: a second job
// that would need more than is left pends with a reason naming it until
// the first ends; bhosts -l, lshosts -s and lsload -s show the value and
// the reservation.
func TestElimRusage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("elims run only when root owns them")
	}
	elims := t.TempDir()
	writeElims(t, elims)
	conf := filepath.Join(t.TempDir(), "xce.toml")
	text := "[cluster]\nelim_dir = \"" + elims + "\"\n\n[resources.scratch]\nconsumable = true\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", conf)
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(c.must("", "lsload", "-l"), " 500") {
			break
		}
	}
	first := c.submit("", "-R", "rusage[scratch=300]", "sleep", "600")
	c.waitState(first, "RUN")
	second := c.submit("", "-R", "rusage[scratch=300]", "true")
	var why string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if why = c.must("", "bjobs", "-p", second); strings.Contains(why, "scratch") {
			break
		}
	}
	if !strings.Contains(why, "rusage[scratch=300]") || c.stat(second) != "PEND" {
		t.Errorf("the second job does not pend for scratch:\n%s", why)
	}
	long := c.must("", "bhosts", "-l")
	if !regexp.MustCompile(`(?m)^ +scratch\n Total +200\n Reserved +300\.0$`).MatchString(long) {
		t.Errorf("bhosts -l does not show scratch 200 left, 300 reserved:\n%s", long)
	}
	if out := c.must("", "lshosts", "-s", "scratch"); !regexp.MustCompile(`(?m)^scratch +500 +\S`).MatchString(out) {
		t.Errorf("lshosts -s scratch:\n%s", out)
	}
	if out := c.must("", "lsload", "-s"); !regexp.MustCompile(`(?m)^scratch +200 +\S`).MatchString(out) {
		t.Errorf("lsload -s:\n%s", out)
	}
	c.must("", "bkill", first)
	c.waitState(second, "DONE")
}

// TestElimStale: a value that stops arriving goes stale after
// elim_stale_after: lsload -l shows "-" and select[] no longer finds it.
func TestElimStale(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("elims run only when root owns them")
	}
	elims := t.TempDir()
	if err := os.WriteFile(filepath.Join(elims, "elim.once"), []byte("#!/bin/sh\necho '1 scratch 500'\nexec sleep 3600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "xce.toml")
	text := "[cluster]\nelim_dir = \"" + elims + "\"\nelim_stale_after = \"1s\"\n\n[resources.scratch]\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", conf)
	var out string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		out = c.must("", "lsload", "-l")
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) > 1 && strings.HasSuffix(lines[0], " scratch") &&
			strings.HasSuffix(lines[1], " -") {
			break
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.HasSuffix(lines[1], " -") {
		t.Fatalf("lsload -l does not show scratch stale:\n%s", out)
	}
	id := c.submit("", "-R", "select[scratch>100]", "true")
	other := c.submit("", "true")
	c.waitState(other, "DONE")
	if got := c.stat(id); got != "PEND" {
		t.Errorf("job asking a stale scratch is %s, want PEND", got)
	}
}

// TestElimReconfig: badmin reconfig starts the elims again, the local
// host's and a worker's: a changed elim_dir is followed, and an elim
// added to it runs at once.
func TestElimReconfig(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("elims run only when root owns them")
	}
	// One elim in a directory, reporting name value.
	elimDir := func(name, value string) string {
		d := t.TempDir()
		addElim(t, d, name, value)
		return d
	}
	text := func(dir string) string {
		return fmt.Sprintf("elim_dir = %q\n\n[resources.scratch]\n\n[resources.lic]\n", dir)
	}
	// waitLoad waits until lsload -l's last line ends with the values.
	waitLoad := func(c *cluster, host string, want string) {
		t.Helper()
		var out string
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			args := []string{"-l"}
			if host != "" {
				args = append(args, host)
			}
			r := c.run("", "lsload", args...) // a worker not joined yet: an error
			if out = r.stdout + r.stderr; r.code != 0 {
				continue
			}
			if lines := strings.Split(strings.TrimSpace(out), "\n"); strings.HasSuffix(lines[len(lines)-1], want) {
				return
			}
		}
		t.Fatalf("lsload -l %s does not end with %q:\n%s", host, want, out)
	}
	t.Run("local", func(t *testing.T) {
		conf := filepath.Join(t.TempDir(), "xce.toml")
		if err := os.WriteFile(conf, []byte("[cluster]\n"+text(elimDir("scratch", "500"))), 0o644); err != nil {
			t.Fatal(err)
		}
		c := newCluster(t, "--config", conf)
		host := "" // the one host
		waitLoad(c, host, " 500")
		next := elimDir("scratch", "50")
		if err := os.WriteFile(conf, []byte("[cluster]\n"+text(next)), 0o644); err != nil {
			t.Fatal(err)
		}
		c.must("", "badmin", "reconfig")
		waitLoad(c, host, " 50")
		addElim(t, next, "lic", "7")
		c.must("", "badmin", "reconfig")
		waitLoad(c, host, " 7      50")
	})
	t.Run("worker", func(t *testing.T) {
		m := newMulti(t, text(elimDir("scratch", "500")))
		m.worker("rw", 1)
		waitLoad(m.cluster, "rw", " 500")
		conf := m.args[len(m.args)-1] // newMulti's --config
		next := elimDir("scratch", "50")
		old, err := os.ReadFile(conf)
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(string(old), "\n\n[hosts.")
		if err := os.WriteFile(conf, []byte("[cluster]\n"+text(next)+string(old[i:])), 0o644); err != nil {
			t.Fatal(err)
		}
		m.must("", "badmin", "reconfig")
		waitLoad(m.cluster, "rw", " 50")
		addElim(t, next, "lic", "7")
		m.must("", "badmin", "reconfig")
		waitLoad(m.cluster, "rw", " 7      50")
	})
}

// addElim puts in dir an elim reporting name value every 0.2 s.
func addElim(t *testing.T, dir, name, value string) {
	t.Helper()
	body := "#!/bin/sh\nwhile :; do echo '1 " + name + " " + value + "'; sleep 0.2; done\n"
	if err := os.WriteFile(filepath.Join(dir, "elim."+name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}
