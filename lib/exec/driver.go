package exec

// A container job whose profile has an exec_driver (LSF's EXEC_DRIVER):
// its starter, not the runtime's CLI, is the job's process. The starter
// gets the runtime's command line that XCE would have run as its
// arguments (argv[1] the runtime's name: `docker run --rm ... IMAGE
// COMMAND`), with the job's environment and LSB_CONTAINER_NAME,
// LSB_CONTAINER_IMAGE and LSB_CONTAINER_RUNTIME added, so that a starter
// that only adds to the command line ends with `exec "$@"`.
//
// The starter runs as the driver's context user: the shepherd runs it
// itself when that is the job's user (or none is named); for any other
// user, the job's process is blaunch run as `blaunch DriverArg ARGS`,
// which asks this host's worker to run the starter as that user, in
// the job's cgroup, and relays its output, signals and exit status
// (lib/worker's driver.go).

import (
	"os"
	osexec "os/exec"
	"path/filepath"

	"xce/lib/container"
)

// DriverArg is blaunch's first argument when it is a container job's
// process that asks the worker for the driver's starter.
const DriverArg = "--xce-driver-start"

// driverCmd is the job's process for a driver's starter with argv (the
// runtime's command line).
func (s *shepherd) driverCmd(argv []string) *osexec.Cmd {
	d := s.ctr.driver
	if user, _ := execUser(s.spec); d.User == "" || d.User == user {
		return &osexec.Cmd{Path: d.Starter, Args: append([]string{d.Starter}, argv...)}
	}
	blaunch := "blaunch"
	if self, err := os.Executable(); err == nil {
		blaunch = filepath.Join(filepath.Dir(self), "blaunch")
	}
	return &osexec.Cmd{Path: blaunch, Args: append([]string{blaunch, DriverArg}, argv...)}
}

// driverEnv is what the starter learns of the container besides its
// command line.
func driverEnv(j *container.Job, rt container.Runtime) []string {
	return []string{
		"LSB_CONTAINER_NAME=" + container.Name(j.Cluster, j.JobID, j.Index),
		"LSB_CONTAINER_IMAGE=" + j.Image,
		"LSB_CONTAINER_RUNTIME=" + string(rt),
	}
}
