// Package metrics owns XCE's Prometheus metrics and the HTTP endpoint
// that serves them (/metrics, with /healthz and /readyz beside it), for
// the controller (xced --metrics) and the worker (xced worker --metrics).
//
// Nothing here walks the jobs: the controller keeps its counts as jobs
// change (controller.Stats copies a few numbers per state, queue and
// user, and one entry per host), so a scrape costs the same at 100,000
// jobs as at 10. Names follow Prometheus' rules: an xce_ prefix, base
// units (seconds, bytes) in the name, _total on counters.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc/status"

	"xce/lib/version"
)

// Registry is one daemon's metrics: the Go runtime's and the process's,
// the build's, and what the daemon adds.
type Registry struct {
	reg   *prometheus.Registry
	ready atomic.Pointer[func() (bool, string)]
}

// New returns a registry with the build, Go runtime and process metrics.
func New() *Registry {
	r := &Registry{reg: prometheus.NewRegistry()}
	r.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{Namespace: "xce"}),
		buildInfo(),
	)
	return r
}

func buildInfo() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "xce_build_info",
		Help: "The XCE build this daemon runs: always 1, with its release and revision as labels.",
		ConstLabels: prometheus.Labels{
			"version": version.Release(), "revision": version.Revision(), "goversion": runtime.Version(),
		},
	})
	g.Set(1)
	return g
}

// MustRegister adds collectors.
func (r *Registry) MustRegister(cs ...prometheus.Collector) { r.reg.MustRegister(cs...) }

// Gatherer is what a scrape reads (tests and benchmarks gather directly).
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// SetReady sets what /readyz asks: ready, and if not, why.
func (r *Registry) SetReady(f func() (bool, string)) { r.ready.Store(&f) }

// Handler serves /metrics, /healthz (200 while the process serves) and
// /readyz (200 when SetReady's function says ready, else 503 with why).
func (r *Registry) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{},
		ErrorHandling: promhttp.ContinueOnError,
		// One scrape at a time is plenty, and keeps several Prometheus
		// servers from piling up on the controller's lock.
		MaxRequestsInFlight: 4,
		Timeout:             30 * time.Second,
	}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, why := false, "starting"
		if f := r.ready.Load(); f != nil {
			ok, why = (*f)()
		}
		if !ok {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// Serve listens on addr (HOST:PORT) and serves Handler until the
// returned stop is called.
func (r *Registry) Serve(addr string) (stop func(), bound net.Addr, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: r.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics server", "addr", addr, "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, ln.Addr(), nil
}

type slogPrinter struct{}

func (slogPrinter) Println(v ...any) { slog.Warn("metrics", "err", fmt.Sprint(v...)) }

// RPC counts the calls a server ran and their time, by service, method
// and gRPC status code.
type RPC struct {
	calls *prometheus.CounterVec
	took  *prometheus.HistogramVec
}

// NewRPC returns the RPC metrics, registered in r.
func NewRPC(r *Registry) *RPC {
	m := &RPC{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "xce_rpc_requests_total",
			Help: "Calls the daemon's servers ran, by service, method and gRPC status code.",
		}, []string{"service", "method", "code"}),
		took: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "xce_rpc_request_duration_seconds",
			Help:    "How long the daemon's servers took over each call, by service and method (streams: their whole life).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"service", "method"}),
	}
	r.MustRegister(m.calls, m.took)
	return m
}

// Observe records one call ("/xce.api.v1.Controller/Submit").
func (m *RPC) Observe(fullMethod string, err error, took time.Duration) {
	svc, method := splitMethod(fullMethod)
	m.calls.WithLabelValues(svc, method, status.Code(err).String()).Inc()
	m.took.WithLabelValues(svc, method).Observe(took.Seconds())
}

// splitMethod turns "/xce.api.v1.Controller/Submit" into "Controller"
// and "Submit".
func splitMethod(full string) (service, method string) {
	full = strings.TrimPrefix(full, "/")
	service, method, _ = strings.Cut(full, "/")
	if i := strings.LastIndexByte(service, '.'); i >= 0 {
		service = service[i+1:]
	}
	return service, method
}
