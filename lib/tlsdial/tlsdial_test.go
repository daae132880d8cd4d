package tlsdial

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeHelper runs script in-process as the helper (InProcess): it reads
// what the command writes from in and writes to out.
func fakeHelper(script func(in *bufio.Reader, out io.Writer)) (Starter, chan string) {
	got := make(chan string, 1)
	return InProcess(func(target string, timeout time.Duration, in io.Reader, out io.Writer) {
		got <- fmt.Sprintf("%s %v", target, timeout)
		script(bufio.NewReader(in), out)
	}), got
}

func mintOK(_ context.Context, ek []byte) (uint32, uint32, []byte, []byte, error) {
	return 1000, 100, append([]byte("up-"), ek...), []byte("cp"), nil
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestDialRelays(t *testing.T) {
	proof := make(chan string, 1)
	start, got := fakeHelper(func(in *bufio.Reader, out io.Writer) {
		WriteLine(out, "ek", "0a0b")
		word, rest, err := ReadLine(in)
		proof <- fmt.Sprint(word, " ", rest, " ", err)
		// The session's first bytes follow the ok line at once, as a
		// server's settings do: the command must not lose them.
		io.WriteString(out, "ok\nfirst ")
		line, _ := in.ReadString('\n')
		io.WriteString(out, "echo "+line)
	})
	c, err := Dial(ctxT(t), start, "h1:7869", 2*time.Second, mintOK)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if g := <-got; g != "h1:7869 2s" {
		t.Errorf("helper started for %q, want %q", g, "h1:7869 2s")
	}
	// uid, gid, then the proofs in hex ("up-" and the exporter, "cp").
	if p := <-proof; p != "proof 1000 100 75702d0a0b 6370 <nil>" {
		t.Errorf("the helper read %q", p)
	}
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "first echo hello\n" {
		t.Errorf("relayed %q", b)
	}
	if c.RemoteAddr().String() != "h1:7869" || c.RemoteAddr().Network() != "tcp" {
		t.Errorf("remote address %v", c.RemoteAddr())
	}
}

func TestDialFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		script    func(in *bufio.Reader, out io.Writer)
		mint      Minter
		stage     string
		msg       string // contained in the error
		refused   bool
		helperGot string // what the helper read after its ek line
	}{
		{name: "no TCP connection", script: func(_ *bufio.Reader, out io.Writer) {
			WriteLine(out, "fail", StageDial, "dial tcp 10.0.0.1:7869: connect: connection refused")
		}, stage: StageDial, msg: "connection refused"},
		{name: "refused token", script: func(_ *bufio.Reader, out io.Writer) {
			WriteLine(out, "ek", "00")
			WriteLine(out, "fail", StageHandshake, "clusterauth: h1:7869: "+ErrUserRefused.Error())
		}, stage: StageHandshake, msg: "refused the user's proof", refused: true},
		{name: "no mint", script: func(in *bufio.Reader, out io.Writer) {
			WriteLine(out, "ek", "00")
			word, rest, _ := ReadLine(in)
			WriteLine(out, "fail", StageHandshake, "clusterauth: the user's proof for h1:7869: "+word+": "+rest)
		}, mint: func(context.Context, []byte) (uint32, uint32, []byte, []byte, error) {
			return 0, 0, nil, nil, errors.New("no user credential\nfrom the socket")
		}, stage: StageHandshake, msg: "nomint: no user credential from the socket"},
		{name: "ended before answering", script: func(*bufio.Reader, io.Writer) {}, stage: StageDial, msg: "xce-dial ended: EOF"},
		{name: "a bad exporter", script: func(_ *bufio.Reader, out io.Writer) {
			WriteLine(out, "ek", "zz")
		}, stage: StageHandshake, msg: "bad exporter"},
		{name: "an unknown line", script: func(_ *bufio.Reader, out io.Writer) {
			WriteLine(out, "hello")
		}, stage: StageHandshake, msg: `said "hello"`},
		{name: "an endless line", script: func(_ *bufio.Reader, out io.Writer) {
			io.WriteString(out, strings.Repeat("x", 3*maxLine))
		}, stage: StageDial, msg: "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start, _ := fakeHelper(tc.script)
			mint := tc.mint
			if mint == nil {
				mint = mintOK
			}
			c, err := Dial(ctxT(t), start, "h1:7869", time.Second, mint)
			if err == nil {
				c.Close()
				t.Fatal("dialled")
			}
			var de *Error
			if !errors.As(err, &de) || de.Stage != tc.stage || !strings.Contains(de.Msg, tc.msg) {
				t.Errorf("error %#v, want stage %s with %q", err, tc.stage, tc.msg)
			}
			if IsRefused(err) != tc.refused {
				t.Errorf("IsRefused = %v", !tc.refused)
			}
		})
	}
}

