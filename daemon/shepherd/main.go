// Command xce-shepherd runs one batch job to its end for xced's worker (see
// lib/exec). It is a separate, small binary because one starts per job: a
// smaller program starts faster than the whole controller would.
package main

import (
	"fmt"
	"os"

	"xce/lib/exec"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == exec.TaskArg {
		os.Exit(exec.TaskMain()) // a blaunch task, as its user (lib/worker/task.go)
	}
	if len(os.Args) > 1 && os.Args[1] == exec.RlimitArg {
		os.Exit(exec.RlimitMain(os.Args[2:])) // a job's limits, then the job
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: xce-shepherd LAUNCHFILE (started by xced, not by hand)")
		os.Exit(2)
	}
	os.Exit(exec.ShepherdMain(os.Args[1]))
}
