package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// TaskArg is the argument with which the shepherd's own binary runs a
// blaunch task (`BIN --xce-task`, TaskMain); the task's command line is
// in its environment, as TaskArgvEnv, so that the subreaper's own command
// line does not read as the task's (ps, pgrep -f).
const TaskArg = "--xce-task"

// TaskGateEnv, set, tells TaskMain to wait for GoByte on descriptor 3
// before it starts the task's command: the worker moves it into the job's
// cgroup meanwhile.
const TaskGateEnv = "XCE_TASK_GATE"

// TaskArgvEnv holds a task's command line for TaskMain: its words, JSON.
const TaskArgvEnv = "XCE_TASK_ARGV"

// TaskArgv is the TaskArgvEnv entry that carries argv.
func TaskArgv(argv []string) string {
	b, _ := json.Marshal(argv)
	return TaskArgvEnv + "=" + string(b)
}

// TaskMain runs a blaunch task's command, as the shepherd runs a job, so
// that the task's processes stay the task's: it is a child subreaper, so
// a process the command starts that leaves its group or session (setsid)
// is reparented to it, not to init, and it reaps them. When the command
// ends, every process left under it is killed and reaped before it exits
// with the command's status (re-raising the command's signal where that
// is one a plain process dies of). The worker starts it in a session of
// its own; the command shares its process group, so signals the worker
// sends the task's group reach the command, and TaskMain itself ignores
// them (the worker's SIGKILL, which it cannot ignore, comes after the
// worker has killed what is under it: KillDescendants).
func TaskMain() int {
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(TaskArgvEnv)), &args); err != nil || len(args) == 0 || args[0] == "" {
		fmt.Fprintln(os.Stderr, TaskArg+": no command line in "+TaskArgvEnv+" (started by xced, not by hand)")
		return 2
	}
	os.Unsetenv(TaskArgvEnv)
	if os.Getenv(TaskGateEnv) != "" {
		// The worker moves this process into the job's cgroup first: the
		// command starts only on its go, inside.
		os.Unsetenv(TaskGateEnv)
		gate := os.NewFile(3, "gate")
		var b [1]byte
		n, _ := gate.Read(b[:])
		gate.Close()
		if n != 1 || b[0] != GoByte {
			fmt.Fprintln(os.Stderr, TaskArg+": the worker did not let the task start")
			return exitCannotExec
		}
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "%s: subreaper: %v\n", TaskArg, err)
	}
	// Handled (not ignored, which the command would inherit) and dropped:
	// they went to the whole group, the command included.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGPIPE, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU,
		syscall.SIGWINCH, syscall.SIGURG, syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGVTALRM, syscall.SIGPROF)
	go func() {
		for range sigs {
		}
	}()
	cmd := osexec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", args[0], err)
		if errors.Is(err, osexec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return exitNotFound
		}
		return exitCannotExec
	}
	top := cmd.Process.Pid
	// Reap whatever ends (the command's orphans too) until the command
	// does; its status is read here, not by os/exec.
	var ws syscall.WaitStatus
	for {
		var st syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &st, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: wait: %v\n", TaskArg, err)
			return exitCannotExec
		}
		if pid == top {
			ws = st
			break
		}
	}
	KillDescendants(os.Getpid())
	// Reap them (all of them were killed): until none is left, or a
	// while for one that cannot be killed (another user's).
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.ECHILD) {
			break
		}
		if pid <= 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if ws.Signaled() {
		switch sig := ws.Signal(); sig {
		case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM:
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig)
			time.Sleep(time.Second)
			return 128 + int(sig)
		default:
			return 128 + int(sig)
		}
	}
	return ws.ExitStatus()
}

// KillDescendants sends SIGKILL to every process that descends from root
// (root is left), by the parents /proc gives: a few rounds, so that a
// process that forked meanwhile, or one reparented to root (a child
// subreaper) as its parent was killed, is found by the next one. Zombies
// are left to their parents.
func KillDescendants(root int) {
	for round := 0; round < 10; round++ {
		pids, err := Pids()
		if err != nil {
			return
		}
		parent := make(map[int]int, len(pids))
		zombie := map[int]bool{}
		for _, p := range pids {
			if ids, err := ReadProcIDs(p); err == nil {
				parent[p] = ids.PPid
				zombie[p] = ids.State == 'Z'
			}
		}
		killed := 0
		for p := range parent {
			if zombie[p] || p == root {
				continue
			}
			q := parent[p]
			for steps := 0; q > 1 && q != root && steps < len(parent); steps++ {
				q = parent[q]
			}
			if q == root {
				syscall.Kill(p, syscall.SIGKILL)
				killed++
			}
		}
		if killed == 0 {
			return
		}
		time.Sleep(time.Duration(10*(round+1)) * time.Millisecond)
	}
}
