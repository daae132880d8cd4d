package controller

// Interactive jobs' terminals relayed between bsub and the worker of the
// job's host (bsub -I, -Ip, -Is; lib/worker/term.go has the worker's
// side). A job's shepherd dials bsub's own socket only when it runs on
// this host and bsub reached the controller on the local socket; anywhere
// else the launch names no address, the worker relays the shepherd's
// frames up its link, and the controller passes them to the bsub attached
// to the job (Attach), and bsub's back down.
//
// Flow control: the worker sends at most worker.TermWindow bytes the
// controller has not acknowledged, and the controller acknowledges them
// once bsub's stream has taken them, so a job's queue here never holds
// more than that; bsub's input is read only while less than the window
// of it waits for the worker's acknowledgement. Neither way waits on the
// worker's link: a slow terminal holds back its own job only.
//
// Ends: bsub's call ending (bsub went away) hangs the job up, as LSF kills
// an interactive job whose bsub is gone; the job's host leaving ends the
// call with the reason, and bsub says so and exits. A job side that
// connects with no bsub attached waits attachWait for one, then is hung
// up.

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/interactive"
	"xce/lib/worker"
)

// attachWait is how long a job side's frames wait for bsub to attach.
const attachWait = 60 * time.Second

// maxTermQueue bounds the frames a session holds for bsub, besides the
// window's bytes (frames without payload count here).
const maxTermQueue = 8192

// localTerm is the relay API of the embedded worker (*worker.Worker).
type localTerm interface {
	TermDown(*rpc.TermData)
	TermAcked(*rpc.TermAck)
}

// termRoutes is the relayed terminals, by job.
type termRoutes struct {
	mu       sync.Mutex
	sessions map[key]*termSession
}

// termSession is one job's relayed terminal.
type termSession struct {
	k key

	mu       sync.Mutex
	cond     *sync.Cond
	att      *attachment // the bsub attached, nil while none
	host     string      // the host whose job side is connected, "" none
	queue    []queuedEvent
	inFlight int64 // bsub's input sent to the worker, not acknowledged
	timer    *time.Timer
}

type queuedEvent struct {
	ev   *rpc.AttachEvent
	host string // where the frame came from: its acknowledgement goes there
}

// attachment is one Attach call.
type attachment struct {
	wake chan struct{}
	done chan struct{}
	once sync.Once
}

func (a *attachment) end() { a.once.Do(func() { close(a.done) }) }

// LocalTermLink is the embedded worker's link for relayed terminals
// (worker.TermLink).
func (c *Controller) LocalTermLink() worker.TermLink { return localTermLink{c} }

type localTermLink struct{ c *Controller }

func (l localTermLink) TermUp(td *rpc.TermData) bool  { l.c.termFrom(l.c.cfg.Host, td); return true }
func (l localTermLink) TermAckUp(a *rpc.TermAck) bool { l.c.termAckFrom(l.c.cfg.Host, a); return true }

// termMessage handles a relayed terminal's message of a remote worker;
// false when m is none.
func (c *Controller) termMessage(from string, m *rpc.WorkerMessage) bool {
	switch m := m.Msg.(type) {
	case *rpc.WorkerMessage_Term:
		c.termFrom(from, m.Term)
	case *rpc.WorkerMessage_TermAck:
		c.termAckFrom(from, m.TermAck)
	default:
		return false
	}
	return true
}

// termDown sends a frame or hang-up to the worker of host.
func (c *Controller) termDown(host string, td *rpc.TermData) {
	switch ex := c.taskExecutor(host).(type) {
	case *workerConn:
		ex.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Term{Term: td}})
	case localTerm:
		ex.TermDown(td)
	}
}

// termAckDown acknowledges a job side's output to the worker of host.
func (c *Controller) termAckDown(host string, a *rpc.TermAck) {
	switch ex := c.taskExecutor(host).(type) {
	case *workerConn:
		ex.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_TermAck{TermAck: a}})
	case localTerm:
		ex.TermAcked(a)
	}
}

// termRunsOn says whether the job runs with host as its first host: a
// host speaks for its own jobs' terminals only.
func (c *Controller) termRunsOn(k key, host string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.jobs[k]
	return r != nil && isRunning(r.job.State) && firstHost(r.job) == host
}

func (c *Controller) termSession(k key, create bool) *termSession {
	c.term.mu.Lock()
	defer c.term.mu.Unlock()
	s := c.term.sessions[k]
	if s == nil && create {
		if c.term.sessions == nil {
			c.term.sessions = map[key]*termSession{}
		}
		s = &termSession{k: k}
		s.cond = sync.NewCond(&s.mu)
		c.term.sessions[k] = s
	}
	return s
}

