package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"xce/lib/provider"
)

// An instance's worker that another candidate's provider started under
// its own directory (before a failover) is found by its instance, shown
// running, and stopped and removed on return.
func TestLocalFindsAnotherProvidersWorker(t *testing.T) {
	tmp := t.TempDir()
	// A stand-in worker: `sh worker --dir OLD/rc/cpu1-3 --instance cpu1-3`.
	os.WriteFile(filepath.Join(tmp, "worker"), []byte("trap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n"), 0o644)
	old := filepath.Join(tmp, "old", "rc", "cpu1-3")
	os.MkdirAll(old, 0o700)
	const controllers = "127.0.0.1:7001,127.0.0.1:7002"
	cmd := exec.Command("/bin/sh", "worker", "--controller", controllers, "--dir", old, "--instance", "cpu1-3")
	cmd.Dir = tmp
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	// Another cluster's worker of the same instance name: not this one's.
	other := filepath.Join(tmp, "other", "rc", "cpu1-4")
	os.MkdirAll(other, 0o700)
	cmd2 := exec.Command("/bin/sh", "worker", "--controller", "127.0.0.1:9999", "--dir", other, "--instance", "cpu1-4")
	cmd2.Dir = tmp
	if err := cmd2.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd2.Process.Kill(); cmd2.Wait() })
	l := &Local{Exe: "/bin/sh", Dir: filepath.Join(tmp, "new", "rc"), Controller: controllers, StopWait: 5 * time.Second}
	in := []provider.Instance{{ID: "cpu1-3", Host: "cpu1-3"}, {ID: "cpu1-9", Host: "cpu1-9"}, {ID: "cpu1-4", Host: "cpu1-4"}}
	ms, err := l.Status(context.Background(), "", in)
	if err != nil || ms[0].Status != provider.Running || ms[1].Status != provider.Unknown || ms[2].Status != provider.Unknown {
		t.Fatalf("status %+v %v: want cpu1-3 running (found by its instance), cpu1-9 and another cluster's cpu1-4 unknown", ms, err)
	}
	if err := l.Return(context.Background(), in[:1]); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the other provider's worker was not stopped")
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("its directory is left: %v", err)
	}
}
