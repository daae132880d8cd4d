package interactive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"xce/lib/api"
)

// Listener is where a waiting bsub accepts its job's connection: a Unix
// socket in a directory only the submitting user can enter, so only that
// user's processes (the job's shepherd runs as the user) can connect.
type Listener struct {
	ln  *net.UnixListener
	dir string
}

// Listen opens a new listener under the system's temporary directory.
func Listen() (*Listener, error) {
	dir, err := os.MkdirTemp("", "xce-bsub-")
	if err != nil {
		return nil, fmt.Errorf("interactive listener: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("interactive listener: %w", err)
	}
	path := filepath.Join(dir, "job.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("interactive listener: %w", err)
	}
	return &Listener{ln: ln, dir: dir}, nil
}

// Addr is the address the job's side dials (Dial).
func (l *Listener) Addr() string { return "unix:" + l.ln.Addr().String() }

// Accept waits for the job's connection until ctx ends.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	stop := context.AfterFunc(ctx, func() { l.ln.Close() })
	defer stop()
	c, err := l.ln.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return newConn(c), nil
}

// Close stops listening and removes the socket's directory.
func (l *Listener) Close() error {
	err := l.ln.Close()
	os.RemoveAll(l.dir)
	return err
}

// Dial connects the job's side to a waiting bsub.
func Dial(addr string) (*Conn, error) {
	path, ok := strings.CutPrefix(addr, "unix:")
	if !ok {
		return nil, fmt.Errorf("interactive address %q: unknown kind", addr)
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	return newConn(c), nil
}

// ReadHello reads the first frame of a new connection: the host the job
// runs on.
func (c *Conn) ReadHello() (string, error) {
	typ, p, err := c.Recv()
	if err != nil {
		return "", err
	}
	if typ != Hello {
		return "", fmt.Errorf("interactive stream: expected the host's name, got frame %q", typ)
	}
	return string(p), nil
}

// Terminal is bsub's side of an attached job.
type Terminal struct {
	Mode    api.Interactive
	In      *os.File // the job's input, relayed until EOF; nil sends EOF at once
	Out     io.Writer
	Err     io.Writer
	Forward <-chan os.Signal // signals to pass on to the job
}

// Attach relays between t and the job until the job's exit status arrives
// (exited true) or the connection ends without one. With -Is on a terminal
// the terminal is in raw mode meanwhile; with -Ip or -Is the first frame
// sent is the window size, and every change follows.
func (t *Terminal) Attach(c *Conn) (status int, exited bool, err error) {
	if t.Mode == api.Interactive_PTY || t.Mode == api.Interactive_PTY_SHELL {
		// The job's terminal gets this one's size before the job starts
		// (0x0 when there is no terminal here), and every change.
		out, _ := t.Out.(*os.File)
		sendSize := func() {
			var rows, cols uint16
			if out != nil {
				if ws, err := unix.IoctlGetWinsize(int(out.Fd()), unix.TIOCGWINSZ); err == nil {
					rows, cols = ws.Row, ws.Col
				}
			}
			c.Send(Winsize, WinsizePayload(rows, cols))
		}
		sendSize()
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		done := make(chan struct{})
		defer close(done)
		go func() {
			for {
				select {
				case <-winch:
					sendSize()
				case <-done:
					return
				}
			}
		}()
	}
	// early is what the terminal held when it went raw: input typed while
	// the job waited for dispatch.
	early := 0
	if t.Mode == api.Interactive_PTY_SHELL && t.In != nil {
		if restore, err := makeRaw(int(t.In.Fd())); err == nil {
			defer restore()
			early, _ = unix.IoctlGetInt(int(t.In.Fd()), unix.TIOCINQ)
		}
	}
	go t.relayInput(c, early)
	if t.Forward != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			for {
				select {
				case sig := <-t.Forward:
					if s, ok := sig.(syscall.Signal); ok {
						c.SendUint32(Signal, uint32(s))
					}
				case <-done:
					return
				}
			}
		}()
	}
	for {
		typ, p, err := c.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
				return 0, false, nil
			}
			return 0, false, err
		}
		switch typ {
		case Stdout:
			t.Out.Write(p)
		case Stderr:
			t.Err.Write(p)
		case Exit:
			n, ok := Uint32(p)
			if !ok {
				return 0, false, fmt.Errorf("interactive stream: bad exit status frame")
			}
			return int(int32(n)), true, nil
		}
	}
}

// relayInput sends t.In to the job until it ends, then EOF. Of the first
// early bytes (what a -Is terminal held when it went raw) the NULs are
// dropped: Linux keeps an end-of-file typed in canonical mode (Ctrl-D
// while the job waited, or what script(1) sends when its own input ends)
// as a NUL, which raw mode then delivers as data and the job's terminal
// would echo as a stray "^@".
func (t *Terminal) relayInput(c *Conn, early int) {
	if t.In != nil {
		buf := make([]byte, 32<<10)
		for {
			n, err := t.In.Read(buf)
			data := buf[:n]
			if early > 0 && n > 0 {
				k := min(early, n)
				early -= k
				data = append(dropNUL(data[:k:k]), data[k:]...)
			}
			if len(data) > 0 {
				if c.Send(Stdin, data) != nil {
					return
				}
			}
			if err != nil {
				break
			}
		}
	}
	c.Send(EOF, nil)
}

// dropNUL returns b without its NUL bytes.
func dropNUL(b []byte) []byte {
	out := b[:0]
	for _, x := range b {
		if x != 0 {
			out = append(out, x)
		}
	}
	return out
}

// makeRaw puts the terminal fd in raw mode (as cfmakeraw does) and returns
// the function that restores it.
func makeRaw(fd int) (func(), error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	raw := *old
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN] = 1
	raw.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return nil, err
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
