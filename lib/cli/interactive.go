package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/client"
	"xce/lib/interactive"
	"xce/lib/rpcstatus"
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
	// The job's side dials this bsub's socket when it can, else the
	// controller relays it (relayTerminal).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lost := make(chan string, 1)
	go relayTerminal(ctx, c, id, conns, lost)
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
			// A short job's connection may be waiting still (a relayed
			// one may come after the job's end is recorded).
			wait := endConnWait
			if code == 126 {
				wait = 0
			}
			select {
			case conn := <-conns:
				if jc, exited := attach(conn); exited {
					return jc
				}
			case <-time.After(wait):
			}
			return code
		case why := <-lost:
			// The job's host went away: the job's terminal with it.
			fmt.Fprintf(sys.stderr, "<<Connection to the job lost: %s>>\n", why)
			return exitLost
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

// endConnWait is how long bsub waits, once the job's end is recorded, for
// a connection of the job's side that has not come yet.
const endConnWait = 2 * time.Second

// exitLost is bsub's exit code when the job's host went away while bsub
// was attached: the job's own status is not known.
const exitLost = 255

// relayTerminal attaches to the job through the controller, which relays
// the job side's connections from the worker of the job's host, and
// hands each to conns as a Conn; a lost host is said on lost. It attaches
// again when the call breaks (a controller failover) until ctx ends, and
// gives up when the controller will never attach it.
func relayTerminal(ctx context.Context, c *client.Client, id int64, conns chan<- *interactive.Conn, lost chan<- string) {
	for ctx.Err() == nil {
		st, err := c.Attach(ctx, id, 0)
		if err != nil {
			switch rpcstatus.CodeOf(err) {
			case rpcstatus.NotFound, rpcstatus.PermissionDenied, rpcstatus.FailedPrecondition, rpcstatus.Unimplemented:
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		if relayConns(ctx, st, conns, lost) {
			st.Close()
			return
		}
		st.Close()
	}
}

// relayConns reads one Attach call until it ends; true when it ended for
// good (the job's host was lost, or ctx ended).
func relayConns(ctx context.Context, st *client.AttachStream, conns chan<- *interactive.Conn, lost chan<- string) bool {
	var cur *interactive.Relayed
	defer func() {
		if cur != nil {
			cur.End(nil)
		}
	}()
	send := func(typ byte, p []byte) error {
		return st.Send(&rpc.AttachRequest{Type: int32(typ), Payload: p})
	}
	for {
		ev, err := st.Recv()
		if err != nil {
			return ctx.Err() != nil
		}
		switch {
		case ev.Lost != "":
			if cur != nil {
				cur.End(nil)
				cur = nil
			}
			select {
			case lost <- ev.Lost:
			default:
			}
			return true
		case ev.Closed:
			if cur != nil {
				cur.End(nil)
				cur = nil
			}
		case byte(ev.Type) == interactive.Hello:
			if cur != nil {
				cur.End(nil)
			}
			var conn *interactive.Conn
			conn, cur = interactive.NewRelayed(send, nil)
			select {
			case conns <- conn:
			case <-ctx.Done():
				return true
			}
			cur.Deliver(interactive.Frame{Type: interactive.Hello, Payload: ev.Payload})
		case cur != nil:
			cur.Deliver(interactive.Frame{Type: byte(ev.Type), Payload: ev.Payload})
		}
	}
}
