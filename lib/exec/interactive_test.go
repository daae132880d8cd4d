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

// -o keeps the output in its file (with the job report), and without -e
// the error output goes there too, as for a batch job: nothing is relayed.
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
