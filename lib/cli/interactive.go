package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/interactive"
)

// interactiveMode is the mode -I, -Ip or -Is asks for.
func interactiveMode(o *bsubOpts) api.Interactive {
	switch {
	case o.interShell:
		return api.Interactive_PTY_SHELL
	case o.interPty:
		return api.Interactive_PTY
	case o.interactive:
		return api.Interactive_PLAIN
	}
	return api.Interactive_BATCH
}

// attachJob is the rest of an interactive bsub once the job is submitted:
// it waits for the job's shepherd to connect, relays the terminal and
// exits with the job's exit code, as LSF's bsub -I does. It goes on
// waiting when a connection ends without the job's exit status (the job
// is dispatched again), and ends when the controller says the job ended
// without one. An interrupt while the job waits kills it; once it runs,
// interrupts go to the job.
func attachJob(c *client.Client, ln *interactive.Listener, id int64, mode api.Interactive, stdinUsed bool) int {
	fmt.Fprintln(sys.stderr, "<<Waiting for dispatch ...>>")
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	ended := make(chan int, 1)
	go func() { ended <- watchEnd(c, id) }()
	conns := make(chan *interactive.Conn)
	go func() {
		for {
			conn, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			conns <- conn
		}
	}()
	in, _ := sys.stdin.(*os.File)
	if stdinUsed {
		in = nil // the job's script came from stdin
	}
	attach := func(conn *interactive.Conn) (int, bool) {
		defer conn.Close()
		host, err := conn.ReadHello()
		if err != nil {
			return 0, false
		}
		fmt.Fprintf(sys.stderr, "<<Starting on %s>>\n", host)
		t := &interactive.Terminal{Mode: mode, In: in, Out: sys.stdout, Err: sys.stderr, Forward: sigs}
		code, exited, err := t.Attach(conn)
		if err != nil {
			fmt.Fprintf(sys.stderr, "<<Connection to the job lost: %v>>\n", err)
		}
		return code, exited
	}
	for {
		select {
		case code := <-ended:
			// A short job's connection may be waiting still.
			select {
			case conn := <-conns:
				if jc, exited := attach(conn); exited {
					return jc
				}
			case <-time.After(100 * time.Millisecond):
			}
			return code
		case sig := <-sigs:
			// Not started yet: LSF's interactive bsub kills the job.
			if s, ok := sig.(syscall.Signal); ok && s != syscall.SIGQUIT {
				cx, cancel := connectTimeout()
				c.Signal(cx, &api.SignalRequest{Action: api.SignalRequest_KILL, Refs: []*api.JobRef{{JobId: id, ArrayIndex: -1}}})
				cancel()
			}
		case conn := <-conns:
			if code, exited := attach(conn); exited {
				return code
			}
		}
	}
}

// watchEnd waits until the controller records the job's end and returns
// bsub's exit code for it, printing LSF's line for a job that never ran.
func watchEnd(c *client.Client, id int64) int {
	announced := true // the shepherd's connection announces the start
	for {
		code, done, err := watchUntilDone(c, id, false, &announced)
		if done {
			if code == 126 {
				fmt.Fprintln(sys.stderr, "<<Terminated while pending>>")
			}
			return code
		}
		if err != nil {
			time.Sleep(500 * time.Millisecond)
		}
	}
}
