package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"xce/lib/config"
	"xce/lib/provider"
)

// A stand-in for xced: a shell loop whose command line carries the
// worker's flags, as the real one's does.
func fakeXced(t *testing.T) string {
	exe := filepath.Join(t.TempDir(), "xced")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nwhile :; do sleep 0.05; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestLocalLifecycle(t *testing.T) {
	l := &Local{Exe: fakeXced(t), Dir: filepath.Join(t.TempDir(), "rc"), Controller: "127.0.0.1:1", TokenFile: "/nonexistent",
		StopWait: 2 * time.Second}
	ctx := context.Background()
	ins := []provider.Instance{{ID: "cpu-1", Host: "cpu-1"}, {ID: "cpu-2", Host: "cpu-2"}}
	st, _ := l.Status(ctx, "", ins)
	if st[0].Status != provider.Unknown {
		t.Errorf("before Request: %v", st)
	}
	if _, err := l.Request(ctx, &config.Template{Slots: 2}, ins); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Return(ctx, ins) })
	st, _ = l.Status(ctx, "", ins)
	if st[0].Status != provider.Running || st[1].Status != provider.Running {
		t.Fatalf("after Request: %v", st)
	}
	// Asked again (after a restart): nothing doubles.
	pid := l.pid("cpu-1")
	l.Request(ctx, &config.Template{Slots: 2}, ins[:1])
	if l.pid("cpu-1") != pid {
		t.Errorf("a running instance was started again")
	}
	// Killed between starting a worker and recording its pid, the
	// provisioner's next run still finds it (and never starts another).
	os.Remove(filepath.Join(l.Dir, "cpu-2", "worker.pid"))
	if st, _ := (&Local{Exe: l.Exe, Dir: l.Dir}).Status(ctx, "", ins[1:]); st[0].Status != provider.Running {
		t.Errorf("a worker without its pid file: %v", st)
	}
	if _, err := os.Stat(filepath.Join(l.Dir, "cpu-2", "worker.pid")); err != nil {
		t.Errorf("the found worker's pid was not recorded: %v", err)
	}
	// Killed while it wrote the file (an empty file, from before the
	// write was atomic): found the same way.
	os.WriteFile(filepath.Join(l.Dir, "cpu-2", "worker.pid"), nil, 0o600)
	if st, _ := (&Local{Exe: l.Exe, Dir: l.Dir}).Status(ctx, "", ins[1:]); st[0].Status != provider.Running {
		t.Errorf("a worker with an empty pid file: %v", st)
	}
	// A provider of a later run (no children of its own) sees it too.
	l2 := &Local{Exe: l.Exe, Dir: l.Dir}
	if st, _ := l2.Status(ctx, "", ins[:1]); st[0].Status != provider.Running {
		t.Errorf("another provider: %v", st)
	}
	if err := l.Return(ctx, ins); err != nil {
		t.Fatal(err)
	}
	if st, _ := l.Status(ctx, "", ins); st[0].Status != provider.Unknown || st[1].Status != provider.Unknown {
		t.Errorf("after Return: %v", st)
	}
	if _, err := os.Stat(filepath.Join(l.Dir, "cpu-1")); !os.IsNotExist(err) {
		t.Errorf("instance directory left: %v", err)
	}
	// Returning again is harmless.
	if err := l.Return(ctx, ins); err != nil {
		t.Error(err)
	}
}

// A child that has not exec'd yet shows its parent's command line; a scan
// for an instance's worker must take it for the worker no more than the
// worker's other children. A subshell (a fork of sh that never execs)
// stands in for a child caught between fork and exec.
func TestUnexecedChild(t *testing.T) {
	sh := exec.Command("/bin/sh", "-c", "( sleep 30; : ) & wait", "xce-fake-worker")
	// Its own process group, so that the cleanup ends the subshell too.
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-sh.Process.Pid, syscall.SIGKILL); sh.Wait() })
	// Read until it is the shell's: an empty one (read while the
	// process was still being set up) would match every kernel thread.
	var parent []byte
	for deadline := time.Now().Add(10 * time.Second); !bytes.Contains(parent, []byte("xce-fake-worker")); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the shell's command line: %q", parent)
		}
		parent, _ = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", sh.Process.Pid))
	}
	var child int
	for deadline := time.Now().Add(10 * time.Second); child == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == sh.Process.Pid {
				continue
			}
			if b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); bytes.Equal(b, parent) {
				child = pid
			}
		}
	}
	if child == 0 {
		t.Fatal("the subshell did not show up")
	}
	if !unexecedChild(child, parent) {
		t.Errorf("the subshell %d was not seen as its parent's unexec'd child", child)
	}
	if unexecedChild(sh.Process.Pid, parent) {
		t.Errorf("the shell itself was taken for a child")
	}
	if got := ownProcess(func(_ int, _ string, cmdline []byte) bool { return bytes.Equal(cmdline, parent) }); got != sh.Process.Pid {
		t.Errorf("ownProcess found %d, want the shell %d", got, sh.Process.Pid)
	}
}
