package cli

import (
	"fmt"
	"os"

	"xce/lib/api/rpc"
)

// DriverStart is the job's process of a container job whose profile's
// exec_driver runs its starter as a context user other than the job's
// (lib/exec runs it as `xced --xce-driver-start ARGS`, as the job's
// user): it asks this host's worker, through the job's task socket, to
// run the starter as that user with ARGS (the runtime's command line),
// and relays the starter's output, signals and exit status as its own.
// The worker takes the starter and its user from the job's launch, not
// from here.
func DriverStart(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(sys.stderr, "exec_driver: "+format+"\n", a...)
		return blaunchFail
	}
	sock := sys.getenv("XCE_TASK_SOCKET")
	if sock == "" {
		return fail("XCE_TASK_SOCKET is not set: this job's worker gave it no task socket")
	}
	cwd, _ := os.Getwd()
	launch := &rpc.TaskLaunch{Argv: args, Env: os.Environ(), Cwd: cwd, Shell: rpc.TaskShell_TASK_SHELL_NONE, NoStdin: true,
		DriverStarter: true}
	return relayTasks(sock, launch, fail)
}
