package tests

import (
	"os/user"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"xce/lib/trace"
)

// lib/trace reads a real xced's accounting: from `xced store backup`'s
// file, and from the state directory while xced runs and once it has
// stopped, the same jobs each time. The jobs read are the ones that ran,
// with what they asked for.
func TestTraceFromAcct(t *testing.T) {
	c := newCluster(t)
	first := c.submit("", "-W", "10", "-R", "rusage[mem=10]", "true")
	second := c.submit("", "-n", "2", "-w", "done("+first+")", "true")
	c.waitState(first, "DONE")
	c.waitState(second, "DONE")

	file := filepath.Join(t.TempDir(), "xce.backup")
	if r := c.xced("store", "backup", "--dir", c.state(), file); r.code != 0 {
		t.Fatalf("xced store backup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	fromBackup, err := trace.Read(file, "")
	if err != nil {
		t.Fatal(err)
	}
	running, err := trace.Read(c.state(), "")
	if err != nil {
		t.Fatalf("reading the store of a running xced: %v", err)
	}
	if !reflect.DeepEqual(running.Jobs, fromBackup.Jobs) {
		t.Errorf("the running xced's state directory and its backup differ:\n%+v\n%+v", running.Jobs, fromBackup.Jobs)
	}
	c.stop()
	fromDir, err := trace.Read(c.state(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromDir.Jobs, fromBackup.Jobs) {
		t.Errorf("the state directory and its backup differ:\n%+v\n%+v", fromDir.Jobs, fromBackup.Jobs)
	}

	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	id1, _ := strconv.ParseInt(first, 10, 64)
	id2, _ := strconv.ParseInt(second, 10, 64)
	jobs := fromBackup.Jobs
	if fromBackup.Format != trace.Acct || len(jobs) != 2 || len(fromBackup.Skipped)+len(fromBackup.Malformed) != 0 {
		t.Fatalf("read %+v", fromBackup)
	}
	j1, j2 := jobs[0], jobs[1]
	if j1.ID != id1 || j1.Slots != 1 || j1.Limit != 10*time.Minute || j1.MemMB != 10 || j1.ResReq != "rusage[mem=10]" ||
		j1.User != me.Username || j1.Submit != 0 || j1.Run < 0 || j1.Run > time.Minute {
		t.Errorf("first job: %+v", j1)
	}
	if j2.ID != id2 || j2.Slots != 2 || j2.DependsOn != id1 || j2.User != me.Username || j2.Submit < 0 {
		t.Errorf("second job: %+v", j2)
	}
	if j1.Queue == "" || j2.Queue != j1.Queue {
		t.Errorf("queues %q and %q: want the default queue by its name", j1.Queue, j2.Queue)
	}
}
