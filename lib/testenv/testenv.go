// Package testenv owns what the tests of several packages need from the
// machine: unprivileged users to run jobs as (made with useradd when the
// tests run as root), a freshly built xce-shepherd, a test's re-run in a
// fresh process, and a buffer that a log can be written to while the test
// reads it. Only tests import it.
package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// LockedBuffer is a bytes.Buffer that goroutines may write to (a logger,
// a child's output copied by os/exec) while the test reads it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// User returns the uid and gid of the test user name (xcetest1, ...),
// creating it when it is missing; the test is skipped when it cannot be.
func User(t testing.TB, name string) (uid, gid int) {
	t.Helper()
	if _, err := user.Lookup(name); err != nil {
		out, err := exec.Command("useradd", "-M", "-s", "/bin/sh", name).CombinedOutput()
		if _, lerr := user.Lookup(name); lerr != nil {
			t.Skipf("cannot create user %s: %v %s", name, err, out)
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// JobUser is the user the tests' jobs run as: xcetest1 when the tests run
// as root, so that what root reads is another user's; the caller
// otherwise. dirs are made reachable by it (t.TempDir's parent is 0700).
func JobUser(t testing.TB, dirs ...string) (uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		return os.Getuid(), os.Getgid()
	}
	uid, gid = User(t, "xcetest1")
	for _, d := range dirs {
		os.Chmod(filepath.Dir(d), 0o755)
		os.Chmod(d, 0o777)
	}
	return uid, gid
}

// BuildShepherd builds xce-shepherd into a temporary directory and
// returns its path.
func BuildShepherd(t testing.TB) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(here), "..", "..", "daemon", "shepherd")
	bin := filepath.Join(t.TempDir(), "xce-shepherd")
	out, err := exec.Command("go", "build", "-o", bin, src).CombinedOutput()
	if err != nil {
		t.Fatalf("build shepherd: %v\n%s", err, out)
	}
	return bin
}

// freshEnv marks the process InFreshProcess started.
const freshEnv = "XCE_TEST_FRESH_PROCESS"

// InFreshProcess runs the calling test again alone in a new process of
// the test binary, for a test of what a process does before anything else
// in it has run (another test may already have done it in this one). It
// returns true in that new process, where the test goes on; in the first
// it waits for the new one, fails the test with its output if it failed,
// and returns false.
func InFreshProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(freshEnv) != "" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), freshEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("in a fresh process: %v\n%s", err, out)
	}
	return false
}
