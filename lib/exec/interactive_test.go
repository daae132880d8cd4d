package exec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/interactive"
)

// bsubSide accepts the shepherd's connection, sends input, and collects
// what comes back.
type bsubSide struct {
	host           string
	stdout, stderr bytes.Buffer
	exit           int
	exited         bool
}

func attachTest(t *testing.T, l *api.Launch, mode api.Interactive, input string) (*api.Event, *bsubSide) {
	t.Helper()
	ln, err := interactive.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	l.Job.Spec.Interactive, l.Job.Spec.InteractiveAddr = mode, ln.Addr()
	res := &bsubSide{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		defer c.Close()
		if res.host, err = c.ReadHello(); err != nil {
			return
		}
		c.Send(interactive.Winsize, interactive.WinsizePayload(33, 121))
		if input != "" {
			c.Send(interactive.Stdin, []byte(input))
		}
		c.Send(interactive.EOF, nil)
		for {
			typ, p, err := c.Recv()
			if err != nil {
				return
			}
			switch typ {
			case interactive.Stdout:
				res.stdout.Write(p)
			case interactive.Stderr:
				res.stderr.Write(p)
			case interactive.Exit:
				n, _ := interactive.Uint32(p)
				res.exit, res.exited = int(int32(n)), true
			}
		}
	}()
	ev := runJob(t, l)
	<-done
	return ev, res
}

func TestInteractivePlain(t *testing.T) {
	l := newLaunch(t, `read line; echo "got $line"; echo oops >&2; echo "I=$LSB_INTERACTIVE"; exit 4`)
	ev, res := attachTest(t, l, api.Interactive_PLAIN, "hello\n")
	if ev.ExitStatus != 4 || !res.exited || res.exit != 4 || res.host != "hostA" {
		t.Fatalf("event exit %d, bsub exit %d (%v), host %q", ev.ExitStatus, res.exit, res.exited, res.host)
	}
	if res.stdout.String() != "got hello\nI=Y\n" || res.stderr.String() != "oops\n" {
		t.Fatalf("stdout %q stderr %q", res.stdout.String(), res.stderr.String())
	}
	// The output went to bsub: no spool file, no job report.
	if _, err := os.Stat(l.Job.SpoolOutput); !os.IsNotExist(err) {
		t.Fatalf("spool file exists: %v", err)
	}
}

// -o keeps the output in its file (with the job report); the error output
// still reaches bsub... as LSF puts stderr with stdout when -e is absent,
// both go to the file.
func TestInteractiveOutputFile(t *testing.T) {
	l := newLaunch(t, `echo to-file; echo err-too >&2`)
	l.Job.Spec.OutputFile = "out.txt"
	_, res := attachTest(t, l, api.Interactive_PLAIN, "")
	b, _ := os.ReadFile(filepath.Join(dirOf(l), "out.txt"))
	if !strings.HasPrefix(string(b), "to-file\nerr-too\n") || !strings.Contains(string(b), "Sender: LSF System") {
		t.Fatalf("out.txt = %q", b)
	}
	if res.stdout.Len() != 0 || res.stderr.Len() != 0 || !res.exited {
		t.Fatalf("relayed %q %q exited %v", res.stdout.String(), res.stderr.String(), res.exited)
	}
}

func TestInteractivePty(t *testing.T) {
	for _, mode := range []api.Interactive{api.Interactive_PTY, api.Interactive_PTY_SHELL} {
		t.Run(mode.String(), func(t *testing.T) {
			l := newLaunch(t, `test -t 0 && test -t 1 && test -t 2 && echo terminal; stty size; read x; echo "x=$x"`)
			ev, res := attachTest(t, l, mode, "typed\n")
			out := strings.ReplaceAll(res.stdout.String(), "\r\n", "\n")
			// The job's terminal echoes the input with -Is (whenever it
			// arrives); -Ip leaves the echo to bsub's terminal.
			echoes := 0
			if mode == api.Interactive_PTY_SHELL {
				echoes = 1
			}
			rest := strings.Replace(out, "typed\n", "", echoes)
			if ev.ExitStatus != 0 || !res.exited || rest != "terminal\n33 121\nx=typed\n" {
				t.Fatalf("exit %d (%v), output %q", ev.ExitStatus, res.exited, out)
			}
		})
	}
}

// A bsub that is gone: the job cannot start and says why.
func TestInteractiveNoBsub(t *testing.T) {
	l := newLaunch(t, "true")
	l.Job.Spec.Interactive = api.Interactive_PLAIN
	l.Job.Spec.InteractiveAddr = "unix:" + filepath.Join(t.TempDir(), "gone.sock")
	ev := runJob(t, l)
	if ev.State != api.JobState_EXIT || !strings.Contains(ev.Detail, "cannot reach the waiting bsub") {
		t.Fatalf("event = %v", ev)
	}
}

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
	go func() {
		<-started
		if err := writeMessage(LimitsFile(l.StatusFile), &api.JobSpec{RunLimitSec: 1}, false); err != nil {
			t.Error(err)
		}
		reload <- struct{}{}
	}()
	ev, err := run(l, hooks{reload: reload, started: func(int) { close(started) }})
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
