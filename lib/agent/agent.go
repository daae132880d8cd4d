// Package agent is the worker agent of one execution host (LSF's sbatchd):
// `xced worker` runs it. It keeps one Cluster.Connect stream open to the
// controller (lib/api/grpcapi/services.proto), registers the host with its
// static attributes and first load sample, and runs what the controller
// sends on a lib/worker.Worker, the same code the single-host default
// embeds.
//
// # Reports are not lost
//
// Every job report (started, finished, could not start, never started)
// gets a sequence number and stays queued until the controller
// acknowledges it (ControllerMessage.ack). After every reconnect the
// queue is sent again, in order, before anything new: a controller that
// went down before storing a report gets it from the next connection. The
// jobs themselves run on while the controller is away (their shepherds do
// not depend on the agent). Sequence numbers start from the agent's start
// time in nanoseconds, so a restarted agent's numbers continue above the
// previous one's.
//
// # Order and liveness
//
// The controller's messages are handled one at a time, in order, on the
// stream's receiving goroutine; only peeks, which read files of any size,
// run on their own goroutine. Everything sent goes through one sending
// goroutine: the queued reports, the load every LoadInterval with the
// usage of the running jobs, and the peek replies.
//
// A lost connection is retried with a backoff (MinBackoff doubling to
// MaxBackoff, reset by each welcome); a refusal (Config.Fatal, by default
// Refused) ends Run with the error.
//
// # Several controllers
//
// Config.Controller may list the controller candidates. A standby answers
// the register with grpcapi.NotLeader: the agent goes to the leader it names
// at once, or, while none is elected, to the next candidate after the
// backoff; a candidate that cannot be reached, or a lost connection, also
// sends it to the next one.
package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/gpu"
	"xce/lib/hostload"
	"xce/lib/worker"
)

// Config is what the agent of one host needs.
type Config struct {
	// Controller is the controller's HOST:PORT, or the candidates'
	// HOST:PORT, comma-separated, of a highly available controller.
	Controller string
	// DialOptions give the connection its credentials (TLS and the
	// cluster token; tests pass insecure ones) and anything else the
	// caller wants; they come after the agent's own keepalive option.
	DialOptions []grpc.DialOption
	Host        string   // the host's name, as registered
	Slots       int      // job slots; <= 0: the host's CPUs
	RunDir      string   // the jobs' directories (worker.Config.RunDir)
	Shepherd    []string // the command that runs a shepherd (worker.Config.Shepherd)
	Version     string   // the registered version
	// Instance is the provider's instance this host is (a provisioned
	// host, xced worker --instance); "" for a static host.
	Instance string
	// LoadInterval is how often the load and the jobs' usage are sent
	// (default 5 s). The load is sampled every second in between, for
	// its averages.
	LoadInterval time.Duration
	// Keepalive is how often an idle connection is probed, so that a
	// controller that vanished is noticed (default 10 s; < 0: never). The
	// controller's server must allow pings that often
	// (keepalive.EnforcementPolicy MinTime).
	Keepalive time.Duration
	// MinBackoff and MaxBackoff bound the wait before a reconnect
	// (defaults 200 ms and 5 s).
	MinBackoff, MaxBackoff time.Duration
	// Fatal says whether an error of the connection ends Run rather than
	// being retried: the controller refused the worker's credentials.
	// Default: Refused.
	Fatal func(error) bool
	Log   *slog.Logger // default: slog.Default()
	// Registered, if set, is called after each registration with a
	// controller (xced worker's READY=1 to systemd).
	Registered func()
	// Alive, if set, is called from the loop that samples the host's load
	// (about once a second), whether or not a controller is connected: a
	// worker retrying is alive (xced worker's systemd watchdog).
	Alive func()
	// Probe, when set, is where the agent can be read from (metrics).
	Probe *Probe
}

// Refused reports whether err is the controller refusing this worker: a
// gRPC status Unauthenticated or PermissionDenied.
func Refused(err error) bool {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied:
		return true
	}
	return false
}

// localError is a failure on this host that no reconnect mends.
type localError struct{ err error }

func (e localError) Error() string { return e.err.Error() }
func (e localError) Unwrap() error { return e.err }

type agent struct {
	cfg     Config
	log     *slog.Logger
	sampler *hostload.Sampler
	gpus    *gpu.Tracker
	w       atomic.Pointer[worker.Worker]
	welcome *rpc.Welcome // the first one, which made the worker

	mu      sync.Mutex
	nextSeq uint64
	pending []*rpc.WorkerReport // not yet acknowledged, in seq order
	notify  chan struct{}       // a report was queued

	cur atomic.Pointer[sessionOut] // the connection's way up, for tasks (tasks.go)
	tk  relayedTasks
	el  elims // the host's elims (elim.go)
	bs  battachSessions
}

