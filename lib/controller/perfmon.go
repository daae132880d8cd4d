package controller

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"

	"xce/lib/api"
	"xce/lib/perfmon"
)

// perfMonitor is badmin perfmon (lib/perfmon) over the controller's
// running totals: the calls counted as they end (observeCall), the jobs
// from stats.
type perfMonitor struct {
	mon   perfmon.Monitor
	calls [perfmon.NumCounters]atomic.Int64 // the request rows only
}

// callRow is the perfmon row a Controller service method counts in
// besides Requests.
var callRow = map[string]perfmon.Counter{
	"Query":      perfmon.JobQueries,
	"Events":     perfmon.JobQueries,
	"ListHosts":  perfmon.HostQueries,
	"ListQueues": perfmon.QueueQueries,
	"Submit":     perfmon.SubmitRequests,
	"SubmitPack": perfmon.SubmitRequests,
}

const controllerService = "/xce.api.v1.Controller/"

// ObserveCall is told of every call the controller's servers ran: its
// full method name, its error and its time. It counts the Controller
// service's calls for perfmon and hands every call on to the configured
// observer (metrics).
func (c *Controller) ObserveCall(method string, err error, took time.Duration) {
	if name, ok := strings.CutPrefix(method, controllerService); ok {
		c.perf.calls[perfmon.Requests].Add(1)
		if row, ok := callRow[name]; ok {
			c.perf.calls[row].Add(1)
		}
	}
	if f := c.cfg.ObserveCall; f != nil {
		f(method, err, took)
	}
}

// CallInterceptors are the grpc.Server options that have a server's
// calls observed (ObserveCall) and its streams endable (EndStreams), for
// the servers on the TCP port.
func (c *Controller) CallInterceptors() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainStreamInterceptor(c.streams.intercept),
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			start := time.Now()
			reply, err := h(ctx, req)
			c.ObserveCall(info.FullMethod, err, time.Since(start))
			return reply, err
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			start := time.Now()
			err := h(srv, ss)
			c.ObserveCall(info.FullMethod, err, time.Since(start))
			return err
		}),
	}
}

// perfTotals are the running totals perfmon samples.
func (c *Controller) perfTotals() perfmon.Totals {
	var t perfmon.Totals
	for i := range t {
		t[i] = c.perf.calls[i].Load()
	}
	t[perfmon.JobsSubmitted] = c.stats.submitted.Load()
	t[perfmon.JobsDispatched] = c.stats.dispatched.Load()
	t[perfmon.JobsCompleted] = c.stats.finished[0].Load() + c.stats.finished[1].Load()
	return t
}

var errPerfmonPeriod = &UserError{Msg: "The sample period must be a whole number of seconds, at least 1"}

// Perfmon is badmin perfmon: anyone may view, administrators start,
// stop and set the period (LSF: "badmin perfmon" controls are for
// administrators).
func (c *Controller) Perfmon(who Caller, req *api.PerfmonRequest) (*api.PerfmonReply, error) {
	now := time.Now()
	period := time.Duration(req.GetPeriodSec()) * time.Second
	if req.GetOp() != api.PerfmonRequest_VIEW && !c.isAdmin(who.UID) {
		return nil, &UserError{Msg: "Operation denied by MBD: User permission denied", Permission: true}
	}
	switch req.GetOp() {
	case api.PerfmonRequest_START:
		if period != 0 && period < perfmon.MinPeriod {
			return nil, errPerfmonPeriod
		}
		c.perf.mon.Start(now, period, c.perfTotals())
	case api.PerfmonRequest_STOP:
		c.perf.mon.Stop()
	case api.PerfmonRequest_SET_PERIOD:
		if period < perfmon.MinPeriod {
			return nil, errPerfmonPeriod
		}
		c.perf.mon.SetPeriod(now, period, c.perfTotals())
	}
	v := c.perf.mon.View(c.perfTotals())
	reply := &api.PerfmonReply{Running: v.Running, PeriodSec: int32(v.Period / time.Second), Periods: v.Periods}
	if v.Running {
		reply.StartTime = v.Started.UnixNano()
		if !v.Sampled.IsZero() {
			reply.SampledTime = v.Sampled.UnixNano()
		}
	}
	for _, r := range v.Rows {
		reply.Rows = append(reply.Rows, &api.PerfmonRow{Name: r.Name, Key: r.Key, Last: r.Last, Max: r.Max, Min: r.Min, Avg: r.Avg, Total: r.Total})
	}
	reply.FdUsed, reply.FdLimit = fdUsage()
	return reply, nil
}

// fdUsage is the process's open descriptors and its limit.
func fdUsage() (used, limit int32) {
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		used = int32(len(ents))
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil {
		limit = int32(min(rl.Cur, 1<<31-1))
	}
	return used, limit
}
