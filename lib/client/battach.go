package client

import (
	"context"
	"sync"

	"xce/lib/api/rpc"
	"xce/lib/rpcstatus"
)

// Battach runs a command in a running job's container (battach).
func (c *Client) Battach(ctx context.Context, in *rpc.BattachRequest) (*rpc.BattachReply, error) {
	return unary[rpc.BattachReply](ctx, c, "Battach", in)
}

// BattachStream is battach's call with a terminal.
type BattachStream struct {
	s  *h2Stream
	mu sync.Mutex
}

// BattachSession opens battach's call with a terminal: it returns once
// the controller has let the session run (its refusal is the error).
func (c *Client) BattachSession(ctx context.Context, open *rpc.BattachRequest) (*BattachStream, error) {
	first := &rpc.BattachFrame{}
	s, err := c.cc.BidiStream(ctx, controllerService+"BattachStream", &rpc.BattachFrame{Open: open}, first)
	if err != nil {
		return nil, err
	}
	if !first.Opened {
		s.cancel()
		return nil, rpcstatus.New(rpcstatus.Internal, "the controller did not open the battach session")
	}
	return &BattachStream{s: s}, nil
}

// Send sends one frame at once; it may be called from several
// goroutines, and while another reads.
func (b *BattachStream) Send(f *rpc.BattachFrame) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.s.sendMsg(f); err != nil {
		return err
	}
	return b.s.c.flush()
}

// Recv is the command's next frame; the call's status when it ended.
func (b *BattachStream) Recv() (*rpc.BattachFrame, error) {
	f := &rpc.BattachFrame{}
	if err := b.s.RecvMsg(f); err != nil {
		return nil, err
	}
	return f, nil
}

// Close ends the call.
func (b *BattachStream) Close() { b.s.cancel() }