func TestDialCanceled(t *testing.T) {
	ended := make(chan error, 1)
	start, _ := fakeHelper(func(in *bufio.Reader, _ io.Writer) {
		_, err := in.ReadByte() // until the command closes its end
		ended <- err
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := Dial(ctx, start, "h1:7869", time.Second, mintOK)
	var de *Error
	if !errors.As(err, &de) || de.Stage != StageDial || !strings.Contains(de.Msg, "deadline") {
		t.Errorf("error %v, want the deadline at the dial stage", err)
	}
	if err := <-ended; err == nil {
		t.Error("the helper's input did not end")
	}
}

func TestStartFails(t *testing.T) {
	start := func(string, time.Duration) (io.ReadWriteCloser, error) { return nil, errors.New("no such file") }
	_, err := Dial(ctxT(t), start, "h1:7869", time.Second, mintOK)
	var de *Error
	if !errors.As(err, &de) || de.Stage != StageStart {
		t.Errorf("error %v, want the start stage", err)
	}
}

// TestExec runs a helper as a program: its arguments, the pipe both ways,
// and its end.
func TestExec(t *testing.T) {
	dir := t.TempDir()
	helper := filepath.Join(dir, HelperName)
	script := "#!/bin/sh\necho \"ek 00\"\nread word uid gid up cp\necho ok\necho \"$1 $2 $word $uid $gid $up $cp\"\ncat\n"
	if err := os.WriteFile(helper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctxT(t), Exec(helper), "h1:7869", 1500*time.Millisecond, mintOK)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || line != "h1:7869 1.5s proof 1000 100 75702d00 6370\n" {
		t.Errorf("the helper said %q (%v)", line, err)
	}
	io.WriteString(c, "back\n")
	if line, err := br.ReadString('\n'); err != nil || line != "back\n" {
		t.Errorf("relayed %q (%v)", line, err)
	}
	if err := c.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Errorf("SetDeadline: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

func TestHelperNextToTheProgram(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// One in PATH is not taken: root's PATH may hold a user's directory.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, HelperName), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if p, err := Helper(); err == nil {
		t.Errorf("found %s", p)
	} else if !strings.Contains(err.Error(), filepath.Join(filepath.Dir(self), HelperName)) {
		t.Errorf("error %v does not say where it looked", err)
	}
	// Next to the program: the test binary's directory is go test's own.
	beside := filepath.Join(filepath.Dir(self), HelperName)
	if err := os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Skip("cannot write next to the test binary:", err)
	}
	defer os.Remove(beside)
	if p, err := Helper(); err != nil || p != beside {
		t.Errorf("Helper() = %q, %v; want %s", p, err, beside)
	}
	os.Chmod(beside, 0o644)
	if _, err := Helper(); err == nil {
		t.Error("took a helper that cannot be run")
	}
}

func TestParseProof(t *testing.T) {
	uid, gid, up, cp, err := ParseProof("7 8 0a 0b")
	if err != nil || uid != 7 || gid != 8 || string(up) != "\n" || string(cp) != "\v" {
		t.Errorf("ParseProof = %d %d %q %q %v", uid, gid, up, cp, err)
	}
	for _, bad := range []string{"", "7 8 0a", "x 8 0a 0b", "7 8 zz 0b", "7 4294967296 0a 0b", "7 8 0a 0b 0c"} {
		if _, _, _, _, err := ParseProof(bad); err == nil {
			t.Errorf("ParseProof(%q) accepted", bad)
		}
	}
}

func TestWriteLineOneLine(t *testing.T) {
	var b strings.Builder
	WriteLine(&b, "fail", "dial", "two\nlines", strings.Repeat("y", 2*maxLine))
	if s := b.String(); strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") || len(s) != maxLine || !strings.HasPrefix(s, "fail dial two lines y") {
		t.Errorf("WriteLine wrote %d bytes, %d newlines: %.40q", len(s), strings.Count(s, "\n"), s)
	}
}
