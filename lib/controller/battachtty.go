package controller

// battach with a terminal (rpc/worker.proto's BattachFrame): the
// controller checks the caller as for battach without one, then relays
// the session's frames between battach's call and the worker of the
// job's host, acknowledging each output frame once battach's stream has
// taken it (the worker sends no more than its window ahead).

import (
	"context"
	"log/slog"
	"sync"

	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/interactive"
)

// battachSessioner is an executor that runs a battach session: the
// embedded worker itself, a remote worker's connection by relaying.
type battachSessioner interface {
	BattachSession(ctx context.Context, req *rpc.BattachRequest, in <-chan *rpc.BattachFrame, send func(*rpc.BattachFrame))
}

// battachQueue bounds the frames waiting for one side of a session.
const battachQueue = 64

// BattachStream is the Controller service's call: battach with a
// terminal.
func (s *Service) BattachStream(stream grpcapi.Controller_BattachStreamServer) error {
	who, err := caller(stream.Context())
	if err != nil {
		return err
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	open := first.GetOpen()
	if open == nil {
		return toStatus(userErr("battach: the session's first frame names no job"))
	}
	ex, fwd, err := s.c.battachTarget(who, open)
	if err != nil {
		return toStatus(err)
	}
	sess, ok := ex.(battachSessioner)
	if !ok {
		return toStatus(userErr("Job <%s>: the job's host <%s> is not connected", jobName(open.JobId, open.Index), fwd.Host))
	}
	if err := stream.Send(&rpc.BattachFrame{Opened: true}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	in := make(chan *rpc.BattachFrame, battachQueue)
	go func() {
		// battach's frames, until its call ends: then the session does.
		for {
			f, err := stream.Recv()
			if err != nil {
				f = &rpc.BattachFrame{Close: true}
			}
			select {
			case in <- &rpc.BattachFrame{Type: f.Type, Payload: f.Payload, Close: f.Close}:
			case <-ctx.Done():
				return
			}
			if f.Close {
				return
			}
		}
	}()
	var failed string
	var mu sync.Mutex
	sess.BattachSession(ctx, fwd, in, func(f *rpc.BattachFrame) {
		if f.Error != "" {
			failed = f.Error
			return
		}
		mu.Lock()
		err := stream.Send(&rpc.BattachFrame{Type: f.Type, Payload: f.Payload})
		mu.Unlock()
		if err == nil && byte(f.Type) == interactive.Stdout {
			// (Never waiting here: a remote session's relay calls this
			// from the loop that also empties in.)
			ack := &rpc.BattachFrame{Ack: 1}
			select {
			case in <- ack:
			default:
				go func() {
					select {
					case in <- ack:
					case <-ctx.Done():
					}
				}()
			}
		}
	})
	if failed != "" {
		slog.Info("battach: the worker could not run the command", "job", open.JobId, "index", open.Index, "host", fwd.Host, "err", failed)
		return toStatus(userErr("%s", failed))
	}
	return nil
}

// BattachSession relays a session to the remote worker: in's frames to
// it, its frames to send, until its exit status or error, the end of
// the connection, or ctx's.
func (w *workerConn) BattachSession(ctx context.Context, req *rpc.BattachRequest, in <-chan *rpc.BattachFrame, send func(*rpc.BattachFrame)) {
	from := make(chan *rpc.BattachFrame, battachQueue)
	w.mu.Lock()
	w.battachID++
	id := w.battachID
	if w.sessions == nil {
		w.sessions = map[uint64]chan *rpc.BattachFrame{}
	}
	w.sessions[id] = from
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.sessions, id)
		w.mu.Unlock()
	}()
	up := func(f *rpc.BattachFrame) {
		f.Id = id
		w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_BattachFrame{BattachFrame: f}})
	}
	open := req.CloneVT()
	open.Id = id
	up(&rpc.BattachFrame{Open: open})
	for {
		select {
		case f := <-in:
			up(f)
			if f.Close {
				return
			}
		case f := <-from:
			send(f)
			if f.Error != "" || byte(f.Type) == interactive.Exit {
				return
			}
		case <-w.closed:
			send(&rpc.BattachFrame{Error: "Job <" + jobName(req.JobId, req.Index) + ">: lost contact with host " + w.name + ", where the job runs"})
			return
		case <-ctx.Done():
			up(&rpc.BattachFrame{Close: true})
			return
		}
	}
}

// battachFrame takes a frame of one of the worker's sessions. The
// worker's window keeps the session's queue from filling; a frame that
// finds it full (a worker that ignores the window) ends the session.
func (w *workerConn) battachFrame(f *rpc.BattachFrame) {
	w.mu.Lock()
	ch := w.sessions[f.Id]
	w.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- f:
	default:
		slog.Warn("a battach session's worker sent beyond its window; the session ends", "host", w.name)
		w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_BattachFrame{BattachFrame: &rpc.BattachFrame{Id: f.Id, Close: true}}})
	}
}
