package container

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Job is what Build needs of a job on its execution host.
type Job struct {
	Cluster string
	Host    string
	JobID   int64
	Index   int32 // 0 outside arrays
	UID     int
	GID     int
	Groups  []int // supplementary groups
	// Rootless: the CLI runs as a user other than root (podman then runs
	// rootless, and cannot make cgroups).
	Rootless bool
	Cwd      string
	// Binds are further directories bound at the same path: the job
	// file's directory, at least.
	Binds []string
	// Env is the job's environment, NAME=VALUE; the CLI is started with
	// it.
	Env []string
	// CgroupParent is the job's cgroup, from each hierarchy's root, ""
	// when it has none.
	CgroupParent string
	// GPUs are the host's indexes of the job's GPUs.
	GPUs []int
	// Ulimits are the job's per-process limits, for runtimes that set
	// them themselves.
	Ulimits []Ulimit
	// Stdin: the job has an input file, which the container reads.
	Stdin bool
	// Image is the resolved image (Spec.ResolveImage) and Options the
	// expanded options (Spec.ExpandOptions).
	Image   string
	Options []string
	// Command is the job's command inside the container.
	Command []string
	// Task is the blaunch task (LSF_PM_TASKID) whose own container this
	// is, on a host other than the job's first; 0 for the job's.
	Task int32
}

// containerName is j's container's name: the job's (Name), or its
// task's (TaskName).
func (j *Job) containerName() string {
	if j.Task > 0 {
		return TaskName(j.Cluster, j.JobID, j.Index, j.Task)
	}
	return Name(j.Cluster, j.JobID, j.Index)
}

// TaskName is the name of the container of a job's blaunch task on a
// host other than the job's first: the job's name and -t<task>.
func TaskName(cluster string, id int64, idx int32, task int32) string {
	return Name(cluster, id, idx) + "-t" + strconv.Itoa(int(task))
}

// Ulimit is one per-process limit: docker's name (fsize, data, stack,
// core, rss) and its soft and hard values in bytes, -1 for unlimited.
type Ulimit struct {
	Name       string
	Soft, Hard int64
}

// Name is the name of a job's container: xce-<cluster>-<jobid>, with
// -<index> for an array element.
func Name(cluster string, id int64, idx int32) string {
	n := "xce-" + nameSafe(cluster) + "-" + strconv.FormatInt(id, 10)
	if idx > 0 {
		n += "-" + strconv.Itoa(int(idx))
	}
	return n
}

// nameSafe reduces s to what a container name may hold ([a-zA-Z0-9_.-]).
func nameSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c == '.' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// Labels name a job's container: its cluster, host, job and index.
func Labels(j *Job) []string {
	l := []string{
		LabelCluster + "=" + j.Cluster,
		LabelHost + "=" + j.Host,
		LabelJob + "=" + strconv.FormatInt(j.JobID, 10),
		LabelIndex + "=" + strconv.Itoa(int(j.Index)),
	}
	if j.Task > 0 {
		l = append(l, LabelTask+"="+strconv.Itoa(int(j.Task)))
	}
	return l
}

// The labels of a job's container.
const (
	LabelCluster = "xce.cluster"
	LabelHost    = "xce.host"
	LabelJob     = "xce.job"
	LabelIndex   = "xce.index"
	LabelTask    = "xce.task"
)

// passEnvSkip are variables of the job's environment the container does
// not get: the image has its own PATH, and the host's name is not the
// container's.
var passEnvSkip = map[string]bool{"PATH": true, "HOSTNAME": true}

// Build is the command line (argv, argv[0] the runtime's CLI) that runs
// j's command in the container of s.
func Build(s *Spec, j *Job) ([]string, error) {
	if j.Image == "" {
		return nil, fmt.Errorf("no image")
	}
	if len(j.Command) == 0 {
		return nil, fmt.Errorf("no command")
	}
	if j.Cwd == "" {
		return nil, fmt.Errorf("no working directory")
	}
	switch {
	case s.Runtime.OCI():
		return buildOCI(s, j), nil
	case s.Runtime == Apptainer || s.Runtime == Singularity:
		return buildApptainer(s, j), nil
	case s.Runtime == Enroot:
		return buildEnroot(s, j), nil
	}
	return nil, fmt.Errorf("unknown container runtime %q", s.Runtime)
}

