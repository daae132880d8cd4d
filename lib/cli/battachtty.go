package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/interactive"
)

// battachTerminal runs battach's session with a terminal: the frames of
// lib/interactive over the controller's BattachStream call, this
// terminal handled as bsub -Is handles it (raw mode, its size and every
// change sent).
func battachTerminal(req *rpc.BattachRequest, in *os.File) int {
	c, cx, closeConn, ok := connect()
	if !ok {
		return 255
	}
	defer closeConn()
	s, err := c.BattachSession(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	defer s.Close()
	conn, relay := interactive.NewRelayed(func(typ byte, payload []byte) error {
		return s.Send(&rpc.BattachFrame{Type: int32(typ), Payload: payload})
	}, s.Close)
	go func() {
		for {
			f, err := s.Recv()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				relay.End(err)
				return
			}
			if !relay.Deliver(interactive.Frame{Type: byte(f.Type), Payload: f.Payload}) {
				return
			}
		}
	}()
	t := &interactive.Terminal{Mode: api.Interactive_PTY_SHELL, In: in, Out: sys.stdout, Err: sys.stderr}
	status, exited, err := t.Attach(conn)
	switch {
	case err != nil:
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	case !exited:
		fmt.Fprintln(sys.stderr, "battach: the session ended without the command's exit status")
		return 255
	}
	return status
}
