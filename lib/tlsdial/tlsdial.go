// Package tlsdial owns how a command reaches a controller candidate over
// TCP without linking TLS. It runs xce-dial (daemon/dial), a small helper
// that dials the candidate, runs TLS 1.3 and the user's proof
// (lib/clusterauth/handshake.ServeDial) and then relays the session's
// plaintext over its standard input and output. TLS, X.509 and their
// package initialisation are then paid only by a command whose call goes
// to a remote controller, not by every command start: most calls go to
// the local socket.
//
// The helper has no credentials of its own: the user's proofs are minted
// by the command, over its local socket, for the session's exporter that
// the helper sends it. On the pipe, before the relay, each side writes
// lines:
//
//	helper:  ek HEX                          after the TLS handshake
//	command: proof UID GID HEX HEX           or: nomint MESSAGE
//	helper:  ok                              the relay starts after this line
//	helper:  fail dial|handshake MESSAGE     instead, at any point; then it exits
package tlsdial

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// HelperName is the helper's file name, next to the command's.
const HelperName = "xce-dial"

// maxLine bounds a protocol line (an error message is cut to fit).
const maxLine = 4096

// The stages a dial fails at.
const (
	StageStart     = "start"     // the helper could not be run
	StageDial      = "dial"      // no TCP connection
	StageHandshake = "handshake" // TLS, or the cluster proof
)

// Error is a dial that failed: at Stage, for the reason in Msg (the
// helper's error text: lib/clusterauth/handshake.IsRefused reads it).
type Error struct {
	Stage, Msg string
}

func (e *Error) Error() string { return e.Msg }

var (
	// ErrRefused: the controller refused this side's cluster token (the
	// token files differ). Retrying does not help; the worker should say
	// so and exit.
	ErrRefused = errors.New("the controller refused the cluster token; the worker's token file must hold the controller's cluster.token")
	// ErrUnproven: the server did not prove it holds the cluster token: it
	// has another token, or it is not the controller (a man in the middle).
	ErrUnproven = errors.New("the server could not prove it holds the cluster token; it is not this cluster's controller, or its cluster.token differs")
	// ErrUserRefused: the controller refused a user's proof, minted by the
	// local xced or `xced worker`, whose cluster.token differs.
	ErrUserRefused = errors.New("the controller refused the user's proof; the cluster.token of this host's xced or xced worker differs from the controller's")
)

// IsRefused says whether err, a handshake's error or the error of an RPC
// that failed because the connection's handshake did, is ErrRefused,
// ErrUnproven or ErrUserRefused: the token does not match, and retrying
// will not help. An RPC's error carries the handshake's only as text.
func IsRefused(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrRefused) || errors.Is(err, ErrUnproven) || errors.Is(err, ErrUserRefused) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, ErrRefused.Error()) || strings.Contains(msg, ErrUnproven.Error()) ||
		strings.Contains(msg, ErrUserRefused.Error())
}

// Minter gives the user's proofs for a session's exporter ek.
type Minter func(ctx context.Context, ek []byte) (uid, gid uint32, userProof, controllerProof []byte, err error)

// Starter starts the helper for target with the handshake's timeout: rw
// reads its standard output and writes its standard input; closing rw
// ends it.
type Starter func(target string, timeout time.Duration) (rw io.ReadWriteCloser, err error)

// Dial connects to target through the helper that start runs, minting the
// proofs with mint, and returns the relayed session once the controller
// has proved itself. Its error is an *Error. ctx bounds the whole dial.
func Dial(ctx context.Context, start Starter, target string, timeout time.Duration, mint Minter) (net.Conn, error) {
	rw, err := start(target, timeout)
	if err != nil {
		return nil, &Error{StageStart, err.Error()}
	}
	// Cancellation ends the helper, and with it the reads below.
	stop := context.AfterFunc(ctx, func() { rw.Close() })
	c, err := handshake(ctx, rw, target, mint)
	if !stop() && err == nil {
		err = &Error{StageDial, ctx.Err().Error()}
	}
	if err != nil {
		rw.Close()
		return nil, err
	}
	return c, nil
}

func handshake(ctx context.Context, rw io.ReadWriteCloser, target string, mint Minter) (net.Conn, error) {
	br := bufio.NewReaderSize(rw, maxLine)
	// A helper that fails writes its reason and exits, maybe before it
	// reads what was written to it: the reason, next, says more than the
	// broken pipe.
	var writeErr error
	for {
		word, rest, err := ReadLine(br)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil, &Error{StageDial, ctx.Err().Error()}
			case writeErr != nil:
				return nil, &Error{StageHandshake, fmt.Sprintf("writing to %s: %v", HelperName, writeErr)}
			}
			return nil, &Error{StageDial, fmt.Sprintf("%s ended: %v", HelperName, err)}
		}
		switch word {
		case "ok":
			return &conn{r: br, rw: rw, addr: addr(target)}, nil
		case "fail":
			stage, msg, _ := strings.Cut(rest, " ")
			if stage != StageDial {
				stage = StageHandshake
			}
			return nil, &Error{stage, msg}
		case "ek":
			ek, err := hex.DecodeString(rest)
			if err != nil {
				return nil, &Error{StageHandshake, fmt.Sprintf("%s sent a bad exporter: %v", HelperName, err)}
			}
			uid, gid, up, cp, err := mint(ctx, ek)
			if err != nil {
				writeErr = WriteLine(rw, "nomint", err.Error())
			} else {
				writeErr = WriteLine(rw, "proof", strconv.FormatUint(uint64(uid), 10), strconv.FormatUint(uint64(gid), 10), hex.EncodeToString(up), hex.EncodeToString(cp))
			}
		default:
			return nil, &Error{StageHandshake, fmt.Sprintf("%s said %q", HelperName, word)}
		}
	}
}

