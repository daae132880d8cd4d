package provision

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"xce/lib/api/rpc"
	"xce/lib/config"
	"xce/lib/provider"
)

// Link is how a provisioner reaches the controller's Ledger: over gRPC
// for `xced provisioner` (the Cluster service's Provisioner* calls, role
// P), by direct calls for the controller's own.
type Link interface {
	Sync(ctx context.Context, req *rpc.ProvisionerSyncRequest) (*rpc.ProvisionerSyncReply, error)
	Records(ctx context.Context, req *rpc.ProvisionerRecordsRequest) (*rpc.ProvisionerRecordsReply, error)
	Put(ctx context.Context, req *rpc.ProvisionerPutRequest) (*rpc.ProvisionerPutReply, error)
	Host(ctx context.Context, req *rpc.ProvisionerHostRequest) (*rpc.ProvisionerHostReply, error)
}

// AgentConfig configures an Agent.
type AgentConfig struct {
	// Owner names this provisioner to the controller; unique per process
	// start (the controller's own is stable: a controller started again
	// keeps its leases).
	Owner string
	Link  Link
	// Provider makes the provider of a configured [providers.NAME]
	// (called once per name).
	Provider func(pc *config.Provider) (provider.Provider, error)
	// Yield: the controller's own provisioner, which lets a daemon have
	// the providers it asks for.
	Yield bool
	// Interval is the heartbeat (default 1 s); a lease lasts what the
	// controller says (3 heartbeats by default).
	Interval time.Duration
	// Options are each provider's provisioner's.
	Options Options
	// Log is where it logs (default slog.Default()).
	Log *slog.Logger
	// Beat, when set, is called after each heartbeat, ok when the
	// controller answered (systemd's watchdog and readiness).
	Beat func(ok bool)
	// Fatal, when set, says whether a heartbeat's error ends Run (the
	// controller refused the provisioner's credential).
	Fatal func(error) bool
	// Conf, when set, is the configuration in force (the controller's
	// own provisioner); else it comes with each heartbeat's answer. With
	// it the first heartbeat already asks for the providers, so that a
	// controller started again does not let go of its own leases.
	Conf func() *config.Config
}

// Agent runs a Provisioner for each provider whose lease it holds, each
// in its own goroutine, so that a provider that hangs (a script until
// its timeout) holds up no other; each writes only its own provider's
// records. It renews its leases at each heartbeat and stops a
// provider's provisioner before its lease can have ended at the
// controller (see Ledger).
type Agent struct {
	cfg   AgentConfig
	conf  atomic.Pointer[config.Config]
	provs map[string]provider.Provider
	owned map[string]*owned
	seq   uint64 // the demand seen
	down  bool   // the controller did not answer the last heartbeat
	fatal error  // ends Run

	up    atomic.Bool  // Probe's: the controller answered the last heartbeat
	nheld atomic.Int32 // Probe's: providers served
}

type owned struct {
	p      *Provisioner
	cancel context.CancelFunc
	done   chan struct{}
	expiry *time.Timer
}

// NewAgent makes an agent; Run starts it.
func NewAgent(cfg AgentConfig) *Agent {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Agent{cfg: cfg, provs: map[string]provider.Provider{}, owned: map[string]*owned{}}
}

// Run heartbeats until ctx ends (nil) or the controller refuses this
// provisioner (Fatal: the error), then stops every provider's
// provisioner and lets go of the leases.
func (a *Agent) Run(ctx context.Context) error {
	defer a.stopAll(ctx)
	for ctx.Err() == nil {
		ok := a.beat(ctx)
		if a.fatal != nil {
			return a.fatal
		}
		a.up.Store(ok)
		a.nheld.Store(int32(len(a.owned)))
		if a.cfg.Beat != nil {
			a.cfg.Beat(ok)
		}
		if !ok {
			select {
			case <-ctx.Done():
			case <-time.After(a.cfg.Interval / 2):
			}
		}
	}
	return nil
}

// held lists the providers this agent runs now.
func (a *Agent) held() []string { return slices.Sorted(maps.Keys(a.owned)) }

// Probe says whether the controller answered the last heartbeat and how
// many providers the agent serves (its metrics); safe from any goroutine.
func (a *Agent) Probe() (connected bool, providers int) { return a.up.Load(), int(a.nheld.Load()) }

