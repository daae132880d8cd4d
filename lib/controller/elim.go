package controller

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/config"
	"xce/lib/elim"
	"xce/lib/resreq"
)

// Reported resources (LSF's ELIMs, lib/elim): a worker runs its host's
// elims and sends their values with its load (api.Host.elim_values); the
// controller's own host, in the single-host default, runs them here. The
// values are the host's for lsload -l and select[], as the configuration
// types them.

// elimWelcome are the elim settings a host's worker is welcomed with.
func (c *Controller) elimWelcome(host string) (dir string, staleMs int64, resources []string) {
	conf := c.config()
	return conf.ElimDir(host), (time.Duration(conf.Cluster.ElimStaleAfter) * time.Second).Milliseconds(), conf.ElimResources()
}

// localElimRun is the run of the local host's elims: restartElims
// stops it and starts another with the configuration read again.
type localElimRun struct {
	mu     sync.Mutex
	ctx    context.Context // Run's
	cancel context.CancelFunc
	done   chan struct{}
}

// startLocalElims runs the local host's elims until ctx ends (with the
// configuration in force).
func (c *Controller) startLocalElims(ctx context.Context) {
	e := &c.localElimRun
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ctx = ctx
	c.startLocalElimsLocked()
}

// startLocalElimsLocked stops the local elims that run and starts them
// again with the configuration in force (c.localElimRun.mu held).
func (c *Controller) startLocalElimsLocked() {
	e := &c.localElimRun
	if e.cancel != nil {
		e.cancel()
		<-e.done
		e.cancel = nil
		c.localElims.Store(nil)
	}
	if e.ctx == nil || !c.hasLocal() {
		return
	}
	dir, staleMs, res := c.elimWelcome(c.cfg.Host)
	if dir == "" {
		return
	}
	known := map[string]bool{}
	for _, r := range res {
		known[r] = true
	}
	r := elim.New(elim.Config{Dir: dir, StaleAfter: time.Duration(staleMs) * time.Millisecond,
		Known: func(n string) bool { return known[n] }, Log: slog.Default().With("host", c.cfg.Host)})
	c.localElims.Store(r)
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	e.cancel, e.done = cancel, done
}

// restartElims starts every host's elims again after badmin reconfig
// (LSF restarts them with LIM): the local host's here, each connected
// worker's with the new settings, so that a changed elim_dir or an elim
// added there is picked up at once.
func (c *Controller) restartElims() {
	e := &c.localElimRun
	e.mu.Lock()
	c.startLocalElimsLocked()
	e.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := &c.config().Cluster
	for _, name := range c.hostNames {
		h := c.hosts[name]
		if h == nil || h.conn == nil {
			continue
		}
		dir, stale, res := c.elimWelcome(name)
		h.conn.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Reconfigured{Reconfigured: &rpc.Welcome{
			ClusterName: cl.Name, Host: name, ElimDir: dir, ElimStaleAfterMs: stale, ElimResources: res,
		}}})
	}
}

// hasLocal says whether the controller runs jobs on its own host.
func (c *Controller) hasLocal() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[c.cfg.Host]
	return h != nil && h.local
}

// localElimValues are the local host's reported values; nil when none.
func (c *Controller) localElimValues() map[string]string {
	if r := c.localElims.Load(); r != nil {
		return r.Values(time.Now())
	}
	return nil
}

// badElimValue remembers the host's values that were not of their
// resource's type, to log each once.
var badElimValue sync.Map

// setElimValues gives the scheduler's view of a host its reported
// values, converted to their resources' types; they win over the
// configured ones.
func setElimValues(conf *config.Config, schema *resreq.Schema, values *resreq.Host, v *api.Host) {
	for name, s := range v.GetElimValues() {
		r, _, ok := schema.Lookup(name)
		if !ok || s == "" || conf.IsInstance(name) { // "" is a stale value; instances: withInstances
			continue
		}
		var val any
		var err error
		switch r.Kind {
		case resreq.Numeric:
			val, err = strconv.ParseFloat(s, 64)
		case resreq.Boolean:
			val, err = strconv.ParseBool(s)
		case resreq.String:
			val = s
		default:
			continue
		}
		if err == nil {
			err = schema.Set(values, name, val)
		}
		if err != nil {
			if _, seen := badElimValue.LoadOrStore(v.GetName()+"\x00"+name, true); !seen {
				slog.Warn("reported value ignored", "host", v.GetName(), "resource", name, "value", s, "err", err)
			}
		}
	}
}
