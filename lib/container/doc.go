// Package container owns what XCE knows of container runtimes: the
// application profile's `container` value in LSF's CONTAINER syntax
// (Parse), its `exec_driver` (ParseExecDriver), and the command line that
// runs a job inside the container (Build) or removes a job's container
// (RemoveArgs). It is pure: it starts nothing and reads no file; the
// shepherd (lib/exec) runs what Build returns, as the job's user, as the
// job's top process, and the worker (lib/worker) runs RemoveArgs.
//
// # The value
//
//	RUNTIME[image(IMAGE) options(OPTIONS) container_io() job_pre_post()]
//
// RUNTIME is podman, docker, nvidia-docker, apptainer, singularity (an
// alias Apptainer keeps) or enroot; LSF's shifter and kubernetes are
// refused by name. image() is required; "$LSB_CONTAINER_IMAGE" (or
// "${LSB_CONTAINER_IMAGE}") in it is the job's own choice, read from the
// job's environment on the execution host. options() are words as a
// shell splits them (quotes, backslashes; no expansion); a word "@PATH"
// is a script that the shepherd runs on the execution host, as the job's
// user (LSF ran it as its administrator, whom the job's directories
// did not let write), and whose output, split the same way, takes its
// place. The options LSF reserves for itself (--user/-u, --name,
// --cgroup-parent, -w/--workdir, --ulimit; apptainer --pwd) are refused:
// XCE sets them. container_io() and job_pre_post() are accepted and
// kept; XCE always passes the job's standard files through the
// runtime's CLI and always runs pre- and post-exec on the host.
//
// # How a job runs (Build)
//
// The runtime's CLI is the job's top process, a child of the shepherd:
// its exit code is the job's, its standard files are the job's, and a
// signal the shepherd passes on reaches the container through it. The
// job's working directory and the directory of its job file are bound at
// the same paths, the job runs there as the job's user (uid, gid and
// supplementary groups), and it gets the job's environment.
//
//   - podman, docker, nvidia-docker: `run --rm --user UID:GID
//     --group-add GID... --cgroup-parent CGROUP --name NAME --label ...
//     -w CWD -v CWD:CWD -v JOBDIR:JOBDIR --env NAME...` (each variable by
//     name only, so its value comes from the CLI's environment and never
//     shows in a process list), GPUs as CDI devices (nvidia.com/gpu=N),
//     the job's per-process limits as --ulimit within the host's hard
//     limits, then the profile's options, the image and the command.
//     The container's cgroup is made under the job's (--cgroup-parent),
//     so bstop, bresume, bkill and the end's kill reach it; podman as a
//     user other than root runs rootless (--userns=keep-id, and
//     --cgroups=disabled so that the container stays in the job's
//     cgroup rather than moving to the user's session).
//   - apptainer, singularity: `exec --pwd CWD --bind CWD --bind JOBDIR
//     [--nv] OPTIONS IMAGE COMMAND`; unprivileged, so the container is
//     the CLI's own process tree, in the job's cgroup.
//   - enroot: `start --mount CWD:CWD --mount JOBDIR:JOBDIR --env NAME...
//     OPTIONS IMAGE sh -c 'cd CWD && exec "$@"' COMMAND`; GPUs through
//     NVIDIA_VISIBLE_DEVICES, enroot's own hook.
//
// Inside a container that holds only the job's GPUs (podman, docker,
// enroot), CUDA_VISIBLE_DEVICES and its per-task forms are renumbered
// from the host's indexes to the container's (0 to N-1).
//
// # Names and labels
//
// A job's container is named xce-<cluster>-<jobid>[-<index>] (the
// cluster name reduced to the characters a container name may hold) and
// labelled xce.cluster, xce.host, xce.job and xce.index, so that the
// worker can find and remove a job's container whatever happened to its
// CLI (RemoveArgs, ListArgs). A blaunch task's own container on a host
// other than the job's first (Job.Task) adds -t<task> to the name
// (TaskName, ParseTaskName) and the label xce.task.
package container
