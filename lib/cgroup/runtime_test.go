package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRuntimeParent: a container runtime's --cgroup-parent is the job's
// path from the unified root on v2, and from the freezer hierarchy's
// root on v1 and on a hybrid host (whose unified tree holds no
// controller).
func TestRuntimeParent(t *testing.T) {
	m, _ := fakeV2(t, "memory pids", false)
	if got, want := m.RuntimeParent(12, 3), "/fake/xce/unit/job.12.3"; got != want {
		t.Errorf("v2: %q, want %q", got, want)
	}
	for _, hybrid := range []bool{false, true} {
		root := t.TempDir()
		dirs := []string{"freezer", "memory"}
		if hybrid {
			dirs = append(dirs, "unified")
		}
		for _, d := range dirs {
			os.MkdirAll(filepath.Join(root, d), 0o755)
			os.WriteFile(filepath.Join(root, d, "cgroup.procs"), nil, 0o644)
		}
		if hybrid {
			os.WriteFile(filepath.Join(root, "unified", "cgroup.controllers"), nil, 0o644)
		}
		m, err := newManager(Config{Cluster: "unit", Parent: "scratch/p", Root: root})
		if err != nil {
			t.Fatal(err)
		}
		if m.Version() != V1 {
			t.Fatalf("hybrid=%v: version %d, want v1", hybrid, m.Version())
		}
		if got, want := m.RuntimeParent(12, 0), "/scratch/p/xce/unit/job.12.0"; got != want {
			t.Errorf("v1 (hybrid=%v): %q, want %q", hybrid, got, want)
		}
	}
}
