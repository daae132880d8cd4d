package tests

import (
	"os"
	"path/filepath"
	"testing"
)

// xced --run-dir keeps the jobs' directories there rather than under
// DIR/jobs (a tmpfs takes the disk out of a short job's path), and a
// restarted xced given the same directory finds its running job there.
func TestRunDir(t *testing.T) {
	runDir := filepath.Join(t.TempDir(), "run")
	c := newCluster(t, "--run-dir", runDir)
	id := c.submit("", "sleep 60")
	c.waitState(id, "RUN")
	if fi, err := os.Stat(filepath.Join(runDir, id+".0")); err != nil || !fi.IsDir() {
		t.Fatalf("no job directory under --run-dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "state", "jobs", id+".0")); err == nil {
		t.Error("the job's directory is under DIR/jobs too")
	}
	c.crash()
	c.start()
	c.waitState(id, "RUN")
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
	done := c.submit("", "true")
	c.waitState(done, "DONE")
}