// binds are the directories bound into the container: the working
// directory and the others, each once, in order.
func binds(j *Job) []string {
	out := []string{j.Cwd}
	for _, b := range j.Binds {
		if b != "" && !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// envNames are the names of the job's variables the container gets, in
// the job's order, each once; the GPU variables of a container that
// holds only the job's GPUs are left out (gpuEnv gives them).
func envNames(j *Job, renumber bool) []string {
	var names []string
	seen := map[string]bool{}
	for _, kv := range j.Env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || passEnvSkip[name] || seen[name] {
			continue
		}
		if renumber && len(j.GPUs) > 0 && strings.HasPrefix(name, "CUDA_VISIBLE_DEVICES") {
			continue
		}
		seen[name] = true
		names = append(names, name)
	}
	return names
}

// gpuEnv is the job's CUDA_VISIBLE_DEVICES variables with the host's
// indexes replaced by the container's: the job's GPUs are 0 to N-1
// there, in the order of j.GPUs.
func gpuEnv(j *Job) []string {
	if len(j.GPUs) == 0 {
		return nil
	}
	pos := map[string]string{}
	for i, g := range j.GPUs {
		pos[strconv.Itoa(g)] = strconv.Itoa(i)
	}
	var out []string
	seen := map[string]bool{}
	for _, kv := range j.Env {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "CUDA_VISIBLE_DEVICES") || seen[name] {
			continue
		}
		seen[name] = true
		var ids []string
		for _, id := range strings.Split(val, ",") {
			if p, ok := pos[strings.TrimSpace(id)]; ok {
				ids = append(ids, p)
			}
		}
		out = append(out, name+"="+strings.Join(ids, ","))
	}
	return out
}

func gpuList(gpus []int) string {
	s := make([]string, len(gpus))
	for i, g := range gpus {
		s[i] = strconv.Itoa(g)
	}
	return strings.Join(s, ",")
}

func buildOCI(s *Spec, j *Job) []string {
	a := []string{string(s.Runtime), "run", "--rm"}
	if s.Runtime == Podman && j.Rootless {
		// The user's own uid inside, mapped to theirs outside; no
		// cgroup of its own, so it stays in the job's.
		a = append(a, "--userns=keep-id", "--cgroups=disabled")
	}
	a = append(a, "--user", strconv.Itoa(j.UID)+":"+strconv.Itoa(j.GID))
	for _, g := range j.Groups {
		if g != j.GID {
			a = append(a, "--group-add", strconv.Itoa(g))
		}
	}
	if j.CgroupParent != "" && !(s.Runtime == Podman && j.Rootless) {
		a = append(a, "--cgroup-parent", j.CgroupParent)
	}
	name := j.containerName()
	if s.Runtime == Podman {
		// A container left by an earlier run of the job (its host
		// failed) gives way to this one.
		a = append(a, "--replace")
	}
	a = append(a, "--name", name)
	for _, l := range Labels(j) {
		a = append(a, "--label", l)
	}
	if j.Stdin {
		a = append(a, "-i")
	}
	a = append(a, "-w", j.Cwd)
	for _, b := range binds(j) {
		a = append(a, "-v", b+":"+b)
	}
	renumber := s.Runtime != NvidiaDocker
	for _, n := range envNames(j, renumber) {
		a = append(a, "--env", n)
	}
	if len(j.GPUs) > 0 {
		if s.Runtime == NvidiaDocker {
			// nvidia-docker's runtime hook takes the devices by index.
			a = append(a, "--env", "NVIDIA_VISIBLE_DEVICES="+gpuList(j.GPUs))
		} else {
			for _, g := range j.GPUs {
				a = append(a, "--device", "nvidia.com/gpu="+strconv.Itoa(g))
			}
			for _, kv := range gpuEnv(j) {
				a = append(a, "--env", kv)
			}
		}
	}
	for _, u := range j.Ulimits {
		a = append(a, "--ulimit", u.Name+"="+strconv.FormatInt(u.Soft, 10)+":"+strconv.FormatInt(u.Hard, 10))
	}
	a = append(a, j.Options...)
	a = append(a, j.Image)
	return append(a, j.Command...)
}

