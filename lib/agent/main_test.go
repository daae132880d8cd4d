package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"xce/lib/worker"
)

// TestMain puts the cgroups of the workers these tests start (as root)
// under a scratch parent of this run's own, and removes it afterwards,
// so that the tests leave no xce/ directory in the host's hierarchies.
func TestMain(m *testing.M) {
	parent := fmt.Sprintf("xce-agent-test-%d", os.Getpid())
	os.Setenv(worker.CgroupParentEnv, parent)
	code := m.Run()
	removeCgroupDirs(parent)
	os.Exit(code)
}

// removeCgroupDirs removes parent's directories, deepest first, in every
// cgroup hierarchy mounted under /sys/fs/cgroup (only empty cgroups can
// go; one still busy is left).
func removeCgroupDirs(parent string) {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*")
	roots = append(roots, "/sys/fs/cgroup")
	for _, root := range roots {
		var dirs []string
		filepath.WalkDir(filepath.Join(root, parent), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for _, d := range slices.Backward(dirs) {
			os.Remove(d)
		}
	}
}
