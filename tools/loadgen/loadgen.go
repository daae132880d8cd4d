// Package loadgen simulates many execution hosts from one process, for
// the controller's scale benchmarks (issue 32: 10,000 hosts). Each
// simulated host is a real worker session: a Cluster.Connect stream over
// TLS with the cluster token, that registers the host, sends its load
// every LoadInterval (xced worker's default, 5 s) and takes jobs: a
// dispatched job's start is reported at once, and its end after
// JobRuntime (never, when 0, until the controller kills it). Reports are
// numbered as a worker numbers them and the controller's acks are taken.
//
// What it leaves out is what the controller cannot tell apart: no
// processes run, the load is a fixed sample, usage is not sent. Hosts
// share gRPC connections (PerConn streams each, 100 by default), as many
// TCP connections as a real cluster's would be more than one process may
// open; the controller's work per host (the stream, its registration,
// heartbeats, dispatches and reports) is the same.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/clusterauth"
)

// Config is what the simulated hosts are.
type Config struct {
	Controller string            // the controller's worker address, HOST:PORT
	Token      clusterauth.Token // the cluster token
	Slots      int               // job slots of each host (default 1)
	// LoadInterval is how often each host sends its load (default 5 s,
	// xced worker's); the hosts' first loads are spread over it.
	LoadInterval time.Duration
	// JobRuntime is how long a job runs before its end is reported; 0:
	// until the controller kills it.
	JobRuntime time.Duration
	PerConn    int    // streams per gRPC connection (default 100)
	Version    string // the registered version
}

// Start is a job start a simulated host received.
type Start struct {
	Host  string
	JobID int64
	Index int32
	At    time.Time // when the dispatch arrived
}

// Gen is a set of simulated hosts.
type Gen struct {
	cfg Config
	ctx context.Context
	// Starts receives every dispatch (dropped when nobody reads and the
	// buffer is full; the counters still count).
	Starts chan Start

	started, finished, errs atomic.Int64

	mu     sync.Mutex
	conns  []*grpc.ClientConn
	nconn  int // streams on the last connection
	hosts  map[string]*host
	lastEr error
}

type host struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	out    chan *rpc.WorkerMessage  // what the sender sends next
	load   atomic.Pointer[api.Host] // the load it sends
}

// New returns a generator whose hosts live until ctx ends or Close.
func New(ctx context.Context, cfg Config) *Gen {
	if cfg.Slots <= 0 {
		cfg.Slots = 1
	}
	if cfg.LoadInterval <= 0 {
		cfg.LoadInterval = 5 * time.Second
	}
	if cfg.PerConn <= 0 {
		cfg.PerConn = 100
	}
	return &Gen{cfg: cfg, ctx: ctx, Starts: make(chan Start, 1024), hosts: map[string]*host{}}
}

// Counts are the jobs started and finished on the simulated hosts, and
// the errors of their sessions.
func (g *Gen) Counts() (started, finished, errs int64) {
	return g.started.Load(), g.finished.Load(), g.errs.Load()
}

// LastError is the last session error, for a failure's message.
func (g *Gen) LastError() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lastEr
}

func (g *Gen) client() (grpcapi.ClusterClient, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.conns) == 0 || g.nconn >= g.cfg.PerConn {
		cc, err := grpc.NewClient(g.cfg.Controller,
			grpc.WithTransportCredentials(clusterauth.ClientCredentials(g.cfg.Token)))
		if err != nil {
			return nil, fmt.Errorf("loadgen: dial %s: %w", g.cfg.Controller, err)
		}
		g.conns = append(g.conns, cc)
		g.nconn = 0
	}
	g.nconn++
	return grpcapi.NewClusterClient(g.conns[len(g.conns)-1]), nil
}