func (c *Controller) dropTermSession(s *termSession) {
	c.term.mu.Lock()
	if c.term.sessions[s.k] == s {
		delete(c.term.sessions, s.k)
	}
	c.term.mu.Unlock()
}

// termFrom takes a frame of a job side from the worker of host.
func (c *Controller) termFrom(host string, td *rpc.TermData) {
	k := key{td.JobId, td.Index}
	hangUp := func() { c.termDown(host, &rpc.TermData{JobId: td.JobId, Index: td.Index, Close: true}) }
	opening := !td.Close && byte(td.Type) == interactive.Hello
	if opening && !c.termRunsOn(k, host) {
		slog.Warn("interactive terminal refused: the job does not run on the host", "job", td.JobId, "index", td.Index, "host", host)
		hangUp()
		return
	}
	s := c.termSession(k, opening)
	if s == nil {
		if !td.Close {
			hangUp() // nobody listens for it any more
		}
		return
	}
	s.mu.Lock()
	if opening {
		s.host = host
		s.inFlight = 0
		s.cond.Broadcast()
		if s.att == nil && s.timer == nil {
			s.timer = time.AfterFunc(attachWait, func() { c.attachTimedOut(s) })
		}
	} else if s.host != host {
		s.mu.Unlock()
		if !td.Close {
			hangUp()
		}
		return
	}
	ev := &rpc.AttachEvent{Type: td.Type, Payload: td.Payload}
	if td.Close {
		ev = &rpc.AttachEvent{Closed: true}
		s.host = ""
		s.cond.Broadcast()
	}
	if len(s.queue) >= maxTermQueue {
		s.mu.Unlock()
		slog.Warn("interactive terminal hung up: too many frames waiting for bsub", "job", td.JobId, "index", td.Index, "host", host)
		hangUp()
		return
	}
	s.queue = append(s.queue, queuedEvent{ev, host})
	att := s.att
	s.mu.Unlock()
	if att != nil {
		select {
		case att.wake <- struct{}{}:
		default:
		}
	}
}

// attachTimedOut hangs up a job side no bsub attached to.
func (c *Controller) attachTimedOut(s *termSession) {
	s.mu.Lock()
	host := s.host
	attached := s.att != nil
	s.timer = nil
	s.mu.Unlock()
	if attached {
		return
	}
	c.dropTermSession(s)
	if host != "" {
		slog.Warn("interactive job hung up: no bsub attached", "job", s.k.id, "index", s.k.idx, "host", host)
		c.termDown(host, &rpc.TermData{JobId: s.k.id, Index: s.k.idx, Close: true})
	}
}

// termAckFrom takes a worker's acknowledgement of bsub's input.
func (c *Controller) termAckFrom(host string, a *rpc.TermAck) {
	s := c.termSession(key{a.JobId, a.Index}, false)
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.host == host {
		s.inFlight = max(0, s.inFlight-a.Bytes)
		s.cond.Broadcast()
	}
	s.mu.Unlock()
}

// termHostLeft is a worker's connection ending: the bsubs of its jobs'
// terminals hear that their job's host went away.
func (c *Controller) termHostLeft(host string, conn *workerConn) {
	if ex, ok := c.taskExecutor(host).(*workerConn); ok && ex != conn {
		return // a newer connection of the same worker carries on
	}
	c.term.mu.Lock()
	var ss []*termSession
	for _, s := range c.term.sessions {
		ss = append(ss, s)
	}
	c.term.mu.Unlock()
	for _, s := range ss {
		s.mu.Lock()
		if s.host != host {
			s.mu.Unlock()
			continue
		}
		s.host = ""
		s.queue = append(s.queue, queuedEvent{ev: &rpc.AttachEvent{Lost: fmt.Sprintf("lost contact with host %s, where the job runs", host)}})
		s.cond.Broadcast()
		att := s.att
		s.mu.Unlock()
		if att != nil {
			select {
			case att.wake <- struct{}{}:
			default:
			}
		}
	}
}

