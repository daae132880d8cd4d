package agent

import (
	"context"
	"slices"
	"sync"
	"time"

	"xce/lib/api/rpc"
	"xce/lib/elim"
)

// elims runs the host's elims (lib/elim) with the welcome's settings; a
// later welcome with other settings (a reconfigured controller) starts
// them again with those.
type elims struct {
	mu     sync.Mutex
	ctx    context.Context // the agent's, which the runner runs under
	key    *rpc.Welcome    // the settings the runner runs with
	run    *elim.Runner
	cancel context.CancelFunc
	done   chan struct{}
}

// start (re)starts the runner when the welcome's settings differ from
// the running one's; ctx is the agent's.
func (e *elims) start(ctx context.Context, a *agent, wel *rpc.Welcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ctx = ctx
	if k := e.key; k != nil && k.GetElimDir() == wel.GetElimDir() && k.GetElimStaleAfterMs() == wel.GetElimStaleAfterMs() &&
		slices.Equal(k.GetElimResources(), wel.GetElimResources()) {
		return
	}
	if e.cancel != nil {
		e.cancel()
		<-e.done
		e.run, e.cancel = nil, nil
	}
	e.key = wel
	if wel.GetElimDir() == "" {
		return
	}
	known := map[string]bool{}
	for _, r := range wel.GetElimResources() {
		known[r] = true
	}
	r := elim.New(elim.Config{
		Dir:        wel.GetElimDir(),
		StaleAfter: time.Duration(wel.GetElimStaleAfterMs()) * time.Millisecond,
		Known:      func(name string) bool { return known[name] },
		Log:        a.log,
	})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { r.Run(rctx); close(done) }()
	e.run, e.cancel, e.done = r, cancel, done
}

// restart starts the runner again with a reconfigured controller's
// settings (badmin reconfig), changed or not, so that an elim added or
// changed in the directory runs at once; nothing before the first
// welcome.
func (e *elims) restart(a *agent, wel *rpc.Welcome) {
	e.mu.Lock()
	ctx := e.ctx
	e.key = nil
	e.mu.Unlock()
	if ctx != nil {
		e.start(ctx, a, wel)
	}
}

// values are the elims' current values; nil when none run.
func (e *elims) values(now time.Time) map[string]string {
	e.mu.Lock()
	r := e.run
	e.mu.Unlock()
	if r == nil {
		return nil
	}
	return r.Values(now)
}