// Add registers a host and returns once the controller has welcomed it,
// with the time the welcome came; the host then heartbeats and takes
// jobs until Drop or Close.
func (g *Gen) Add(name string) (time.Time, error) {
	cl, err := g.client()
	if err != nil {
		return time.Time{}, err
	}
	ctx, cancel := context.WithCancel(g.ctx)
	stream, err := cl.Connect(ctx)
	if err != nil {
		cancel()
		return time.Time{}, fmt.Errorf("loadgen: %s: connect: %w", name, err)
	}
	reg := &rpc.WorkerRegister{Host: g.hostInfo(name), RunDir: "/nonexistent/loadgen/" + name, Version: g.cfg.Version}
	if err := stream.Send(&rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Register{Register: reg}}); err != nil {
		cancel()
		return time.Time{}, fmt.Errorf("loadgen: %s: register: %w", name, err)
	}
	m, err := stream.Recv()
	if err != nil {
		cancel()
		return time.Time{}, fmt.Errorf("loadgen: %s: register: %w", name, err)
	}
	at := time.Now()
	if m.GetWelcome() == nil {
		cancel()
		return time.Time{}, fmt.Errorf("loadgen: %s: the controller's first message is no welcome (%T)", name, m.GetMsg())
	}
	h := &host{name: name, cancel: cancel, done: make(chan struct{}), out: make(chan *rpc.WorkerMessage, 64)}
	h.load.Store(g.hostInfo(name))
	g.mu.Lock()
	g.hosts[name] = h
	g.mu.Unlock()
	go g.session(ctx, h, stream)
	return at, nil
}

// AddMany registers the hosts, conc at a time, and returns the first
// error.
func (g *Gen) AddMany(names []string, conc int) error {
	var wg sync.WaitGroup
	var first atomic.Pointer[error]
	next := atomic.Int64{}
	for range max(1, conc) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(names)) || first.Load() != nil {
					return
				}
				if _, err := g.Add(names[i]); err != nil {
					first.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return *p
	}
	return nil
}

// SendLoad makes a host's 15-second run queue length r15s and sends its
// load now (and from then on); it returns when the message is queued for
// sending.
func (g *Gen) SendLoad(name string, r15s float64) error {
	g.mu.Lock()
	h := g.hosts[name]
	g.mu.Unlock()
	if h == nil {
		return fmt.Errorf("loadgen: no host %s", name)
	}
	l := g.hostInfo(name)
	l.R15S = r15s
	h.load.Store(l)
	select {
	case h.out <- &rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Load{Load: l}}:
		return nil
	case <-h.done:
		return fmt.Errorf("loadgen: host %s has left", name)
	}
}

// Drop ends a host's session at once, as a host that died would: the
// controller sees its stream end.
func (g *Gen) Drop(name string) {
	g.mu.Lock()
	h := g.hosts[name]
	delete(g.hosts, name)
	g.mu.Unlock()
	if h != nil {
		h.cancel()
		<-h.done
	}
}

// Close ends every session and connection.
func (g *Gen) Close() {
	g.mu.Lock()
	hosts := g.hosts
	g.hosts = map[string]*host{}
	conns := g.conns
	g.conns = nil
	g.mu.Unlock()
	for _, h := range hosts {
		h.cancel()
	}
	for _, h := range hosts {
		<-h.done
	}
	for _, cc := range conns {
		cc.Close()
	}
}

func (g *Gen) hostInfo(name string) *api.Host {
	pg, io, it := 0.5, 12.0, 1000.0
	ls := int32(0)
	return &api.Host{
		Name: name, MaxSlots: int32(g.cfg.Slots), Ncpus: int32(g.cfg.Slots), Nprocs: 1,
		Ncores: int32(g.cfg.Slots), Nthreads: 1, Type: "X86_64", Model: "loadgen", CpuFactor: 1,
		MaxmemKb: 64 << 20, MaxswpKb: 4 << 20, MaxtmpKb: 100 << 20,
		R15S: 0.1, R1M: 0.1, R15M: 0.1, Ut: 0.02, MemKb: 60 << 20, SwpKb: 4 << 20, TmpKb: 90 << 20,
		Pg: &pg, Io: &io, Ls: &ls, It: &it, LoadMeasured: true, LoadIntervalSec: int32(g.cfg.LoadInterval / time.Second),
	}
}

