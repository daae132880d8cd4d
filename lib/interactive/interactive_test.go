package interactive

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"xce/lib/api"
)

func TestFramesRoundTrip(t *testing.T) {
	a, b := net.Pipe()
	ca, cb := newConn(a), newConn(b)
	go func() {
		ca.Send(Hello, []byte("hostA"))
		ca.Send(Stdout, []byte("out"))
		ca.Send(Stderr, nil)
		ca.Send(Winsize, WinsizePayload(24, 80))
		ca.SendUint32(Exit, 0xffffffff)
		ca.Close()
	}()
	host, err := cb.ReadHello()
	if err != nil || host != "hostA" {
		t.Fatalf("hello = %q, %v", host, err)
	}
	want := []struct {
		typ byte
		p   string
	}{{Stdout, "out"}, {Stderr, ""}, {Winsize, "\x00\x18\x00\x50"}, {Exit, "\xff\xff\xff\xff"}}
	for _, w := range want {
		typ, p, err := cb.Recv()
		if err != nil || typ != w.typ || string(p) != w.p {
			t.Fatalf("frame = %q %q %v, want %q %q", typ, p, err, w.typ, w.p)
		}
	}
	if _, _, err := cb.Recv(); err != io.EOF {
		t.Fatalf("after close: %v, want EOF", err)
	}
	if rows, cols, ok := ParseWinsize(WinsizePayload(50, 200)); !ok || rows != 50 || cols != 200 {
		t.Fatalf("winsize = %d %d %v", rows, cols, ok)
	}
}

func TestRecvRefusesHugeFrames(t *testing.T) {
	a, b := net.Pipe()
	go a.Write([]byte{Stdout, 0xff, 0xff, 0xff, 0xff})
	if _, _, err := newConn(b).Recv(); err == nil || !strings.Contains(err.Error(), "frame of") {
		t.Fatalf("err = %v", err)
	}
	a.Close()
}

// A job side that sends output and an exit status; the terminal side
// relays its input and signals.
func TestListenDialAttach(t *testing.T) {
	ln, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if !strings.HasPrefix(ln.Addr(), "unix:") {
		t.Fatalf("addr = %q", ln.Addr())
	}
	if _, err := Dial("tcp:host:1"); err == nil {
		t.Fatal("Dial of an unknown kind of address succeeded")
	}
	got := make(chan string, 1)
	go func() {
		c, err := Dial(ln.Addr())
		if err != nil {
			got <- err.Error()
			return
		}
		c.Send(Hello, []byte("hostB"))
		var in bytes.Buffer
		var sig uint32
		eof := false
		for !eof || sig == 0 {
			typ, p, err := c.Recv()
			if err != nil {
				got <- "recv: " + err.Error()
				return
			}
			if typ == Stdin {
				in.Write(p)
			}
			if typ == Signal {
				sig, _ = Uint32(p)
			}
			eof = eof || typ == EOF
		}
		c.Send(Stdout, []byte("read "+in.String()))
		c.Send(Stderr, []byte("warning"))
		c.SendUint32(Exit, 7)
		got <- "ok"
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	host, err := c.ReadHello()
	if err != nil || host != "hostB" {
		t.Fatalf("hello = %q, %v", host, err)
	}
	r, w, _ := os.Pipe()
	w.WriteString("input")
	w.Close()
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGINT
	var out, errOut bytes.Buffer
	term := &Terminal{Mode: api.Interactive_PLAIN, In: r, Out: &out, Err: &errOut, Forward: sigs}
	status, exited, err := term.Attach(c)
	if err != nil || !exited || status != 7 {
		t.Fatalf("Attach = %d %v %v", status, exited, err)
	}
	if out.String() != "read input" || errOut.String() != "warning" {
		t.Fatalf("out %q err %q", out.String(), errOut.String())
	}
	if s := <-got; s != "ok" {
		t.Fatal(s)
	}
}

// A connection that ends without an exit status is not an exit.
func TestAttachWithoutExit(t *testing.T) {
	a, b := net.Pipe()
	go func() {
		ca := newConn(a)
		ca.Send(Stdout, []byte("partial"))
		ca.Close()
	}()
	var out bytes.Buffer
	term := &Terminal{Mode: api.Interactive_PLAIN, Out: &out, Err: io.Discard}
	_, exited, err := term.Attach(newConn(b))
	if exited || err != nil || out.String() != "partial" {
		t.Fatalf("exited %v err %v out %q", exited, err, out.String())
	}
}

func TestAcceptStopsWithContext(t *testing.T) {
	ln, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ln.Accept(ctx); err == nil {
		t.Fatal("Accept after cancel succeeded")
	}
}