// Attach relays a job's terminal for its waiting bsub: the job's owner
// only.
func (c *Controller) Attach(who Caller, stream grpcapi.Controller_AttachServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	k := key{first.JobId, first.Index}
	c.mu.Lock()
	r := c.jobs[k]
	var uid uint32
	var mode api.Interactive
	if r != nil {
		uid = r.eff.GetUid()
		if eff, err := r.eff.Spec(); err == nil {
			mode = eff.GetInteractive()
		}
	}
	c.mu.Unlock()
	switch {
	case r == nil:
		return status.Errorf(codes.NotFound, "Job <%s> is not found", jobName(k.id, k.idx))
	case uid != who.UID:
		return status.Errorf(codes.PermissionDenied, "Job <%s>: User permission denied", jobName(k.id, k.idx))
	case mode == api.Interactive_BATCH:
		return status.Errorf(codes.FailedPrecondition, "Job <%s> is not an interactive job", jobName(k.id, k.idx))
	}
	if err := stream.Send(&rpc.AttachEvent{Attached: true}); err != nil {
		return err
	}
	att := &attachment{wake: make(chan struct{}, 1), done: make(chan struct{})}
	s := c.termSession(k, true)
	s.mu.Lock()
	old := s.att
	s.att = att
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.mu.Unlock()
	if old != nil {
		old.end() // a bsub attached again (after a failover, say): the new one takes over
	}
	att.wake <- struct{}{} // what waited for it

	ctx := stream.Context()
	sent := make(chan error, 1)
	go func() { sent <- c.attachSend(s, att, stream) }()
	recvd := make(chan error, 1)
	go func() { recvd <- c.attachRecv(s, att, stream) }()
	select {
	case err = <-sent:
	case err = <-recvd:
	case <-att.done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	att.end()
	s.mu.Lock()
	mine := s.att == att
	host := s.host
	if mine {
		s.att = nil
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	if mine {
		c.dropTermSession(s)
		if host != "" {
			// bsub went away: the job is hung up, as LSF's is.
			slog.Info("interactive job hung up: its bsub went away", "job", k.id, "index", k.idx, "host", host)
			c.termDown(host, &rpc.TermData{JobId: k.id, Index: k.idx, Close: true})
		}
	}
	return err
}

// attachSend sends the job side's frames to bsub, acknowledging each to
// the worker once sent; a lost host ends the call.
func (c *Controller) attachSend(s *termSession, att *attachment, stream grpcapi.Controller_AttachServer) error {
	for {
		select {
		case <-att.wake:
		case <-att.done:
			return nil
		}
		for {
			s.mu.Lock()
			if s.att != att || len(s.queue) == 0 {
				s.mu.Unlock()
				break
			}
			q := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			if err := stream.Send(q.ev); err != nil {
				return err
			}
			if q.ev.Lost != "" {
				return nil
			}
			if n := len(q.ev.Payload); n > 0 && q.host != "" {
				c.termAckDown(q.host, &rpc.TermAck{JobId: s.k.id, Index: s.k.idx, Bytes: int64(n)})
			}
		}
	}
}

// attachRecv passes bsub's frames to the job side, within the window.
func (c *Controller) attachRecv(s *termSession, att *attachment, stream grpcapi.Controller_AttachServer) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil // bsub's side closed: bsub went away
		}
		if err != nil {
			return err
		}
		n := int64(len(req.Payload))
		if n > interactive.MaxFrame {
			return status.Errorf(codes.InvalidArgument, "a terminal frame of %d bytes", n)
		}
		s.mu.Lock()
		for s.att == att && s.host != "" && s.inFlight > 0 && s.inFlight+n > worker.TermWindow {
			s.cond.Wait()
		}
		host := s.host
		if s.att != att {
			s.mu.Unlock()
			return nil
		}
		if host != "" {
			s.inFlight += n
		}
		s.mu.Unlock()
		if host == "" {
			continue // no job side: nothing to give it to
		}
		c.termDown(host, &rpc.TermData{JobId: s.k.id, Index: s.k.idx, Type: req.Type, Payload: req.Payload})
	}
}

// Attach is the Controller service's call.
func (s *Service) Attach(stream grpcapi.Controller_AttachServer) error {
	who, err := caller(stream.Context())
	if err != nil {
		return err
	}
	return s.c.Attach(who, stream)
}

// relayTerm leaves an interactive job's address of bsub out of its launch
// where the job side cannot dial it: on any host but this one's embedded
// worker. The worker then relays the terminal.
func relayTerm(j *api.Job, ex Executor) {
	if j.GetSpec().GetInteractive() == api.Interactive_BATCH && j.GetEffective().GetInteractive() == api.Interactive_BATCH {
		return
	}
	if _, local := ex.(*worker.Worker); local {
		return
	}
	if j.Spec != nil {
		j.Spec.InteractiveAddr = ""
	}
	if j.Effective != nil {
		j.Effective.InteractiveAddr = ""
	}
}