// Run runs the agent until ctx ends (then it returns nil; the jobs keep
// running) or the controller refuses it (Config.Fatal) or the host cannot
// run jobs (the run directory): then it returns the error.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Controller == "" || cfg.Host == "" || cfg.RunDir == "" || len(cfg.Shepherd) == 0 {
		return errors.New("agent: the controller's address, the host name, the run directory and the shepherd command are needed")
	}
	if cfg.Slots <= 0 {
		cfg.Slots = runtime.NumCPU()
	}
	if cfg.LoadInterval <= 0 {
		cfg.LoadInterval = 5 * time.Second
	}
	if cfg.Keepalive == 0 {
		cfg.Keepalive = 10 * time.Second
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 200 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(5*time.Second, cfg.MinBackoff)
	}
	if cfg.Fatal == nil {
		cfg.Fatal = Refused
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	var opts []grpc.DialOption
	if cfg.Keepalive > 0 {
		opts = append(opts, grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time: cfg.Keepalive, Timeout: cfg.Keepalive, PermitWithoutStream: true,
		}))
	}
	// A candidate that accepts but does not answer (a hung host) costs a
	// few seconds, then the next is tried; one that comes back is dialed
	// again within seconds.
	opts = append(opts, grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           grpcbackoff.Config{BaseDelay: 200 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
		MinConnectTimeout: 3 * time.Second,
	}))
	opts = append(opts, cfg.DialOptions...)
	cands := Candidates(cfg.Controller)
	if len(cands) == 0 {
		return errors.New("agent: no controller address")
	}
	conns := map[string]grpcapi.ClusterClient{}
	var closers []*grpc.ClientConn
	defer func() {
		for _, cc := range closers {
			cc.Close()
		}
	}()
	// client is the connection to addr, made once and kept: gRPC
	// reconnects it by itself.
	client := func(addr string) (grpcapi.ClusterClient, error) {
		if c := conns[addr]; c != nil {
			return c, nil
		}
		cc, err := grpc.NewClient(addr, opts...)
		if err != nil {
			return nil, fmt.Errorf("controller %s: %w", addr, err)
		}
		closers = append(closers, cc)
		conns[addr] = grpcapi.NewClusterClient(cc)
		return conns[addr], nil
	}
	a := &agent{
		cfg:     cfg,
		log:     cfg.Log.With("host", cfg.Host),
		sampler: hostload.New(hostload.Paths{}),
		nextSeq: uint64(time.Now().UnixNano()),
		notify:  make(chan struct{}, 1),
	}
	if cfg.Probe != nil {
		cfg.Probe.a.Store(a)
	}
	a.sampler.Sample(time.Now())
	go a.sample(ctx)
	a.gpus = gpu.NewTracker(ctx, gpu.Options{}, max(cfg.LoadInterval, 5*time.Second))
	backoff := cfg.MinBackoff
	target, next := cands[0], 1 // next: the candidate after target
	redirects := 0
	for {
		cl, err := client(target)
		if err != nil {
			return err
		}
		welcomed, err := a.session(ctx, cl, target)
		if ctx.Err() != nil {
			return nil
		}
		var local localError
		if errors.As(err, &local) {
			return local.err
		}
		if cfg.Fatal(err) {
			a.log.Error("the controller refused this worker", "controller", target, "err", err)
			return fmt.Errorf("the controller %s refused this worker: %w", target, err)
		}
		if leader, ok := grpcapi.LeaderOf(err); ok && leader != "" && leader != target && redirects < 2*len(cands)+2 {
			// Straight to the leader: the standby did nothing.
			a.log.Info("the controller is a standby; going to the leader", "standby", target, "leader", leader)
			target = leader
			redirects++
			continue
		}
		redirects = 0
		from := target
		if len(cands) > 1 {
			target = cands[next%len(cands)]
			next++
		}
		if status.Code(err) == codes.AlreadyExists {
			// Another worker holds this host's name: it keeps the host.
			// Retry, for the case where it is this worker's own old
			// connection that the controller has not found dead yet.
			a.log.Error("the controller refused this worker; retrying", "controller", from, "err", status.Convert(err).Message(), "retry_in", backoff)
		} else if _, ok := grpcapi.LeaderOf(err); ok {
			a.log.Info("no controller is the leader yet; retrying", "standby", from, "next", target, "retry_in", backoff)
		} else if welcomed {
			backoff = cfg.MinBackoff
			a.log.Warn("lost the controller; the jobs keep running, reconnecting", "controller", from, "next", target, "err", err)
		} else {
			a.log.Warn("cannot reach the controller; retrying", "controller", from, "next", target, "err", err, "retry_in", backoff)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		if !welcomed {
			backoff = min(2*backoff, cfg.MaxBackoff)
		}
	}
}

