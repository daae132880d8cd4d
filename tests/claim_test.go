package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaimFPGA: a standalone claim holds one of a host's two fpga
// instances: an ordinary job gets the other, a second ordinary job waits
// naming fpga, and the claim's job gets the claim's instance; after the
// controller is killed and started again the claim still holds it, so
// that when the claim's job ends the waiting ordinary job still waits
// and the claim's next job gets it. bclaim list shows the claim; a user
// who is not the claim's is refused at submission.
func TestClaimFPGA(t *testing.T) {
	host := shortHost(t)
	conf := filepath.Join(t.TempDir(), "xce.toml")
	text := "[resources.fpga]\ninstances = true\n\n[hosts." + host + "]\ninstances = { fpga = [\"fpga0\", \"fpga1\"] }\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", conf)
	if out := c.must("", "bclaim", "create", "box", "-R", "rusage[fpga=1]"); out != "Claim <box> is created\n" {
		t.Fatalf("bclaim create: %q", out)
	}
	var list string
	waitFor(t, "the claim to be held", func() bool {
		list = c.must("", "bclaim", "list")
		return strings.Contains(list, "HELD")
	})
	lines := strings.Split(strings.TrimSuffix(list, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "NAME         CREATOR     STATUS  HOST         NJOBS  RUSAGE" ||
		!equalFields(lines[1], "box", "HELD", host, "0", "rusage[fpga=1]") {
		t.Fatalf("bclaim list:\n%s", list)
	}
	long := c.must("", "bclaim", "list", "-l", "box")
	held := ""
	for _, l := range strings.Split(long, "\n") {
		if v, ok := strings.CutPrefix(l, " Instances: fpga="); ok {
			held = v
		}
	}
	if held != "fpga0" && held != "fpga1" {
		t.Fatalf("bclaim list -l shows no instance held:\n%s", long)
	}
	other := map[string]string{"fpga0": "fpga1", "fpga1": "fpga0"}[held]

	dir := t.TempDir()
	job := func(name string, args ...string) string {
		f := filepath.Join(dir, name)
		args = append(args, "-R", "rusage[fpga=1]", "sh", "-c", "echo $XCE_ALLOC_FPGA > "+f+".tmp && mv "+f+".tmp "+f+"; sleep 600")
		return c.submit("", args...)
	}
	given := func(name string) string {
		t.Helper()
		return strings.TrimSpace(c.waitFile(filepath.Join(dir, name)))
	}
	plain := job("plain")
	c.waitState(plain, "RUN")
	if g := given("plain"); g != other {
		t.Fatalf("the ordinary job got %q, want %q (the one the claim does not hold)", g, other)
	}
	waiting := job("waiting")
	mine := job("mine", "-claim", "box")
	c.waitState(mine, "RUN")
	if g := given("mine"); g != held {
		t.Fatalf("the claim's job got %q, want the claim's %q", g, held)
	}
	if out := c.must("", "bjobs", "-l", mine); !strings.Contains(out, "\n CLAIM: box\n") {
		t.Errorf("bjobs -l does not show the claim:\n%s", out)
	}
	waitFpga := func() {
		t.Helper()
		var why string
		waitFor(t, "the ordinary job's reason to name fpga", func() bool {
			why = c.must("", "bjobs", "-p", waiting)
			return strings.Contains(why, "fpga")
		})
		if c.stat(waiting) != "PEND" {
			t.Fatalf("the ordinary job does not wait for fpga:\n%s", why)
		}
	}
	waitFpga()
	if os.Geteuid() == 0 {
		if err := os.Chmod(c.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(c.work, 0o777); err != nil {
			t.Fatal(err)
		}
		const nobody = 65534
		r := c.runAs(nobody, "", "bsub", "-claim", "box", "true")
		if r.code == 0 || !strings.Contains(r.stderr, "box: User does not have permission to use the claim") {
			t.Errorf("bsub -claim by another user: %d %q %q", r.code, r.stdout, r.stderr)
		}
	}

	// Across a restart the claim holds its instance: with its job gone,
	// the ordinary job still waits and the claim's next job gets it.
	c.crash()
	c.start()
	c.waitState(mine, "RUN")
	c.must("", "bkill", mine)
	c.waitState(mine, "EXIT")
	again := job("again", "-claim", "box")
	c.waitState(again, "RUN")
	if g := given("again"); g != held {
		t.Fatalf("the claim's job after the restart got %q, want %q", g, held)
	}
	waitFpga()
	if out := c.must("", "bclaim", "list", "box"); !equalFields(strings.Split(out, "\n")[1], "box", "HELD", host, "1", "rusage[fpga=1]") {
		t.Errorf("bclaim list after the restart:\n%s", out)
	}
	if out := c.must("", "bclaim", "delete", "box"); out != "Claim <box> is deleted\n" {
		t.Errorf("bclaim delete: %q", out)
	}
	if out := c.must("", "bclaim", "list"); out != "No claim found\n" {
		t.Errorf("bclaim list after delete: %q", out)
	}
	c.must("", "bkill", plain, waiting, again)
}

// equalFields reports whether a bclaim list row has these name, status,
// host, njobs and rusage columns.
func equalFields(row, name, status, host, njobs, rusage string) bool {
	f := strings.Fields(row)
	return len(f) == 6 && f[0] == name && f[2] == status && f[3] == host && f[4] == njobs && f[5] == rusage
}