func buildApptainer(s *Spec, j *Job) []string {
	a := []string{string(s.Runtime), "exec", "--pwd", j.Cwd}
	for _, b := range binds(j) {
		a = append(a, "--bind", b)
	}
	if len(j.GPUs) > 0 {
		// --nv binds the host's driver and devices; CUDA_VISIBLE_DEVICES
		// (passed, as all of the environment, by default) keeps the
		// job to its own.
		a = append(a, "--nv")
	}
	a = append(a, j.Options...)
	a = append(a, j.Image)
	return append(a, j.Command...)
}

// enrootCd runs the command in the working directory: enroot start has
// no option for it.
const enrootCd = `cd "$1" && shift && exec "$@"`

func buildEnroot(s *Spec, j *Job) []string {
	a := []string{string(s.Runtime), "start"}
	for _, b := range binds(j) {
		a = append(a, "--mount", b+":"+b)
	}
	for _, n := range envNames(j, true) {
		a = append(a, "--env", n)
	}
	if len(j.GPUs) > 0 {
		a = append(a, "--env", "NVIDIA_VISIBLE_DEVICES="+gpuList(j.GPUs))
		for _, kv := range gpuEnv(j) {
			a = append(a, "--env", kv)
		}
	}
	a = append(a, j.Options...)
	a = append(a, j.Image, "/bin/sh", "-c", enrootCd, "sh", j.Cwd)
	return append(a, j.Command...)
}

// RemoveArgs is the command line that removes a job's container, whether
// it runs or not, and succeeds when there is none; nil for runtimes whose
// containers are processes of the job and nothing more (apptainer,
// enroot).
func RemoveArgs(rt Runtime, cluster string, id int64, idx int32) []string {
	return RemoveNameArgs(rt, Name(cluster, id, idx))
}

// RemoveNameArgs is RemoveArgs for the container called name.
func RemoveNameArgs(rt Runtime, name string) []string {
	if !rt.OCI() {
		return nil
	}
	if rt == Podman {
		return []string{string(rt), "rm", "-f", "--ignore", "--time", "0", name}
	}
	return []string{string(rt), "rm", "-f", name} // docker says "No such container" and exits 1
}

// ListArgs is the command line that lists the names of the containers of
// a cluster's host, one a line, running or not; nil for runtimes without
// containers of their own.
func ListArgs(rt Runtime, cluster, host string) []string {
	if !rt.OCI() {
		return nil
	}
	return []string{string(rt), "ps", "-a", "--filter", "label=" + LabelCluster + "=" + cluster,
		"--filter", "label=" + LabelHost + "=" + host, "--format", "{{.Names}}"}
}

// ParseName is the job of a container name Name made for cluster; ok is
// false for any other name (a task's too: ParseTaskName).
func ParseName(cluster, name string) (id int64, idx int32, ok bool) {
	id, idx, task, ok := ParseTaskName(cluster, name)
	if task > 0 {
		return 0, 0, false
	}
	return id, idx, ok
}

// ParseTaskName is the job and task of a container name Name or
// TaskName made for cluster (task 0 for a job's own); ok is false for
// any other name.
func ParseTaskName(cluster, name string) (id int64, idx int32, task int32, ok bool) {
	if i := strings.LastIndex(name, "-t"); i > 0 {
		// (A cluster's name may hold "-t" too: the suffix is digits.)
		if n, err := strconv.ParseInt(name[i+2:], 10, 32); err == nil && n > 0 {
			if id, idx, ok = parseJobName(cluster, name[:i]); ok {
				return id, idx, int32(n), true
			}
		}
	}
	id, idx, ok = parseJobName(cluster, name)
	return id, idx, 0, ok
}

func parseJobName(cluster, name string) (id int64, idx int32, ok bool) {
	rest, found := strings.CutPrefix(name, "xce-"+nameSafe(cluster)+"-")
	if !found {
		return 0, 0, false
	}
	ids, idxs, hasIdx := strings.Cut(rest, "-")
	n, err := strconv.ParseInt(ids, 10, 64)
	if err != nil || n <= 0 {
		return 0, 0, false
	}
	if hasIdx {
		i, err := strconv.ParseInt(idxs, 10, 32)
		if err != nil || i <= 0 {
			return 0, 0, false
		}
		idx = int32(i)
	}
	return n, idx, true
}
