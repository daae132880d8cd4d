package exec

import (
	"os"
	osexec "os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// descendants finds a child and its child (a grandchild of the test).
func TestDescendants(t *testing.T) {
	if _, ok := descendants(os.Getpid()); !ok {
		t.Skip("the kernel keeps no children lists (CONFIG_PROC_CHILDREN)")
	}
	cmd := osexec.Command("sh", "-c", "sleep 30 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	b := make([]byte, 32)
	n, _ := out.Read(b)
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil {
		t.Fatalf("the shell's background pid: %q: %v", b[:n], err)
	}
	defer func() { _ = syscallKill(grandchild) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, _ := descendants(os.Getpid())
		if slices.Contains(got, int32(cmd.Process.Pid)) && slices.Contains(got, int32(grandchild)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("descendants = %v; want %d and %d among them", got, cmd.Process.Pid, grandchild)
		}
	}
}

func syscallKill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
