package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInstancesFPGA: a host lists two fpga instances; two jobs asking
// rusage[fpga=1] each get one of them by name (XCE_ALLOC_FPGA, bjobs -l)
// and a third waits with a reason naming fpga, also after the controller
// is killed and started again; when one ends, the third gets its
// instance (bhist -l shows it).
func TestInstancesFPGA(t *testing.T) {
	host := shortHost(t)
	conf := filepath.Join(t.TempDir(), "xce.toml")
	text := "[resources.fpga]\ninstances = true\n\n[hosts." + host + "]\ninstances = { fpga = [\"fpga0\", \"fpga1\"] }\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", conf)
	dir := t.TempDir()
	// Each job writes what it was given to a file of its own.
	job := func(name string) string {
		f := filepath.Join(dir, name)
		return c.submit("", "-R", "rusage[fpga=1]", "sh", "-c", "echo $XCE_ALLOC_FPGA > "+f+".tmp && mv "+f+".tmp "+f+"; sleep 600")
	}
	given := func(name string) string {
		t.Helper()
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				return strings.TrimSpace(string(b))
			}
		}
		t.Fatalf("job %s did not write its instances", name)
		return ""
	}
	a, b := job("a"), job("b")
	c.waitState(a, "RUN")
	c.waitState(b, "RUN")
	ga, gb := given("a"), given("b")
	if ga == gb || !strings.HasPrefix(ga, "fpga") || !strings.HasPrefix(gb, "fpga") || ga+gb != "fpga0fpga1" && ga+gb != "fpga1fpga0" {
		t.Fatalf("XCE_ALLOC_FPGA: job a got %q, job b %q; want fpga0 and fpga1", ga, gb)
	}
	if out := c.must("", "bjobs", "-l", a); !strings.Contains(out, "INSTANCES ALLOCATED:\n fpga: "+host+"/"+ga+"\n") {
		t.Errorf("bjobs -l does not show the instance:\n%s", out)
	}
	third := job("c")
	waitReason := func() {
		t.Helper()
		var why string
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if why = c.must("", "bjobs", "-p", third); strings.Contains(why, "fpga") {
				break
			}
		}
		if !strings.Contains(why, "fpga") || c.stat(third) != "PEND" {
			t.Fatalf("the third job does not wait for fpga:\n%s", why)
		}
	}
	waitReason()
	// Held across a restart: the third still waits.
	c.crash()
	c.start()
	c.waitState(a, "RUN")
	waitReason()
	c.must("", "bkill", a)
	c.waitState(third, "RUN")
	if gc := given("c"); gc != ga {
		t.Errorf("the third job got %q, want %q (the first job's, now free)", gc, ga)
	}
	out := strings.ReplaceAll(c.must("", "bhist", "-l", third), "\n                     ", "")
	if !strings.Contains(out, "Instances <fpga: "+host+"/"+ga+">") {
		t.Errorf("bhist -l does not show the instance:\n%s", out)
	}
}
