package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimulateReservations: xced simulate --reservations holds the
// file's reservation during the replay (a job whose run limit reaches
// into its window starts after it, as jobs.csv shows), and names the
// file and the reason for a bad one.
func TestSimulateReservations(t *testing.T) {
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "t.swf")
	os.WriteFile(tracePath, []byte("; MaxProcs: 1\n"+
		"1 0 -1 100 1 -1 -1 1 1000 -1 1 1 -1 -1 0 -1 -1 -1\n"), 0o644)
	rsvPath := filepath.Join(dir, "rsv.toml")
	os.WriteFile(rsvPath, []byte("[[reservation]]\nname = \"maint\"\nslots = 1\nbegin = \"10m\"\nend = \"30m\"\n"), 0o644)
	run := func(args ...string) (string, error) {
		out, err := exec.Command(filepath.Join(binDir, "xced"), append([]string{"simulate", "--trace", tracePath}, args...)...).CombinedOutput()
		return string(out), err
	}
	for _, c := range []struct {
		args  []string
		start string
	}{{nil, ",0,"}, {[]string{"--reservations", rsvPath}, ",1800,"}} {
		out := filepath.Join(dir, "o"+strings.Join(c.args, ""))
		if o, err := run(append(c.args, "--out", out)...); err != nil {
			t.Fatalf("xced simulate %q: %v\n%s", c.args, err, o)
		}
		csv, _ := os.ReadFile(filepath.Join(out, "jobs.csv"))
		lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
		// job_id,user,queue,slots,submit_time,start_time,...
		if len(lines) != 2 || !strings.Contains(lines[1], ",0"+c.start) {
			t.Errorf("%q: jobs.csv\n%s\nwant the job started at %s", c.args, csv, strings.Trim(c.start, ","))
		}
	}
	os.WriteFile(rsvPath, []byte("[[reservation]]\nslots = 2\nbegin = \"10m\"\nend = \"30m\"\n"), 0o644)
	if o, err := run("--reservations", rsvPath); err == nil || !strings.Contains(o, "not enough hosts or job slots") {
		t.Errorf("2 slots on a 1-slot cluster: %v\n%s", err, o)
	}
}
