package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"xce/lib/api/rpc"
	"xce/lib/interactive"
)

// battachMaxInput caps the standard input battach sends with its command.
const battachMaxInput = 1 << 20

// battach runs a shell (or, with -L, any program) in a running job's
// container, as the job's user, on the job's first host or -m's: the
// job's owner and administrators only. The worker of that host runs the
// container runtime's exec into the job's container. When battach's
// standard input is a terminal, the command gets one (the runtime's
// exec -it under a pseudo-terminal on the job's host) and input and
// output go both ways as they come, this terminal in raw mode meanwhile
// (battachtty.go); otherwise it is one exchange: it reads its standard
// input to the end, sends it with the command, and prints what the
// command wrote once it has ended. It exits with the command's exit
// code.
func battach(args []string) int {
	var host, shell string
	var ids []string
	cmd, code := newCommand(`battach [-m "host_name"] [-L "shell_path"] job_ID | "job_ID[index]"`,
		"Run a shell in a running job's container", func(a []string) int {
			ids = a
			return 0
		})
	f := cmd.Flags()
	f.StringVar(&host, "m", "", "the execution host of the job to attach to (default: its first)")
	f.StringVar(&shell, "L", "", "the shell or program to run, an absolute path (default: $LSB_BATTACH_DEFAULT_SHELL, else /bin/sh)")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	usage := func() int {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	if len(ids) != 1 {
		return usage()
	}
	refs, err := parseJobIDs(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	if len(refs) != 1 {
		fmt.Fprintln(sys.stderr, "battach: Cannot operate on job array")
		return usage()
	}
	idx := max(refs[0].ArrayIndex, 0) // a plain ID: the job itself
	if shell == "" {
		shell = sys.getenv("LSB_BATTACH_DEFAULT_SHELL")
	}
	if shell != "" && !filepath.IsAbs(shell) {
		fmt.Fprintf(sys.stderr, "battach: %s: The shell path must be an absolute path\n", shell)
		return 255
	}
	req := &rpc.BattachRequest{JobId: refs[0].JobId, Index: idx, Host: host, Shell: shell}
	if f, ok := sys.stdin.(*os.File); ok && interactive.IsTerminal(f) {
		return battachTerminal(req, f) // battachtty.go
	}
	in, err := io.ReadAll(io.LimitReader(sys.stdin, battachMaxInput+1))
	if err != nil {
		fmt.Fprintf(sys.stderr, "battach: standard input: %v\n", err)
		return 255
	}
	if len(in) > battachMaxInput {
		fmt.Fprintf(sys.stderr, "battach: the standard input is longer than %d bytes\n", battachMaxInput)
		return 255
	}
	c, cx, closeConn, ok := connect()
	if !ok {
		return 255
	}
	defer closeConn()
	req.Stdin = in
	r, err := c.Battach(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	sys.stdout.Write(r.Stdout)
	sys.stderr.Write(r.Stderr)
	return int(r.ExitCode)
}
