package exec

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"xce/lib/api"
)

// -L: a login shell builds the environment (it reads the user's profile);
// the submission's variables do not reach the job.
func TestLoginShell(t *testing.T) {
	l := newLaunch(t, `echo "FOO=$FOO PROFILE=$FROM_PROFILE SHELL=$SHELL JOBID=$LSB_JOBID"`)
	l.Job.Spec.LoginShell = "/bin/sh"
	home := l.Job.Spec.Home
	if err := os.WriteFile(filepath.Join(home, ".profile"), []byte("FROM_PROFILE=yes; export FROM_PROFILE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := runJob(t, l)
	b, _ := os.ReadFile(l.Job.SpoolOutput)
	out, _, _ := strings.Cut(string(b), "\n")
	if ev.ExitStatus != 0 || out != "FOO= PROFILE=yes SHELL=/bin/sh JOBID=748" {
		t.Fatalf("exit %d, output %q", ev.ExitStatus, b)
	}
}

// bmod of a running job: new limits written to the limits file take
// effect when the shepherd is told (SIGUSR1 in a real shepherd).
func TestLimitsReload(t *testing.T) {
	l := newLaunch(t, "sleep 30")
	l.Job.Spec.RunLimitSec = 3600
	os.MkdirAll(filepath.Dir(l.StatusFile), 0o700)
	reload := make(chan struct{}, 1)
	started := make(chan struct{})
	limits := LimitsFile(filepath.Join(t.TempDir(), "launch"))
	go func() {
		<-started
		if err := writeMessage(limits, &api.JobSpec{RunLimitSec: 1}, false); err != nil {
			t.Error(err)
		}
		reload <- struct{}{}
	}()
	ev, err := run(l, hooks{reload: reload, limitsFile: limits, started: func(int) { close(started) }})
	if err != nil {
		t.Fatal(err)
	}
	if ev.TermReason != api.TermReason_TERM_RUNLIMIT || ev.ExitStatus != 140 {
		t.Fatalf("event = %v, want TERM_RUNLIMIT with exit 140", ev)
	}
}

// -F -D -S -C: the job's per-process soft limits, in KB.
func TestRlimits(t *testing.T) {
	l := newLaunch(t, `echo "f=$(ulimit -S -f) c=$(ulimit -S -c) s=$(ulimit -S -s)"; head -c 20000 /dev/zero > big; echo "size=$(wc -c < big)"`)
	l.Job.Spec.FileLimitKb, l.Job.Spec.CoreLimitKb, l.Job.Spec.StackLimitKb = 8, 1, 4096
	ev := runJob(t, l)
	b, _ := os.ReadFile(l.Job.SpoolOutput)
	out, _, _ := strings.Cut(string(b), "\n\n")
	// sh's ulimit -f counts 512-byte blocks (dash) or KB (bash): either way
	// the file stops at 8 KB.
	if !strings.Contains(out, "size=8192") || !strings.Contains(out, "s=4096") {
		t.Fatalf("exit %d, output %q", ev.ExitStatus, out)
	}
}

// -p: more processes than the limit end the job (TERM_PROCESSLIMIT).
func TestProcessLimit(t *testing.T) {
	l := newLaunch(t, "sleep 20 & sleep 20 & sleep 20 & wait")
	l.Job.Spec.ProcessLimit = 2
	ev := runJob(t, l)
	if ev.TermReason != api.TermReason_TERM_PROCESSLIMIT || ev.State != api.JobState_EXIT {
		t.Fatalf("event = %v, want TERM_PROCESSLIMIT", ev)
	}
}

// -v: the job's virtual memory over the limit ends it (TERM_SWAP).
func TestSwapLimit(t *testing.T) {
	l := newLaunch(t, "sleep 20")
	l.Job.Spec.SwapLimitKb = 64 // sh and sleep map more than 64 KB
	ev := runJob(t, l)
	if ev.TermReason != api.TermReason_TERM_SWAP || ev.Usage.GetSwapKb() == 0 {
		t.Fatalf("event = %v, want TERM_SWAP with the swap used", ev)
	}
}

// -wa/-wt: the warning signal comes warning_time before the run limit.
func TestWarningAction(t *testing.T) {
	l := newLaunch(t, `trap 'echo warned; exit 0' USR1; sleep 20 & wait`)
	l.Job.Spec.RunLimitSec, l.Job.Spec.WarningAction, l.Job.Spec.WarningTimeSec = 3, "USR1", 2
	ev := runJob(t, l)
	b, _ := os.ReadFile(l.Job.SpoolOutput)
	// Had the warning not come first, the run limit's SIGUSR2 would have
	// ended the job (exit 140).
	if ev.ExitStatus != 0 || !strings.HasPrefix(string(b), "warned\n") {
		t.Fatalf("exit %d, output %q", ev.ExitStatus, b)
	}
}

// The warning also comes warning_time before a termination deadline
// (-t, or a closed advance reservation's window end, which the
// controller sets as the job's deadline): LSF's warning before the kill.
func TestWarningBeforeDeadline(t *testing.T) {
	l := newLaunch(t, `trap 'echo warned; exit 0' USR1; sleep 20 & wait`)
	l.Job.Spec.TermTime, l.Job.Spec.WarningAction, l.Job.Spec.WarningTimeSec = time.Now().Add(3*time.Second).Unix(), "USR1", 2
	ev := runJob(t, l)
	b, _ := os.ReadFile(l.Job.SpoolOutput)
	if ev.ExitStatus != 0 || !strings.HasPrefix(string(b), "warned\n") {
		t.Fatalf("exit %d (%s), output %q: want the warning before the deadline's kill", ev.ExitStatus, ev.TermReason, b)
	}
}

// A job shell killed from outside (here by itself, as kill -9 from
// another terminal would): what it started in the background does not run
// on untracked; the shepherd kills the job's process group before it
// records the end.
func TestLeftoversKilled(t *testing.T) {
	l := newLaunch(t, `sleep 300 & echo $! > bg; kill -9 $$`)
	ev := runJob(t, l)
	if ev.ExitStatus != 137 || ev.Signal != 9 {
		t.Errorf("event = %v, want exit 137 by signal 9", ev)
	}
	b, err := os.ReadFile(filepath.Join(dirOf(l), "bg"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// SIGKILL is delivered when the process next runs: allow it a moment.
	for i := 0; i < 100 && alive(pid); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the job's background process %d outlived the job", pid)
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}
