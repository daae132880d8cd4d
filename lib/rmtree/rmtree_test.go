package rmtree

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// deepTree makes depth directories one inside the other under dir, each
// with a file, using one descriptor at a time, and returns the top one.
func deepTree(t *testing.T, dir string, depth int) string {
	t.Helper()
	top := filepath.Join(dir, "d")
	if err := os.Mkdir(top, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(top, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range depth {
		ffd, err := unix.Openat(fd, "f", unix.O_CREAT|unix.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(ffd)
		if i%1000 == 0 {
			unix.Symlinkat("/", fd, "up") // a link, never followed
		}
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatalf("level %d: %v", i, err)
		}
		fd = next
	}
	unix.Close(fd)
	return top
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// A 5,000-level tree is removed with the descriptors limited to a few
// more than the process has open: os.RemoveAll, one descriptor a level,
// fails there.
func TestRemoveAllDeepTree(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep")
	os.WriteFile(keep, []byte("x"), 0o644)
	top := deepTree(t, dir, 5000)

	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(openFDs(t) + MaxOpen + 8)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	err := RemoveAll(top)
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	if err != nil {
		t.Fatalf("RemoveAll with %d descriptors: %v", lim.Cur, err)
	}
	if _, err := os.Lstat(top); !os.IsNotExist(err) {
		t.Fatalf("%s is still there: %v", top, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file beside the tree went: %v", err)
	}
}

// Links are removed, never followed; a link or a file as the path is
// removed itself; a missing path is no error.
func TestRemoveAllLinks(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	os.MkdirAll(filepath.Join(outside, "sub"), 0o755)
	os.WriteFile(filepath.Join(outside, "sub", "f"), nil, 0o644)
	tree := filepath.Join(dir, "tree")
	os.MkdirAll(filepath.Join(tree, "a", "b"), 0o755)
	os.Symlink(outside, filepath.Join(tree, "a", "b", "link"))
	os.Symlink(outside, filepath.Join(tree, "link"))
	for i := range 600 { // more than one read of a directory
		os.WriteFile(filepath.Join(tree, "a", strconv.Itoa(i)), nil, 0o644)
	}
	if err := RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "sub", "f")); err != nil {
		t.Errorf("a link was followed: %v", err)
	}
	if _, err := os.Lstat(tree); !os.IsNotExist(err) {
		t.Errorf("tree left: %v", err)
	}
	link := filepath.Join(dir, "l")
	os.Symlink(outside, link)
	if err := RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "sub", "f")); err != nil {
		t.Errorf("the link given was followed: %v", err)
	}
	if err := RemoveAll(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing path: %v", err)
	}
}
