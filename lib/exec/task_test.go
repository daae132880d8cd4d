package exec

import (
	"bytes"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// markedProcs are the processes whose command line holds mark.
func markedProcs(mark string) []int {
	var out []int
	pids, _ := Pids()
	for _, p := range pids {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if bytes.Contains(b, []byte(mark)) {
			out = append(out, p)
		}
	}
	return out
}

func cleanupMarked(t *testing.T, mark string) {
	t.Cleanup(func() {
		for _, p := range markedProcs(mark) {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
}

// A task that leaves a setsid child behind and exits: the child is gone
// when TaskMain returns, and the task's exit status is TaskMain's.
func TestTaskMainKillsWhatTheTaskLeft(t *testing.T) {
	n := strconv.Itoa(700000 + os.Getpid()%100000)
	mark := "sleep\x00" + n + "\x00"
	cleanupMarked(t, mark)
	cmd := osexec.Command(os.Args[0], TaskArg)
	cmd.Env = append(os.Environ(), TaskArgv([]string{"/bin/sh", "-c", "setsid sleep " + n + " </dev/null >/dev/null 2>&1 & sleep 0.5; exit 7"}))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err := cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 7 {
		t.Errorf("TaskMain: %v, want exit code 7", err)
	}
	if left := markedProcs(mark); len(left) > 0 {
		t.Errorf("the task's setsid child %v outlived the task", left)
	}
}

// KillDescendants, as the worker kills a task: every process under the
// subreaper dies, inside its session or not, while the subreaper lives.
func TestKillDescendants(t *testing.T) {
	n := strconv.Itoa(800000 + os.Getpid()%100000)
	mark := "sleep\x00" + n + "\x00"
	cleanupMarked(t, mark)
	cmd := osexec.Command(os.Args[0], TaskArg)
	cmd.Env = append(os.Environ(), TaskArgv([]string{"/bin/sh", "-c", "setsid sleep " + n + " </dev/null >/dev/null 2>&1 & sleep " + n}))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	// A process in the middle of exec shows an empty command line for a
	// moment (the kernel installs the new image before its arguments), so
	// the count can read 2 and then 1 while setsid becomes sleep: wait for
	// three equal readings in a row.
	var got []int
	for end, same := time.Now().Add(30*time.Second), 0; same < 3 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
		if got = markedProcs(mark); len(got) == 2 {
			same++
		} else {
			same = 0
		}
	}
	if len(got) != 2 {
		t.Fatalf("the task's two sleeps did not start: %v", got)
	}
	KillDescendants(cmd.Process.Pid)
	for end := time.Now().Add(30 * time.Second); len(markedProcs(mark)) > 0 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if left := markedProcs(mark); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the subreaper itself is gone: %v", err)
	}
}