// Candidates splits a comma-separated list of controllers' HOST:PORT.
func Candidates(list string) []string {
	var out []string
	for _, c := range strings.Split(list, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// sample keeps the load averages going between the sends.
func (a *agent) sample(ctx context.Context) {
	t := time.NewTicker(min(time.Second, a.cfg.LoadInterval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			a.sampler.Sample(now)
			if a.cfg.Alive != nil {
				a.cfg.Alive()
			}
		}
	}
}

// session is one connection: register, welcome, then messages both ways
// until the stream ends. welcomed says whether the controller accepted.
func (a *agent) session(ctx context.Context, client grpcapi.ClusterClient, addr string) (welcomed bool, err error) {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stream, err := client.Connect(sctx)
	if err != nil {
		return false, err
	}
	reg := &rpc.WorkerRegister{Host: a.host(), RunDir: a.cfg.RunDir, Version: a.cfg.Version, InstanceId: a.cfg.Instance}
	if w := a.w.Load(); w != nil {
		reg.Running = w.Running()
	}
	if err := stream.Send(&rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Register{Register: reg}}); err != nil {
		return false, streamError(stream, err)
	}
	m, err := stream.Recv()
	if err != nil {
		return false, err
	}
	wel := m.GetWelcome()
	if wel == nil {
		return false, fmt.Errorf("the controller's first message is no welcome (%T)", m.GetMsg())
	}
	w, err := a.worker(wel)
	if err != nil {
		return true, localError{err}
	}
	a.el.start(ctx, a, wel)
	a.log.Info("registered with the controller", "controller", addr, "as", wel.GetHost(), "cluster", wel.GetClusterName(),
		"slots", reg.Host.MaxSlots, "running", len(reg.Running), "unacknowledged_reports", a.pendingCount())
	if a.cfg.Registered != nil {
		a.cfg.Registered()
	}

	out := make(chan *rpc.WorkerMessage, 16)
	so := &sessionOut{ctx: sctx, out: out}
	a.cur.Store(so)
	defer a.tasksCutOff(w) // after the swap below: nothing more goes up this one
	defer a.cur.CompareAndSwap(so, nil)
	// The relayed terminals' frames in flight are lost with the stream.
	defer w.TermLinkLost()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := a.send(sctx, stream, w, out); err != nil && !errors.Is(err, io.EOF) {
			cancel(err)
		}
	}()
	defer func() { cancel(nil); wg.Wait() }()
	for {
		m, err := stream.Recv()
		if err != nil {
			if cause := context.Cause(sctx); sctx.Err() != nil && ctx.Err() == nil && cause != nil {
				return true, cause
			}
			return true, err
		}
		a.handle(sctx, w, m, out)
	}
}

// streamError is the reason a send failed: a broken client stream's Send
// says io.EOF, its Recv the status.
func streamError(stream grpc.BidiStreamingClient[rpc.WorkerMessage, rpc.ControllerMessage], err error) error {
	if errors.Is(err, io.EOF) {
		if _, rerr := stream.Recv(); rerr != nil {
			return rerr
		}
	}
	return err
}

// worker returns the host's worker, made by the first welcome with the
// cluster's settings it carries.
func (a *agent) worker(wel *rpc.Welcome) (*worker.Worker, error) {
	if w := a.w.Load(); w != nil {
		if old := a.welcome; old.GetClusterName() != wel.GetClusterName() || old.GetKillGraceMs() != wel.GetKillGraceMs() ||
			old.GetTerminateIntervalMs() != wel.GetTerminateIntervalMs() || old.GetStdoutDirect() != wel.GetStdoutDirect() ||
			old.GetMemlimitEnforce() != wel.GetMemlimitEnforce() || old.GetJobMemlimit() != wel.GetJobMemlimit() {
			a.log.Warn("the controller's settings changed; this worker keeps those of its start until it restarts")
		}
		return w, nil
	}
	host := wel.GetHost()
	if host == "" {
		host = a.cfg.Host
	}
	w, err := worker.New(worker.Config{
		Host:              host,
		ClusterName:       wel.GetClusterName(),
		ClusterAdmin:      wel.GetClusterAdmin(),
		RunDir:            a.cfg.RunDir,
		Shepherd:          a.cfg.Shepherd,
		KillGrace:         time.Duration(wel.GetKillGraceMs()) * time.Millisecond,
		TerminateInterval: time.Duration(wel.GetTerminateIntervalMs()) * time.Millisecond,
		MemlimitEnforce:   wel.GetMemlimitEnforce(),
		JobMemlimit:       wel.GetJobMemlimit(),
		StdoutDirect:      wel.GetStdoutDirect(),
		Report:            a.report,
	})
	if err != nil {
		return nil, err
	}
	a.welcome = wel
	w.SetTaskRelay(a)
	w.SetTermLink(a)
	a.w.Store(w)
	go w.SweepContainers() // containers no job runs any more (lib/worker's sweep.go)
	return w, nil
}

