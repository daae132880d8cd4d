package agent

// battach sessions with a terminal on this host (lib/worker's
// battachtty.go): the controller's frames of each, by the session's id,
// to the worker's session; the session's frames up the connection.

import (
	"context"
	"sync"

	"xce/lib/api/rpc"
	"xce/lib/worker"
)

// battachIn bounds the controller's frames waiting for one session: a
// session that does not take them (its command does not read its
// terminal) is ended rather than let hold the connection.
const battachIn = 256

type battachSessions struct {
	mu sync.Mutex
	in map[uint64]chan *rpc.BattachFrame
}

func (a *agent) battachFrame(ctx context.Context, w *worker.Worker, out chan<- *rpc.WorkerMessage, f *rpc.BattachFrame) {
	bs := &a.bs
	id := f.Id
	if open := f.GetOpen(); open != nil {
		in := make(chan *rpc.BattachFrame, battachIn)
		bs.mu.Lock()
		if bs.in == nil {
			bs.in = map[uint64]chan *rpc.BattachFrame{}
		}
		bs.in[id] = in
		bs.mu.Unlock()
		go func() {
			defer func() {
				bs.mu.Lock()
				delete(bs.in, id)
				bs.mu.Unlock()
			}()
			w.BattachSession(ctx, open, in, func(o *rpc.BattachFrame) {
				o.Id = id
				select {
				case out <- &rpc.WorkerMessage{Msg: &rpc.WorkerMessage_BattachFrame{BattachFrame: o}}:
				case <-ctx.Done():
				}
			})
		}()
		return
	}
	bs.mu.Lock()
	in := bs.in[id]
	bs.mu.Unlock()
	if in == nil {
		return
	}
	select {
	case in <- f:
	default:
		a.log.Warn("a battach session does not take its input; it ends", "session", id)
		go func() {
			select {
			case in <- &rpc.BattachFrame{Close: true}:
			case <-ctx.Done():
			}
		}()
	}
}