// ReadLine reads one protocol line: its first word and the rest.
func ReadLine(br *bufio.Reader) (word, rest string, err error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return "", "", fmt.Errorf("a line longer than %d bytes", maxLine)
	}
	if err != nil {
		return "", "", err
	}
	word, rest, _ = strings.Cut(strings.TrimSuffix(string(line), "\n"), " ")
	return word, rest, nil
}

// WriteLine writes one protocol line of words; a newline in them becomes
// a space, and the line is cut to fit.
func WriteLine(w io.Writer, words ...string) error {
	line := strings.ReplaceAll(strings.Join(words, " "), "\n", " ")
	if len(line) >= maxLine {
		line = line[:maxLine-1]
	}
	_, err := io.WriteString(w, line+"\n")
	return err
}

// ParseProof reads a proof line's fields (after "proof").
func ParseProof(rest string) (uid, gid uint32, userProof, controllerProof []byte, err error) {
	f := strings.Fields(rest)
	if len(f) != 4 {
		return 0, 0, nil, nil, fmt.Errorf("a proof line of %d fields", len(f))
	}
	u, err1 := strconv.ParseUint(f[0], 10, 32)
	g, err2 := strconv.ParseUint(f[1], 10, 32)
	up, err3 := hex.DecodeString(f[2])
	cp, err4 := hex.DecodeString(f[3])
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return 0, 0, nil, nil, fmt.Errorf("a bad proof line: %w", err)
	}
	return uint32(u), uint32(g), up, cp, nil
}

// conn is the relayed session: reads go through the reader the protocol
// lines were read with, which may hold the session's first bytes.
type conn struct {
	r    *bufio.Reader
	rw   io.ReadWriteCloser
	addr net.Addr
}

func (c *conn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *conn) Write(p []byte) (int, error) { return c.rw.Write(p) }
func (c *conn) Close() error                { return c.rw.Close() }
func (c *conn) LocalAddr() net.Addr         { return addr("") }
func (c *conn) RemoteAddr() net.Addr        { return c.addr }

func (c *conn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// deadliner is what both pipes of a helper, files, let a deadline be set on.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

func (c *conn) SetReadDeadline(t time.Time) error {
	if d, ok := c.rw.(deadliner); ok {
		return d.SetReadDeadline(t)
	}
	return errors.ErrUnsupported
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	if d, ok := c.rw.(deadliner); ok {
		return d.SetWriteDeadline(t)
	}
	return errors.ErrUnsupported
}

// addr is a candidate's address as the command named it.
type addr string

func (a addr) Network() string { return "tcp" }
func (a addr) String() string  { return string(a) }

// Helper finds the helper next to this program's executable (symbolic
// links resolved). Not in PATH: it is given the user's proofs, and root's
// PATH may name a directory that a user can write.
func Helper() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find %s, which connects to remote controllers: %w", HelperName, err)
	}
	p := filepath.Join(filepath.Dir(self), HelperName)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s, which connects to remote controllers, is not next to this command (%s)", HelperName, p)
	}
	return p, nil
}

// Exec is the Starter that runs the helper at path.
func Exec(path string) Starter {
	return func(target string, timeout time.Duration) (io.ReadWriteCloser, error) {
		p, childIn, childOut, err := newPipes()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(path, target, timeout.String())
		cmd.Stdin, cmd.Stdout = childIn, childOut // its standard error is discarded
		err = cmd.Start()
		childIn.Close()
		childOut.Close()
		if err != nil {
			p.in.Close()
			p.out.Close()
			return nil, fmt.Errorf("start %s: %w", path, err)
		}
		p.wait = func() { cmd.Wait() }
		return p, nil
	}
}

// InProcess is the Starter that runs serve, the helper's code
// (handshake.ServeDial), in this process, on pipes as the executable's:
// for a program that links TLS anyway, and for tests.
func InProcess(serve func(target string, timeout time.Duration, in io.Reader, out io.Writer)) Starter {
	return func(target string, timeout time.Duration) (io.ReadWriteCloser, error) {
		p, childIn, childOut, err := newPipes()
		if err != nil {
			return nil, err
		}
		go func() {
			serve(target, timeout, childIn, childOut)
			// As a process's end: its output ends, writes to it fail.
			childOut.Close()
			childIn.Close()
		}()
		return p, nil
	}
}

// newPipes makes the two pipes between a command and its helper: p is the
// command's end, childIn and childOut the helper's standard input and
// output.
func newPipes() (p *proc, childIn, childOut *os.File, err error) {
	childIn, in, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		in.Close()
		return nil, nil, nil, err
	}
	return &proc{in: in, out: out}, childIn, childOut, nil
}

// proc is the command's end of a running helper.
type proc struct {
	in, out *os.File
	wait    func() // reaps the helper's process, if it is one
}

func (p *proc) Read(b []byte) (int, error)  { return p.out.Read(b) }
func (p *proc) Write(b []byte) (int, error) { return p.in.Write(b) }

func (p *proc) SetReadDeadline(t time.Time) error  { return p.out.SetReadDeadline(t) }
func (p *proc) SetWriteDeadline(t time.Time) error { return p.in.SetWriteDeadline(t) }

// Close ends the helper: its input ends, which ends the session, and its
// output closes; a process is reaped in the background.
func (p *proc) Close() error {
	err := p.in.Close()
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	p.out.Close()
	if p.wait != nil {
		go p.wait()
	}
	return err
}