// host is the host's static attributes and its latest load.
func (a *agent) host() *api.Host {
	h := &api.Host{
		Name:      a.cfg.Host,
		MaxSlots:  int32(a.cfg.Slots),
		Ncpus:     int32(runtime.NumCPU()),
		Type:      hostload.DetectedType(),
		Model:     hostload.DetectedModel(),
		CpuFactor: 1,
	}
	ix := a.sampler.Latest(time.Now(), 2*time.Second)
	hostload.Fill(h, ix)
	inv := a.gpus.Latest()
	inv.Fill(h)
	h.ElimValues = a.el.values(time.Now())
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		h.MaxmemKb = int64(si.Totalram) * int64(si.Unit) / 1024
	} else {
		h.MaxmemKb = ix.MaxMemKB
	}
	return h
}

// handle carries out one message of the controller.
func (a *agent) handle(ctx context.Context, w *worker.Worker, m *rpc.ControllerMessage, out chan<- *rpc.WorkerMessage) {
	switch m := m.GetMsg().(type) {
	case *rpc.ControllerMessage_Welcome:
		a.log.Warn("a second welcome on one connection; ignored")
	case *rpc.ControllerMessage_Reconfigured:
		a.el.restart(a, m.Reconfigured)
	case *rpc.ControllerMessage_Start:
		j := m.Start
		if w.Watches(j.GetJobId(), j.GetArrayIndex()) {
			// Its directory is in use: starting it again would wipe it.
			a.log.Warn("start of a job that runs here already; ignored", "job", j.GetJobId(), "index", j.GetArrayIndex())
			return
		}
		if err := w.Start(j); err != nil {
			a.log.Warn("job not started", "job", j.GetJobId(), "index", j.GetArrayIndex(), "err", err)
			a.queue(&rpc.WorkerReport{JobId: j.GetJobId(), Index: j.GetArrayIndex(), Error: err.Error()})
		}
	case *rpc.ControllerMessage_Adopt:
		j := m.Adopt
		id, idx := j.GetJobId(), j.GetArrayIndex()
		switch {
		case w.Watches(id, idx), a.finishQueued(id, idx):
			// Watched, or its end is on its way.
		case w.NeverStarted(j):
			a.queue(&rpc.WorkerReport{JobId: id, Index: idx, NeverStarted: true})
		default:
			w.Reattach(j)
		}
	case *rpc.ControllerMessage_Signal:
		s := m.Signal
		id, idx, sig := s.GetJobId(), s.GetIndex(), syscall.Signal(s.GetSignal())
		if s.GetTerminate() {
			w.Terminate(id, idx, s.GetTermReason())
			return
		}
		if err := w.Signal(id, idx, sig); err != nil {
			if sig == syscall.SIGKILL {
				// Not started yet, or gone: the sequence waits for it.
				w.Terminate(id, idx, api.TermReason_TERM_UNKNOWN)
				return
			}
			a.log.Warn("signal not delivered", "job", id, "index", idx, "signal", int(sig), "err", err)
		}
	case *rpc.ControllerMessage_Limits:
		l := m.Limits
		if err := w.SetLimits(l.GetJobId(), l.GetIndex(), l.GetLimits()); err != nil {
			a.log.Warn("new limits not given", "job", l.GetJobId(), "index", l.GetIndex(), "err", err)
		}
	case *rpc.ControllerMessage_Remove:
		w.Remove(m.Remove.GetJobId(), m.Remove.GetArrayIndex())
	case *rpc.ControllerMessage_Peek:
		p := m.Peek
		go func() {
			data, size, path, err := w.Peek(p.GetJobId(), p.GetIndex(), p.GetOffset(), int(p.GetMaxBytes()))
			r := &rpc.PeekReply{Id: p.GetId(), Data: data, Size: size, Path: path}
			if err != nil {
				r.Error = err.Error()
			}
			select {
			case out <- &rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Peek{Peek: r}}:
			case <-ctx.Done():
			}
		}()
	case *rpc.ControllerMessage_Battach:
		b := m.Battach
		go func() {
			r := w.Battach(ctx, b)
			select {
			case out <- &rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Battach{Battach: r}}:
			case <-ctx.Done():
			}
		}()
	case *rpc.ControllerMessage_BattachFrame:
		a.battachFrame(ctx, w, out, m.BattachFrame) // battach.go
	case *rpc.ControllerMessage_Ack:
		a.ack(m.Ack)
	case *rpc.ControllerMessage_TaskStart:
		a.startTask(w, m.TaskStart)
	case *rpc.ControllerMessage_TaskSignal:
		w.SignalTask(m.TaskSignal)
	case *rpc.ControllerMessage_TaskOutput:
		w.TaskResult(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Output{Output: m.TaskOutput}})
	case *rpc.ControllerMessage_TaskExit:
		w.TaskResult(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: m.TaskExit}})
	case *rpc.ControllerMessage_Term:
		w.TermDown(m.Term)
	case *rpc.ControllerMessage_TermAck:
		w.TermAcked(m.TermAck)
	default:
		a.log.Warn("a message this worker does not know; ignored", "type", fmt.Sprintf("%T", m))
	}
}

