package main

import (
	"log/slog"

	"xce/lib/agent"
	"xce/lib/controller"
	"xce/lib/metrics"
)

// ctlMetrics is the controller's metrics endpoint (xced --metrics, or
// [cluster] metrics_listen); its zero value serves nothing, and every
// method is a no-op then.
type ctlMetrics struct {
	m    *metrics.Controller
	stop func()
}

// startMetrics serves the metrics on addr ("": none). /readyz answers 503
// until a controller is set (the state restored, or this candidate
// elected), and again once it is taken away (a standby).
func startMetrics(addr string) (*ctlMetrics, error) {
	if addr == "" {
		return &ctlMetrics{}, nil
	}
	reg := metrics.New()
	m := metrics.NewController(reg)
	reg.SetReady(func() (bool, string) {
		if m.Leading() {
			return true, ""
		}
		return false, "not the leading controller (a standby, or restoring the state)"
	})
	stop, bound, err := reg.Serve(addr)
	if err != nil {
		return nil, err
	}
	slog.Info("serving metrics", "addr", bound.String(), "paths", "/metrics /healthz /readyz")
	return &ctlMetrics{m: m, stop: stop}, nil
}

func (c *ctlMetrics) close() {
	if c.stop != nil {
		c.stop()
	}
}

// hook has ctl's cycles and calls observed.
func (c *ctlMetrics) hook(cfg *controller.Config) {
	if c.m != nil {
		cfg.ObserveCycle = c.m.ObserveCycle
		cfg.ObserveCall = c.m.RPC.Observe
	}
}

func (c *ctlMetrics) setController(ctl *controller.Controller) {
	if c.m != nil {
		c.m.SetController(ctl)
	}
}

// startWorkerMetrics serves a worker's metrics on addr ("": none).
func startWorkerMetrics(addr string, probe *agent.Probe) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	reg := metrics.New()
	metrics.NewWorker(reg, probe)
	reg.SetReady(func() (bool, string) {
		if probe.Read().Connected {
			return true, ""
		}
		return false, "not connected to the controller"
	})
	stop, bound, err := reg.Serve(addr)
	if err != nil {
		return nil, err
	}
	slog.Info("serving metrics", "addr", bound.String(), "paths", "/metrics /healthz /readyz")
	return stop, nil
}
