package worker

import (
	"fmt"
	"os"

	jobexec "xce/lib/exec"
)

// shepherdEnv is the environment a job's shepherd starts with: the
// worker's, the spool's reserve (when there is one, in MiB) and
// GOMAXPROCS=1. The shepherd waits far more than it computes, and one
// job's shepherd starts per job: with one P the Go runtime starts fewer
// threads for it (5 rather than 7 for a `true` job), and, given
// GOMAXPROCS, it skips reading the cgroup CPU limit at start and every
// second after. The job never sees the variable: its environment is
// built from the submission's (lib/exec).
func shepherdEnv(spoolReserve uint64) []string {
	env := append(os.Environ(), "GOMAXPROCS=1")
	if spoolReserve > 0 {
		env = append(env, fmt.Sprintf("%s=%d", jobexec.SpoolReserveEnv, max(spoolReserve>>20, 1)))
	}
	return env
}