// session is one host's life after its welcome: a sender (load, reports)
// and the receiver (dispatches, signals, acks).
func (g *Gen) session(ctx context.Context, h *host, stream grpc.BidiStreamingClient[rpc.WorkerMessage, rpc.ControllerMessage]) {
	defer close(h.done)
	out := h.out
	var seq atomic.Uint64
	seq.Store(uint64(time.Now().UnixNano()))
	report := func(r *rpc.WorkerReport) {
		r.Seq = seq.Add(1)
		select {
		case out <- &rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Report{Report: r}}:
		case <-ctx.Done():
		}
	}
	var jobs sync.Map // job key -> chan struct{} closed when it ends
	end := func(id int64, idx int32, state api.JobState, sig int32) {
		k := [2]int64{id, int64(idx)}
		v, ok := jobs.LoadAndDelete(k)
		if !ok {
			return
		}
		close(v.(chan struct{}))
		g.finished.Add(1)
		ev := &api.Event{Type: api.EventType_FINISH, State: state, Time: time.Now().UnixNano(), JobId: id, ArrayIndex: idx}
		if sig != 0 {
			ev.Signal, ev.ExitStatus = sig, 128+sig
		}
		report(&rpc.WorkerReport{JobId: id, Index: idx, Finished: ev})
	}
	sendErr := make(chan error, 1)
	go func() {
		// The first load comes at a random point of the interval, so
		// that the hosts' heartbeats spread as real ones do.
		first := time.Duration(uint64(time.Now().UnixNano()) % uint64(g.cfg.LoadInterval))
		t := time.NewTimer(first)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				sendErr <- nil
				return
			case m := <-out:
				if err := stream.Send(m); err != nil {
					sendErr <- err
					return
				}
			case <-t.C:
				t.Reset(g.cfg.LoadInterval)
				if err := stream.Send(&rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Load{Load: h.load.Load()}}); err != nil {
					sendErr <- err
					return
				}
			}
		}
	}()
	for {
		m, err := stream.Recv()
		if err != nil {
			if ctx.Err() == nil {
				g.fail(fmt.Errorf("loadgen: %s: %w", h.name, err))
			}
			break
		}
		switch m := m.GetMsg().(type) {
		case *rpc.ControllerMessage_Start:
			j := m.Start
			id, idx := j.GetJobId(), j.GetArrayIndex()
			k := [2]int64{id, int64(idx)}
			if _, dup := jobs.Load(k); dup {
				continue
			}
			now := time.Now()
			gone := make(chan struct{})
			jobs.Store(k, gone)
			g.started.Add(1)
			select {
			case g.Starts <- Start{Host: h.name, JobID: id, Index: idx, At: now}:
			default:
			}
			report(&rpc.WorkerReport{JobId: id, Index: idx, ShepherdPid: 1,
				Started: &api.Event{Type: api.EventType_START, State: api.JobState_RUN, Time: now.UnixNano(), Pid: 1, JobId: id, ArrayIndex: idx}})
			if d := g.cfg.JobRuntime; d > 0 {
				go func() {
					select {
					case <-time.After(d):
						end(id, idx, api.JobState_DONE, 0)
					case <-gone:
					case <-ctx.Done():
					}
				}()
			}
		case *rpc.ControllerMessage_Adopt:
			report(&rpc.WorkerReport{JobId: m.Adopt.GetJobId(), Index: m.Adopt.GetArrayIndex(), NeverStarted: true})
		case *rpc.ControllerMessage_Signal:
			s := m.Signal
			if s.GetTerminate() || syscall.Signal(s.GetSignal()) == syscall.SIGKILL || syscall.Signal(s.GetSignal()) == syscall.SIGTERM {
				end(s.GetJobId(), s.GetIndex(), api.JobState_EXIT, int32(syscall.SIGKILL))
			}
		case *rpc.ControllerMessage_Peek:
			p := m.Peek
			select {
			case out <- &rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Peek{Peek: &rpc.PeekReply{Id: p.GetId(), Error: "a simulated host has no output"}}}:
			case <-ctx.Done():
			}
		}
		// Acks, limits and removals need nothing of a simulated host.
	}
	h.cancel()
	if err := <-sendErr; err != nil && ctx.Err() == nil {
		g.fail(fmt.Errorf("loadgen: %s: send: %w", h.name, err))
	}
}

func (g *Gen) fail(err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	g.errs.Add(1)
	g.mu.Lock()
	g.lastEr = err
	g.mu.Unlock()
}
