package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RemoveCgroupTree removes the (empty) directories of a scratch cgroup
// parent from every hierarchy, deepest first.
func RemoveCgroupTree(parent string) {
	// The v1 hierarchies, then the unified (v2) tree.
	dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", parent))
	dirs = append(dirs, filepath.Join("/sys/fs/cgroup", parent))
	for _, d := range dirs {
		var all []string
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				all = append(all, p)
			}
			return nil
		})
		for i := len(all) - 1; i >= 0; i-- {
			// A job whose worker went before it ended is still there.
			for try := 0; try < 100 && syscall.Rmdir(all[i]) == syscall.EBUSY; try++ {
				if b, err := os.ReadFile(filepath.Join(all[i], "cgroup.procs")); err == nil {
					for _, f := range strings.Fields(string(b)) {
						if pid, _ := strconv.Atoi(f); pid > 1 {
							syscall.Kill(pid, syscall.SIGKILL)
						}
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
}
