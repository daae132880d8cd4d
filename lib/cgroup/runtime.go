package cgroup

import "path/filepath"

// RuntimeParent is job id[idx]'s cgroup as a container runtime that
// root runs (podman, docker; their cgroupfs manager) takes it in
// --cgroup-parent, so that the container's cgroup is made below the
// job's: on cgroup v2 the job's path from the unified tree's root; on
// v1 (legacy and hybrid hosts, where the runtimes use the v1
// hierarchies) its path from a hierarchy's root, which the runtime makes
// in every hierarchy: the freezer's, the one that tracks, freezes and
// kills the job (the others' parents are the same unless the worker's
// own cgroups differ between hierarchies). It does not need the cgroup
// to exist yet.
func (m *Manager) RuntimeParent(id int64, idx int32) string {
	if m.version == V2 {
		return m.groupV2(JobName(id, idx))
	}
	p, ok := m.parents["freezer"]
	if !ok {
		return ""
	}
	return filepath.Join(m.base(p), JobName(id, idx))
}
