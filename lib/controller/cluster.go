package controller

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/bounds"
	"xce/lib/clusterauth"
	"xce/lib/worker"
)

// ClusterService is the controller's side of the workers' link (the
// Cluster gRPC service): one stream per worker, whose first message
// registers the host. The caller serves it over TCP with credentials
// that only a holder of the cluster token passes (lib/clusterauth).
type ClusterService struct {
	grpcapi.UnimplementedClusterServer
	c *Controller
}

// ClusterService returns the service remote workers connect to.
func (c *Controller) ClusterService() *ClusterService { return &ClusterService{c: c} }

// validHostName is what a worker may register as: a DNS label or name,
// which is also what LSF accepts in its host lists.
var validHostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,62})$`)

// Connect is one worker's connection, for as long as it lasts.
func (s *ClusterService) Connect(stream grpcapi.Cluster_ConnectServer) error {
	if !clusterauth.PeerIsWorker(stream.Context()) {
		return status.Error(codes.Unauthenticated, "only a cluster worker may connect")
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	reg := first.GetRegister()
	if reg == nil || reg.Host == nil {
		return status.Error(codes.InvalidArgument, "the first message must register the host")
	}
	name := reg.Host.GetName()
	if !validHostName.MatchString(name) {
		return status.Errorf(codes.InvalidArgument, "%q: Bad host name", name)
	}
	conn := newWorkerConn(name, reg.GetRunDir())
	if p, ok := peer.FromContext(stream.Context()); ok && p.Addr != nil {
		conn.peer = p.Addr.String()
	}
	if err := s.c.workerJoined(conn, reg); err != nil {
		slog.Warn("worker refused", "host", name, "from", conn.peer, "err", err)
		var taken *hostTakenError
		if errors.As(err, &taken) {
			return status.Error(codes.AlreadyExists, err.Error())
		}
		if errors.As(err, new(errDecommissioned)) {
			return status.Error(codes.PermissionDenied, err.Error()) // ends the worker
		}
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	slog.Info("worker joined", "host", name, "running", len(reg.Running), "slots", reg.Host.GetMaxSlots())
	ctx := stream.Context()
	sent := make(chan error, 1)
	go func() { sent <- conn.sendLoop(stream) }()
	recvd := make(chan error, 1)
	go func() { recvd <- s.receive(conn, stream) }()
	select {
	case err = <-recvd:
	case err = <-sent:
	case <-conn.closed:
		err = errors.New(conn.why)
	case <-ctx.Done():
		err = ctx.Err()
	}
	conn.close("connection ended")
	s.c.workerLeft(conn)
	s.c.tasksHostLeft(name, conn) // blaunch's tasks to or from it (tasks.go)
	s.c.termHostLeft(name, conn)  // interactive jobs' terminals (term.go)
	slog.Warn("worker left", "host", name, "err", err)
	return err
}

// receive handles what a worker sends until the stream breaks.
func (s *ClusterService) receive(conn *workerConn, stream grpcapi.Cluster_ConnectServer) error {
	for {
		msg, err := stream.Recv()
		if err != nil {
			return err
		}
		switch m := msg.Msg.(type) {
		case *rpc.WorkerMessage_Load:
			s.c.hostLoaded(conn, m.Load)
		case *rpc.WorkerMessage_Report:
			rep := m.Report
			r := worker.Report{
				JobID: rep.JobId, Index: rep.Index, Host: conn.name,
				Started: rep.Started, Finished: rep.Finished,
				ShepherdPid: int(rep.ShepherdPid), NeverStarted: rep.NeverStarted,
			}
			if rep.Error != "" {
				r.Err = errors.New(rep.Error)
			}
			seq := rep.Seq
			s.c.reportThen(r, func() { conn.acknowledge(seq) })
		case *rpc.WorkerMessage_Usage:
			conn.setUsage(m.Usage)
		case *rpc.WorkerMessage_Peek:
			conn.peeked(m.Peek)
		case *rpc.WorkerMessage_Battach:
			conn.battached(m.Battach) // battach.go
		case *rpc.WorkerMessage_BattachFrame:
			conn.battachFrame(m.BattachFrame) // battachtty.go
		default:
			if !s.c.taskMessage(conn.name, msg) { // blaunch (tasks.go)
				s.c.termMessage(conn.name, msg) // interactive jobs (term.go)
			}
		}
	}
}

// workerConn is one remote worker's connection: the Executor of its host.
// What the controller asks of it is queued and sent in order by
// sendLoop, so no caller waits on the network.
type workerConn struct {
	name   string
	runDir string
	peer   string // the worker's address, for messages

	mu       sync.Mutex
	out      []*rpc.ControllerMessage
	outBytes int          // task output in out
	dropped  map[key]bool // jobs whose task output over outputCap was dropped (and logged)
	wake     chan struct{}
	acked    uint64
	usage    map[key]*api.ResourceUsage
	peeks    map[uint64]chan *rpc.PeekReply
	peekID   uint64
	// battaches are the battach calls waiting for this worker's answer
	// (battach.go), by the id sent with each.
	battaches map[uint64]chan *rpc.BattachReply
	battachID uint64
	closed    chan struct{}
	why       string

	// sessions are the battach sessions with a terminal on this worker
	// (battachtty.go), by id (battachID's numbers too).
	sessions map[uint64]chan *rpc.BattachFrame
}

func newWorkerConn(name, runDir string) *workerConn {
	return &workerConn{
		name: name, runDir: runDir,
		wake: make(chan struct{}, 1), closed: make(chan struct{}),
		usage: map[key]*api.ResourceUsage{}, peeks: map[uint64]chan *rpc.PeekReply{},
		battaches: map[uint64]chan *rpc.BattachReply{},
	}
}

func (w *workerConn) send(m *rpc.ControllerMessage) {
	w.mu.Lock()
	w.out = append(w.out, m)
	w.outBytes += len(m.GetTaskOutput().GetData())
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// close ends the connection (a newer one of the same host replaces it).
func (w *workerConn) close(why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.closed:
		return
	default:
	}
	w.why = why
	close(w.closed)
	for id, ch := range w.peeks {
		close(ch)
		delete(w.peeks, id)
	}
}

func (w *workerConn) sendLoop(stream grpcapi.Cluster_ConnectServer) error {
	for {
		w.mu.Lock()
		batch := w.out
		w.out = nil
		w.mu.Unlock()
		for _, m := range batch {
			if err := stream.Send(m); err != nil {
				return err
			}
			if n := len(m.GetTaskOutput().GetData()); n > 0 {
				w.mu.Lock()
				w.outBytes -= n
				w.mu.Unlock()
			}
		}
		select {
		case <-w.wake:
		case <-w.closed:
			return errors.New(w.why)
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
}

// acknowledge tells the worker its reports up to seq are stored.
func (w *workerConn) acknowledge(seq uint64) {
	w.mu.Lock()
	if seq <= w.acked {
		w.mu.Unlock()
		return
	}
	w.acked = seq
	w.mu.Unlock()
	w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Ack{Ack: seq}})
}

func (w *workerConn) setUsage(u *rpc.WorkerUsage) {
	m := make(map[key]*api.ResourceUsage, len(u.GetJobs()))
	for _, j := range u.GetJobs() {
		// Never negative nor past what a host can count, even for
		// bjobs (refreshUsage checks it against the job's hosts too).
		if bad := bounds.Usage(j.Usage, bounds.Limits{}); len(bad) > 0 {
			slog.Warn("a worker reported a job's usage out of range; clamped", "host", w.name,
				"job", j.JobId, "index", j.Index, "fields", bad)
		}
		m[key{j.JobId, j.Index}] = j.Usage
	}
	w.mu.Lock()
	w.usage = m
	w.mu.Unlock()
}

func (w *workerConn) peeked(r *rpc.PeekReply) {
	w.mu.Lock()
	ch := w.peeks[r.Id]
	delete(w.peeks, r.Id)
	w.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// The Executor of a remote host.

func (w *workerConn) Start(job *api.Job) error {
	w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Start{Start: job}})
	return nil
}

func (w *workerConn) Reattach(job *api.Job) {
	w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Adopt{Adopt: job}})
}

// NeverStarted is answered by the worker itself (an adopt it has no trace
// of comes back as a never_started report).
func (w *workerConn) NeverStarted(*api.Job) bool { return false }

func (w *workerConn) Signal(id int64, idx int32, sig syscall.Signal) error {
	w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Signal{Signal: &rpc.WorkerSignal{JobId: id, Index: idx, Signal: int32(sig)}}})
	return nil
}

func (w *workerConn) Terminate(id int64, idx int32, reason api.TermReason) error {
	w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Signal{Signal: &rpc.WorkerSignal{JobId: id, Index: idx, Terminate: true, TermReason: reason}}})
	return nil
}

func (w *workerConn) Usage(id int64, idx int32) *api.ResourceUsage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.usage[key{id, idx}]
}

func (w *workerConn) SetLimits(id int64, idx int32, limits *api.JobSpec) error {
	w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Limits{Limits: &rpc.WorkerLimits{JobId: id, Index: idx, Limits: limits}}})
	return nil
}

func (w *workerConn) SpoolOutput(id int64, idx int32) string {
	return worker.SpoolPath(w.runDir, id, idx)
}

func (w *workerConn) Remove(id int64, idx int32) {
	w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Remove{Remove: &api.JobRef{JobId: id, ArrayIndex: idx}}})
}

// peekTimeout bounds how long a bpeek waits for a remote worker.
const peekTimeout = 10 * time.Second

func (w *workerConn) Peek(id int64, idx int32, offset int64, max int) ([]byte, int64, string, error) {
	ch := make(chan *rpc.PeekReply, 1)
	w.mu.Lock()
	select {
	case <-w.closed:
		w.mu.Unlock()
		return nil, 0, "", errAbsent
	default:
	}
	w.peekID++
	pid := w.peekID
	w.peeks[pid] = ch
	w.mu.Unlock()
	w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Peek{Peek: &rpc.PeekRequest{Id: pid, JobId: id, Index: idx, Offset: offset, MaxBytes: int32(max)}}})
	t := time.NewTimer(peekTimeout)
	defer t.Stop()
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, 0, "", errAbsent
		}
		if r.Error != "" {
			return nil, r.Size, r.Path, errors.New(r.Error)
		}
		return r.Data, r.Size, r.Path, nil
	case <-t.C:
		w.mu.Lock()
		delete(w.peeks, pid)
		w.mu.Unlock()
		return nil, 0, "", fmt.Errorf("host %s did not answer within %s", w.name, peekTimeout)
	}
}
