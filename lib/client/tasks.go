package client

import (
	"context"

	"xce/lib/api/rpc"
)

// TaskStream is blaunch's Launch call to the worker of its own host, on
// the job's task socket (the Tasks service).
type TaskStream struct {
	c *h2Conn
	s *h2Stream
}

// LaunchTasks opens a Launch call on the task socket sock; ctx ends it.
func LaunchTasks(ctx context.Context, sock string) (*TaskStream, error) {
	c := dialH2(sock)
	s, err := c.newStream(ctx, "/xce.api.v1.Tasks/Launch")
	if err != nil {
		c.Close()
		return nil, err
	}
	return &TaskStream{c: c, s: s}, nil
}

// Send sends a request at once (a signal must not wait in the buffer for
// the next read). It may be called while another goroutine reads.
func (t *TaskStream) Send(m *rpc.TaskRequest) error {
	if err := t.s.SendMsg(m); err != nil {
		return err
	}
	return t.c.flush()
}

// Recv is the next event: io.EOF once every task has ended, the call's
// status when it failed.
func (t *TaskStream) Recv() (*rpc.TaskEvent, error) {
	ev := &rpc.TaskEvent{}
	if err := t.s.RecvMsg(ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// Close ends the call and its connection.
func (t *TaskStream) Close() error { return t.c.Close() }
