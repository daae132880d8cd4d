package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"xce/lib/api/rpc"
	"xce/lib/client"
	"xce/lib/rpcstatus"
)

// blaunchFail is blaunch's status when it cannot launch (OpenLava's
// exit(-1)).
const blaunchFail = 255

// blaunch starts tasks of a parallel job on the job's hosts through the
// worker of this host (its task socket, XCE_TASK_SOCKET; lib/worker's
// task.go) and waits for them: their output is its output, and it exits
// with 0 when every task did, else with the first failing task's status.
// SIGINT and SIGTERM (and SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2) go to the
// tasks.
//
// Hosts: -z "h1 h2 ...", -u FILE (one host a line), or the rsh form
// `blaunch host command`; none = one task per slot of the job. In the
// rsh form the first word is taken as a host when it is one of the job's
// hosts, or when it is not a command found on PATH (so that a host not
// given to the job is refused rather than run as a command).
func blaunch(args []string) int {
	var zHosts, uFile string
	var noShell, loginShell bool
	cmd, code := newCommand(`blaunch [-n] [-u host_file | -z host_name ... | host_name] [-use-login-shell | -no-shell] command [argument ...]`,
		"Launch tasks of a parallel job on the job's hosts", func(a []string) int {
			return runBlaunch(a, zHosts, uFile, noShell, loginShell)
		})
	f := cmd.Flags()
	f.Bool("n", false, "the tasks' standard input is /dev/null (it always is in XCE)")
	f.StringVar(&zHosts, "z", "", "launch one task on each of these hosts (a space-separated list)")
	f.StringVar(&uFile, "u", "", "launch one task for each line of this host file")
	f.BoolVar(&loginShell, "use-login-shell", false, "run the command under the user's login shell")
	f.BoolVar(&noShell, "no-shell", false, "run the command without a shell")
	if rc, done := execute(cmd, code, args, true); done {
		return rc
	}
	return *code
}

func runBlaunch(args []string, zHosts, uFile string, noShell, loginShell bool) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(sys.stderr, "blaunch: "+format+"\n", a...)
		return blaunchFail
	}
	if sys.getenv("LSB_JOBID") == "" {
		return fail("cannot run without jobid")
	}
	if zHosts != "" && uFile != "" {
		return fail("-u and -z are mutually exclusive")
	}
	if noShell && loginShell {
		return fail("-use-login-shell and -no-shell are mutually exclusive")
	}
	var hosts []string
	switch {
	case zHosts != "":
		hosts = strings.Fields(zHosts)
	case uFile != "":
		b, err := os.ReadFile(uFile)
		if err != nil {
			return fail("%v", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
				hosts = append(hosts, f[0])
			}
		}
	case len(args) > 1 && blaunchHostWord(args[0]):
		hosts, args = args[:1], args[1:]
	}
	if len(args) == 0 {
		return fail("no command given\nUsage: blaunch [-n] [-u host_file | -z host_name ... | host_name] [-use-login-shell | -no-shell] command [argument ...]")
	}
	sock := sys.getenv("XCE_TASK_SOCKET")
	if sock == "" {
		return fail("XCE_TASK_SOCKET is not set: this job's worker gave it no task socket")
	}
	cwd, _ := os.Getwd()
	shell := rpc.TaskShell_TASK_SHELL_SH
	switch {
	case noShell:
		shell = rpc.TaskShell_TASK_SHELL_NONE
	case loginShell:
		shell = rpc.TaskShell_TASK_SHELL_LOGIN
	}
	launch := &rpc.TaskLaunch{Hosts: hosts, Argv: args, Env: os.Environ(), Cwd: cwd, Shell: shell, NoStdin: true}
	return relayTasks(sock, launch, fail)
}

// relayTasks sends launch to the worker's task socket sock and relays
// the tasks' output to this process's, and its signals to them; it
// returns 0 when every task ended with 0, else the first failing task's
// status.
func relayTasks(sock string, launch *rpc.TaskLaunch, fail func(format string, a ...any) int) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := client.LaunchTasks(ctx, sock)
	if err != nil {
		return fail("cannot reach this host's worker: %v", rpcstatus.MessageOf(err))
	}
	defer stream.Close()
	if err := stream.Send(&rpc.TaskRequest{Msg: &rpc.TaskRequest_Launch{Launch: launch}}); err != nil && !errors.Is(err, io.EOF) {
		return fail("cannot reach this host's worker: %v", err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			stream.Send(&rpc.TaskRequest{Msg: &rpc.TaskRequest_Signal{Signal: int32(s.(syscall.Signal))}})
		}
	}()
	rc := -1
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail("%s", rpcstatus.MessageOf(err))
		}
		switch m := ev.Msg.(type) {
		case *rpc.TaskEvent_Output:
			w := sys.stdout
			if m.Output.Stderr {
				w = sys.stderr
			}
			w.Write(m.Output.Data)
		case *rpc.TaskEvent_Exit:
			x := m.Exit
			if x.Error != "" {
				fmt.Fprintf(sys.stderr, "blaunch: task %d on host <%s>: %s\n", x.TaskId, x.Host, x.Error)
			}
			if x.ExitCode != 0 && rc < 0 {
				rc = int(x.ExitCode)
			}
		}
	}
	return max(rc, 0)
}

// blaunchHostWord reports whether the first word of `blaunch word
// command...` is a host: one of the job's, or not a command.
func blaunchHostWord(w string) bool {
	for _, h := range strings.Fields(sys.getenv("LSB_HOSTS")) {
		if h == w {
			return true
		}
	}
	if strings.Contains(w, "/") {
		return false
	}
	_, err := exec.LookPath(w)
	return err != nil
}