// send is the session's one sender: the queued reports first, then
// whatever comes.
func (a *agent) send(ctx context.Context, stream grpc.BidiStreamingClient[rpc.WorkerMessage, rpc.ControllerMessage],
	w *worker.Worker, out <-chan *rpc.WorkerMessage) error {
	var sent uint64 // the last seq sent on this stream
	load := time.NewTicker(a.cfg.LoadInterval)
	defer load.Stop()
	for {
		for _, r := range a.unsent(sent) {
			if err := stream.Send(&rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Report{Report: r}}); err != nil {
				return err
			}
			sent = r.Seq
		}
		select {
		case <-ctx.Done():
			return nil
		case <-a.notify:
		case m := <-out:
			if err := stream.Send(m); err != nil {
				return err
			}
		case <-load.C:
			if err := stream.Send(&rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Load{Load: a.host()}}); err != nil {
				return err
			}
			if u := usage(w); len(u.Jobs) > 0 {
				if err := stream.Send(&rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Usage{Usage: u}}); err != nil {
					return err
				}
			}
		}
	}
}

// usage is the latest usage of each running job that has one.
func usage(w *worker.Worker) *rpc.WorkerUsage {
	u := &rpc.WorkerUsage{}
	for _, r := range w.Running() {
		if ru := w.Usage(r.JobId, r.ArrayIndex); ru != nil {
			u.Jobs = append(u.Jobs, &rpc.JobUsage{JobId: r.JobId, Index: r.ArrayIndex, Usage: ru})
		}
	}
	return u
}

// report is the worker's Report: a job started, ended or could not start.
func (a *agent) report(r worker.Report) {
	wr := &rpc.WorkerReport{JobId: r.JobID, Index: r.Index, Started: r.Started, Finished: r.Finished}
	if r.Err != nil {
		wr.Error = r.Err.Error()
	}
	if r.Started != nil {
		if w := a.w.Load(); w != nil {
			wr.ShepherdPid = int32(w.ShepherdPid(r.JobID, r.Index))
		}
	}
	a.queue(wr)
}

// queue numbers a report and keeps it until it is acknowledged.
func (a *agent) queue(r *rpc.WorkerReport) {
	a.mu.Lock()
	a.nextSeq++
	r.Seq = a.nextSeq
	a.pending = append(a.pending, r)
	a.mu.Unlock()
	select {
	case a.notify <- struct{}{}:
	default:
	}
}

// unsent is the queued reports after seq.
func (a *agent) unsent(seq uint64) []*rpc.WorkerReport {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := len(a.pending)
	for i > 0 && a.pending[i-1].Seq > seq {
		i--
	}
	return append([]*rpc.WorkerReport(nil), a.pending[i:]...)
}

// ack drops the reports up to seq: the controller has stored them.
func (a *agent) ack(seq uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := 0
	for i < len(a.pending) && a.pending[i].Seq <= seq {
		i++
	}
	a.pending = append(a.pending[:0], a.pending[i:]...)
}

func (a *agent) pendingCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}

// finishQueued reports whether the job's end is queued, not yet
// acknowledged: adopting it again would report the end twice.
func (a *agent) finishQueued(id int64, idx int32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.pending {
		if r.JobId == id && r.Index == idx && r.Finished != nil {
			return true
		}
	}
	return false
}
