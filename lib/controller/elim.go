package controller

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"xce/lib/api"
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

// startLocalElims runs the local host's elims until ctx ends (with the
// configuration xced started with).
func (c *Controller) startLocalElims(ctx context.Context) {
	if !c.hasLocal() {
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
	go r.Run(ctx)
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
func setElimValues(schema *resreq.Schema, values *resreq.Host, v *api.Host) {
	for name, s := range v.GetElimValues() {
		r, _, ok := schema.Lookup(name)
		if !ok || s == "" { // "" is a stale value
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
