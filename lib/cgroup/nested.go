package cgroup

// Cgroups below a job's: a container runtime that root runs (podman,
// docker) makes its container's cgroup under the job's when told to
// (--cgroup-parent), so that the container is the job's: the freezer
// and memory accounting of v1 and everything of v2 are hierarchical
// already; listing, signalling and killing the job's processes, and
// removing its cgroup, go down the tree here. On v1 the runtime makes the
// same path in every hierarchy mounted, also those XCE does not use
// (cpu, blkio, ...): removal clears it there too.

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// procsTree lists the processes of the cgroup at dir and of every
// cgroup below it.
func procsTree(dir string) ([]int, error) {
	pids, err := readProcs(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return pids, nil
	}
	for _, e := range entries {
		if e.IsDir() {
			if sub, err := procsTree(filepath.Join(dir, e.Name())); err == nil {
				pids = append(pids, sub...)
			}
		}
	}
	return pids, nil
}

// rmTree removes the (empty) cgroup at dir and those below it, deepest
// first; a missing one is no error. A job's cgroup seldom has one below
// it (a container's), so the rmdir is tried first: one call per
// hierarchy where reading the directory took three.
func rmTree(dir string) error {
	if err := syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, rmTree(filepath.Join(dir, e.Name())))
		}
	}
	if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
		errs = append(errs, &os.PathError{Op: "rmdir", Path: dir, Err: err})
	}
	return errors.Join(errs...)
}

// removeForeignV1 removes a job's directories from the v1 hierarchies
// the manager does not use, where a container runtime made them (the
// job's path as the freezer has it); the xce/<cluster> directories it
// made there are left for Close of a later run to find empty. Best
// effort: what stays is empty and harmless.
func (j *v1Job) removeForeignV1() {
	p, ok := j.m.parents["freezer"]
	if !ok {
		return
	}
	rel := filepath.Join(j.m.base(p), j.name)
	entries, err := os.ReadDir(j.m.root)
	if err != nil {
		return
	}
	for _, e := range entries {
		// Directories only: cpu,cpuacct style links name the same
		// hierarchy as a directory does.
		if !e.IsDir() || e.Name() == "unified" || slices.Contains(j.m.ctrls, e.Name()) {
			continue
		}
		rmTree(filepath.Join(j.m.root, e.Name(), rel))
	}
}
