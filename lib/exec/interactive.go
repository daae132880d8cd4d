package exec

import (
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"xce/lib/api"
	"xce/lib/interactive"
)

// drainWait bounds how long the relay keeps reading the job's output after
// the job's process has ended: a background process the job left behind
// may hold the output open indefinitely.
const drainWait = 2 * time.Second

// termRelay connects an interactive job (bsub -I, -Ip, -Is) with the bsub
// waiting for it: the job's standard files that no -i, -o or -e redirects
// are pipes (-I) or a pseudo-terminal (-Ip, -Is) relayed over the
// connection.
type termRelay struct {
	conn *interactive.Conn
	mode api.Interactive

	ptm *os.File // the pseudo-terminal's master side, nil with -I
	pts *os.File // its job side

	// The job's ends of the relayed files, given to the job's process;
	// nil where a file of the job's own is used.
	stdin, stdout, stderr *os.File
	stdinW                *os.File // -I: where bsub's input is written

	outputs sync.WaitGroup // relays of the job's output still reading
	mu      sync.Mutex
	pgid    int  // the job's process group once it runs
	hungUp  bool // bsub went away
	onHang  func()
}

// dialTerminal connects to the waiting bsub and says where the job runs.
// The launch's address, when it names one, is the worker's relay socket:
// bsub's own is out of reach from this host.
func (s *shepherd) dialTerminal() error {
	addr := s.l.GetInteractiveAddr()
	if addr == "" {
		addr = s.spec.GetInteractiveAddr()
	}
	c, err := interactive.Dial(addr)
	if err != nil {
		return setupErrorf(exitSetup, "cannot reach the waiting bsub at %s: %v", addr, err)
	}
	if err := c.Send(interactive.Hello, []byte(s.hosts[0].GetHost())); err != nil {
		c.Close()
		return setupErrorf(exitSetup, "cannot reach the waiting bsub: %v", err)
	}
	s.term = &termRelay{conn: c, mode: s.spec.GetInteractive()}
	return nil
}

// open creates the relayed files: wantIn/Out/Err say which of the job's
// standard files have no file of their own.
func (t *termRelay) open(wantIn, wantOut, wantErr bool) error {
	if t.mode == api.Interactive_PLAIN {
		var err error
		if wantIn {
			if t.stdin, t.stdinW, err = os.Pipe(); err != nil {
				return err
			}
		}
		if wantOut {
			if t.stdout, err = t.pipeOutput(interactive.Stdout); err != nil {
				return err
			}
		}
		if wantErr {
			if t.stderr, err = t.pipeOutput(interactive.Stderr); err != nil {
				return err
			}
		}
		return nil
	}
	ptm, pts, err := pty.Open()
	if err != nil {
		return err
	}
	t.ptm, t.pts = ptm, pts
	if t.mode == api.Interactive_PTY {
		// -Ip: bsub's terminal stays in line mode and echoes what is
		// typed, so the job's terminal must not echo it again.
		if tio, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS); err == nil {
			tio.Lflag &^= unix.ECHO
			unix.IoctlSetTermios(int(pts.Fd()), unix.TCSETS, tio)
		}
	}
	if wantIn {
		t.stdin = pts
	}
	if wantOut {
		t.stdout = pts
	}
	if wantErr {
		t.stderr = pts
	}
	if !wantIn && !wantOut && !wantErr {
		pts.Close()
	}
	// bsub's first frame is its window size: the job starts with it.
	t.conn.SetReadDeadline(time.Now().Add(firstFrameWait))
	typ, p, err := t.conn.Recv()
	t.conn.SetReadDeadline(time.Time{})
	if err == nil {
		t.apply(typ, p)
	}
	t.outputs.Add(1)
	go t.copyOut(interactive.Stdout, ptm)
	return nil
}

// firstFrameWait bounds the wait for a pseudo-terminal's size.
const firstFrameWait = 5 * time.Second

// pipeOutput makes a pipe whose read end is relayed as frames of typ.
func (t *termRelay) pipeOutput(typ byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	t.outputs.Add(1)
	go t.copyOut(typ, r)
	return w, nil
}

func (t *termRelay) copyOut(typ byte, r *os.File) {
	defer t.outputs.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			t.conn.Send(typ, buf[:n])
		}
		if err != nil {
			// A pseudo-terminal's master reads EIO once no process holds
			// the terminal; a pipe reads EOF.
			return
		}
	}
}

// started lets bsub's input and signals reach the job's process group; a
// connection that ends before the job does hangs the job up (onHang).
func (t *termRelay) started(pgid int, onHang func()) {
	t.mu.Lock()
	t.pgid, t.onHang = pgid, onHang
	t.mu.Unlock()
	go t.readInput()
}

// readInput applies bsub's frames until the connection ends.
func (t *termRelay) readInput() {
	for {
		typ, p, err := t.conn.Recv()
		if err != nil {
			// The job still runs (finish has not begun): bsub went away.
			t.mu.Lock()
			hang := t.pgid > 0 && !t.hungUp
			t.hungUp = true
			f := t.onHang
			t.mu.Unlock()
			if hang && f != nil {
				f()
			}
			return
		}
		t.apply(typ, p)
	}
}

// apply acts on one frame from bsub.
func (t *termRelay) apply(typ byte, p []byte) {
	switch typ {
	case interactive.Stdin:
		if t.ptm != nil {
			t.ptm.Write(p)
		} else if t.stdinW != nil {
			t.stdinW.Write(p)
		}
	case interactive.EOF:
		if t.ptm != nil {
			// End of input on a terminal is its EOF character.
			t.ptm.Write([]byte{4})
		} else if t.stdinW != nil {
			t.stdinW.Close()
		}
	case interactive.Winsize:
		if rows, cols, ok := interactive.ParseWinsize(p); ok && t.ptm != nil && rows > 0 && cols > 0 {
			pty.Setsize(t.ptm, &pty.Winsize{Rows: rows, Cols: cols})
		}
	case interactive.Signal:
		if n, ok := interactive.Uint32(p); ok && n > 0 && n < 65 {
			t.mu.Lock()
			if t.pgid > 0 {
				syscall.Kill(-t.pgid, syscall.Signal(n))
			}
			t.mu.Unlock()
		}
	}
}

// cttyFd is the job's descriptor that is its pseudo-terminal, to become
// its controlling terminal; -1 when none is (-Ip with -i, -o and -e).
func (t *termRelay) cttyFd() int {
	for fd, f := range []*os.File{t.stdin, t.stdout, t.stderr} {
		if f != nil && f == t.pts {
			return fd
		}
	}
	return -1
}

// finish sends the rest of the job's output and its exit status, and
// closes the connection; the shepherd has closed its copies of the job's
// files by then (closeFiles), so the relays see the output end. Without an exit status (the job goes back to
// pending) bsub waits for the next dispatch.
func (t *termRelay) finish(ev *api.Event, sendExit bool) {
	t.mu.Lock()
	t.pgid = 0
	t.mu.Unlock()
	done := make(chan struct{})
	go func() { t.outputs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainWait):
	}
	if t.ptm != nil {
		t.ptm.Close()
	}
	if t.stdinW != nil {
		t.stdinW.Close()
	}
	if sendExit {
		t.conn.SendUint32(interactive.Exit, uint32(ev.GetExitStatus()))
	}
	t.conn.Close()
}
