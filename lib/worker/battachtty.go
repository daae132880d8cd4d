package worker

// battach with a terminal: the runtime's `exec -it` runs under a
// pseudo-terminal the worker allocates (creack/pty, as the shepherd's
// interactive jobs), in a session of its own with that terminal as its
// controlling one, as the job's user. Its output goes to the caller as
// lib/interactive's Stdout frames, at most battachWindow of them not yet
// acknowledged (a caller that reads slowly holds back the command, not
// the worker's connection); the caller's Stdin frames are written to the
// terminal, EOF becomes the terminal's end-of-file character, Winsize
// resizes it. The session ends with an Exit frame carrying the exit
// status once the command has ended and its output is out, or when the
// caller goes (Close, or its frames end): the command is killed then.
// No time limit: a terminal session lasts as long as its user wants.

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os/exec"
	"syscall"
	"time"

	"github.com/creack/pty"

	"xce/lib/api/rpc"
	"xce/lib/container"
	"xce/lib/interactive"
)

const (
	// battachWindow is how many output frames may wait for the caller's
	// acknowledgement.
	battachWindow = 16
	// battachDrain bounds the wait for the command's last output once it
	// has ended (a process it left may hold the terminal open).
	battachDrain = 2 * time.Second
	// eofChar is the terminal's end-of-file character (VEOF, Ctrl-D).
	eofChar = 4
)

// BattachSession runs req's shell in the job's container under a
// terminal: in carries the caller's frames, send the command's (with
// req.Id). It returns when the session is over.
func (w *Worker) BattachSession(ctx context.Context, req *rpc.BattachRequest, in <-chan *rpc.BattachFrame, send func(*rpc.BattachFrame)) {
	fail := func(format string, a ...any) {
		send(&rpc.BattachFrame{Id: req.Id, Error: fmt.Sprintf(format, a...)})
	}
	r, msg := w.battachPrepare(req)
	if msg != "" {
		fail("%s", msg)
		return
	}
	args := container.ExecTTYArgs(r.rt, w.cfg.ClusterName, req.JobId, req.Index, r.uid, r.gid, []string{r.shell})
	cmd := exec.Command(r.cli, args[1:]...)
	cmd.Env, cmd.Dir = r.env, "/"
	ptm, err := pty.StartWithAttrs(cmd, nil, &syscall.SysProcAttr{Setsid: true, Setctty: true, Credential: r.cred})
	if err != nil {
		fail("Job <%s>: cannot run %s: %v", r.name, r.rt, err)
		return
	}
	defer ptm.Close()
	slog.Info("battach with a terminal", "job", req.JobId, "index", req.Index, "by_uid", req.Uid, "runtime", r.rt, "shell", r.shell)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	credits := make(chan struct{}, battachWindow)
	for range battachWindow {
		credits <- struct{}{}
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				select {
				case <-credits:
				case <-ctx.Done():
					return
				}
				send(&rpc.BattachFrame{Id: req.Id, Type: int32(interactive.Stdout), Payload: append([]byte(nil), buf[:n]...)})
			}
			if err != nil {
				return // EIO: no one holds the terminal any more
			}
		}
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	kill := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-waited
	}
	var drain <-chan time.Time
	exited, outDone, drained := false, false, false
	for !exited || !outDone && !drained {
		select {
		case f, ok := <-in:
			if !ok || f.Close {
				if !exited {
					kill()
				}
				return
			}
			switch {
			case f.Ack > 0:
				for range min(int(f.Ack), battachWindow) {
					select {
					case credits <- struct{}{}:
					default:
					}
				}
			case byte(f.Type) == interactive.Stdin:
				ptm.Write(f.Payload)
			case byte(f.Type) == interactive.EOF:
				ptm.Write([]byte{eofChar})
			case byte(f.Type) == interactive.Winsize:
				if rows, cols, ok := interactive.ParseWinsize(f.Payload); ok {
					pty.Setsize(ptm, &pty.Winsize{Rows: rows, Cols: cols})
				}
			}
		case <-waited:
			exited, waited = true, nil
			drain = time.After(battachDrain)
		case <-readDone:
			outDone, readDone = true, nil
		case <-drain:
			drained = true
		case <-ctx.Done():
			// The caller's connection went.
			if !exited {
				kill()
			}
			return
		}
	}
	cancel()
	status := exitStatus(cmd.ProcessState)
	send(&rpc.BattachFrame{Id: req.Id, Type: int32(interactive.Exit), Payload: binary.BigEndian.AppendUint32(nil, uint32(status))})
}