// beat is one heartbeat: false when the controller did not answer.
func (a *Agent) beat(ctx context.Context) bool {
	a.reap()
	req := &rpc.ProvisionerSyncRequest{Owner: a.cfg.Owner, Yield: a.cfg.Yield, WaitMs: (a.cfg.Interval / 2).Milliseconds(),
		DemandSeen: a.seq, Backoff: map[string]int64{}, BorrowBackoff: map[string]int64{}}
	if a.cfg.Conf != nil {
		a.conf.Store(a.cfg.Conf())
	}
	if c := a.conf.Load(); c != nil {
		req.Want = slices.Sorted(maps.Keys(c.Providers))
	} else {
		req.WaitMs = 0 // the configuration first
	}
	req.Held = a.held()
	versions := map[string]uint64{}
	for name, o := range a.owned {
		versions[name] = o.p.Version()
		errs, off := o.p.Status()
		req.Errors = append(req.Errors, errs...)
		maps.Copy(req.Backoff, off)
		maps.Copy(req.BorrowBackoff, o.p.BorrowBackoff())
	}
	sent := time.Now()
	cctx, cancel := context.WithTimeout(ctx, a.cfg.Interval/2+5*time.Second)
	rep, err := a.cfg.Link.Sync(cctx, req)
	cancel()
	if err != nil {
		if a.cfg.Fatal != nil && a.cfg.Fatal(err) {
			a.fatal = err
			return false
		}
		if ctx.Err() == nil && !a.down {
			a.cfg.Log.Warn("the controller does not answer; the providers stop when their leases end", "err", err)
		}
		a.down = true
		return false
	}
	if a.down {
		a.cfg.Log.Info("the controller answers again")
		a.down = false
	}
	if len(rep.Config) > 0 && a.cfg.Conf == nil {
		c, err := DecodeConfig(rep.Config)
		if err != nil {
			a.cfg.Log.Error("configuration from the controller", "err", err)
			return false
		}
		a.conf.Store(c)
	}
	conf := a.conf.Load()
	if conf == nil {
		return false
	}
	// The lease counts from when the heartbeat was sent, less half a
	// heartbeat for the provisioner to stop its calls.
	until := sent.Add(time.Duration(rep.TtlMs)*time.Millisecond - a.cfg.Interval/2)
	granted := map[string]bool{}
	for _, name := range rep.Granted {
		granted[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(a.owned)) {
		o := a.owned[name]
		if !granted[name] {
			a.cfg.Log.Info("provider lease not renewed; stopping its provisioner", "provider", name)
			a.stop(name)
			continue
		}
		o.expiry.Reset(time.Until(until))
	}
	for _, name := range rep.Granted {
		if a.owned[name] != nil || !time.Now().Before(until) {
			continue
		}
		if err := a.start(ctx, name, conf, until); err != nil {
			a.cfg.Log.Error("cannot serve provider", "provider", name, "err", err)
		}
	}
	a.seq = rep.DemandSeq
	if rep.DemandValid {
		for name, o := range a.owned {
			hosts := map[string]int{}
			for t, n := range rep.Demand {
				if tc := conf.Templates[t]; tc != nil && tc.Provider == name {
					hosts[t] = int(n)
				}
			}
			if len(hosts) > 0 {
				o.p.SetDemand(versions[name], hosts)
			}
		}
	}
	for name, o := range a.owned {
		var want map[string]int
		if rep.TokensValid {
			want = map[string]int{}
			for r, n := range rep.Tokens {
				if rc := conf.Resources[r]; rc != nil && rc.Provider == name {
					want[r] = int(n)
				}
			}
		}
		o.p.SetTokens(versions[name], want, rep.SharedUsed)
	}
	return true
}

// start runs the provisioner of a provider just leased: its records are
// read again (the previous owner may have written them), and it asks the
// provider about each (reconcile) before it acts.
func (a *Agent) start(ctx context.Context, name string, conf *config.Config, until time.Time) error {
	pc := conf.Providers[name]
	if pc == nil {
		return fmt.Errorf("provider %s is not configured", name)
	}
	prov := a.provs[name]
	if prov == nil {
		var err error
		if prov, err = a.cfg.Provider(pc); err != nil {
			return err
		}
		a.provs[name] = prov
	}
	st := &linkStore{link: a.cfg.Link, owner: a.cfg.Owner, provider: name}
	opt := a.cfg.Options
	opt.Provider = name
	p, err := New(func() *config.Config { return a.conf.Load() }, &linkCluster{link: a.cfg.Link, owner: a.cfg.Owner}, st,
		map[string]provider.Provider{name: prov}, opt)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(ctx)
	o := &owned{p: p, cancel: cancel, done: make(chan struct{})}
	// At the lease's end by this side's count, the provisioner stops,
	// whether or not the controller answers.
	o.expiry = time.AfterFunc(time.Until(until), cancel)
	a.owned[name] = o
	a.cfg.Log.Info("provider leased; serving it", "provider", name, "owner", a.cfg.Owner)
	go func() { defer close(o.done); p.Run(pctx) }()
	return nil
}

// stop ends a provider's provisioner and waits for it.
func (a *Agent) stop(name string) {
	o := a.owned[name]
	if o == nil {
		return
	}
	o.expiry.Stop()
	o.cancel()
	<-o.done
	delete(a.owned, name)
}

// reap forgets the provisioners that stopped on their own (lease ended).
func (a *Agent) reap() {
	for name, o := range a.owned {
		select {
		case <-o.done:
			a.cfg.Log.Warn("provider lease ended without renewal; its provisioner stopped", "provider", name)
			o.expiry.Stop()
			delete(a.owned, name)
		default:
		}
	}
}

// stopAll stops every provisioner, then tells the controller the leases
// are free (so another provisioner need not wait for them to end).
func (a *Agent) stopAll(context.Context) {
	var wg sync.WaitGroup
	for _, o := range a.owned {
		o.expiry.Stop()
		o.cancel()
		wg.Add(1)
		go func() { <-o.done; wg.Done() }()
	}
	wg.Wait()
	a.owned = map[string]*owned{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	a.cfg.Link.Sync(ctx, &rpc.ProvisionerSyncRequest{Owner: a.cfg.Owner, Yield: a.cfg.Yield})
}

// linkStore is a provider's provisioner's Store: its records go through
// the controller, which writes them (replicated) only while the lease
// is held.
type linkStore struct {
	link            Link
	owner, provider string
}

func (s *linkStore) SetMetas(kv map[string][]byte) error {
	req := &rpc.ProvisionerPutRequest{Owner: s.owner, Provider: s.provider, Set: map[string][]byte{}}
	for k, v := range kv {
		if v == nil {
			req.Delete = append(req.Delete, k)
		} else {
			req.Set[k] = v
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.link.Put(ctx, req)
	return err
}

func (s *linkStore) Meta(string) (map[string][]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := s.link.Records(ctx, &rpc.ProvisionerRecordsRequest{Owner: s.owner, Provider: s.provider})
	if err != nil {
		return nil, err
	}
	return rep.Records, nil
}

// linkCluster is the controller's hosts, through the link.
type linkCluster struct {
	link  Link
	owner string
}

func (c *linkCluster) call(name string, op rpc.ProvisionerHostRequest_Op) *rpc.ProvisionerHostReply {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rep, err := c.link.Host(ctx, &rpc.ProvisionerHostRequest{Owner: c.owner, Name: name, Op: op})
	if err != nil {
		slog.Warn("ask the controller about a host", "host", name, "op", op.String(), "err", err)
		return &rpc.ProvisionerHostReply{}
	}
	return rep
}

func (c *linkCluster) Host(name string) HostState {
	r := c.call(name, rpc.ProvisionerHostRequest_STATE)
	return HostState{Joined: r.Joined, Instance: r.Instance, Running: int(r.Running), Drained: r.Drained}
}

func (c *linkCluster) Release(name string) bool {
	return c.call(name, rpc.ProvisionerHostRequest_RELEASE).Released
}

func (c *linkCluster) Forget(name string) { c.call(name, rpc.ProvisionerHostRequest_FORGET) }

// Kick: the controller's Ledger wakes the scheduler at each record
// written, which is every change that kicks.
func (c *linkCluster) Kick() {}
