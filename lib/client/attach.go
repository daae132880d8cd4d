package client

import (
	"context"
	"errors"
	"io"
	"sync"

	"xce/lib/api/rpc"
	"xce/lib/rpcstatus"
)

// AttachStream is bsub's Attach call: an interactive job's terminal,
// relayed by the controller from the worker of the job's host.
type AttachStream struct {
	s  *h2Stream
	mu sync.Mutex
}

// Attach opens the Attach call for a job: it returns once the controller
// (the leader, with candidates) has taken it.
func (c *Client) Attach(ctx context.Context, id int64, idx int32) (*AttachStream, error) {
	first := &rpc.AttachEvent{}
	s, err := c.cc.BidiStream(ctx, controllerService+"Attach", &rpc.AttachRequest{JobId: id, Index: idx}, first)
	if err != nil {
		return nil, err
	}
	if !first.Attached {
		s.cancel()
		return nil, rpcstatus.New(rpcstatus.Internal, "the controller did not attach the job's terminal")
	}
	return &AttachStream{s: s}, nil
}

// Send sends one frame at once; it may be called from several goroutines,
// and while another reads.
func (a *AttachStream) Send(m *rpc.AttachRequest) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.s.sendMsg(m); err != nil {
		return err
	}
	return a.s.c.flush()
}

// Recv is the next event; the call's status when it ended.
func (a *AttachStream) Recv() (*rpc.AttachEvent, error) {
	ev := &rpc.AttachEvent{}
	if err := a.s.RecvMsg(ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// Close ends the call.
func (a *AttachStream) Close() { a.s.cancel() }

// bidiStream opens a bidirectional call with its first request and reads
// the first reply, so that a standby's refusal comes before the call is
// handed out.
func (c *h2Conn) bidiStream(ctx context.Context, method string, first, reply vtMessage) (*h2Stream, error) {
	s, err := c.newStream(ctx, method)
	if err != nil {
		return nil, err
	}
	if err := s.sendMsg(first); err != nil {
		s.cancel()
		if errors.Is(err, io.EOF) {
			// The server ended the call: its status says why.
			if rerr := s.RecvMsg(reply); rerr != nil && !errors.Is(rerr, io.EOF) {
				return nil, rerr
			}
		}
		return nil, err
	}
	if err := s.RecvMsg(reply); err != nil {
		s.cancel()
		if errors.Is(err, io.EOF) {
			return nil, rpcstatus.New(rpcstatus.Internal, "the call ended without an answer")
		}
		return nil, err
	}
	return s, nil
}

// BidiStream opens a bidirectional call on the local socket's connection.
func (r *h2Redialer) BidiStream(ctx context.Context, method string, first, reply vtMessage) (*h2Stream, error) {
	return r.conn(ctx).bidiStream(ctx, method, first, reply)
}

// BidiStream opens a bidirectional call where the leader is. Opening one
// again is harmless (Attach), so any failure to open it is retried as a
// call that was never sent.
func (f *failover) BidiStream(ctx context.Context, method string, first, reply vtMessage) (*h2Stream, error) {
	var out *h2Stream
	err := f.do(ctx, func(ctx context.Context, r *h2Redialer) (bool, error) {
		s, err := r.conn(ctx).bidiStream(ctx, method, first, reply)
		if err != nil {
			return false, err
		}
		out = s
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
