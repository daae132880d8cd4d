package tests

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/client"
)

var loadDuration = flag.Duration("load-duration", 5*time.Minute, "BenchmarkMixedLoad: how long the submitters and pollers run")

// BenchmarkMixedLoad: 50 submitters and 50 pollers against one xced for
// -load-duration (5 minutes in make bench), each on its own connection, as
// a busy cluster's workflow tools are: a submitter submits held jobs one
// after another (each acknowledged only once durable); a poller asks for
// one recently submitted job at a time, the request `bjobs ID` sends.
// Reported: requests per second of each kind sustained, their p50 and p99
// latencies, and the errors (there must be none).
func BenchmarkMixedLoad(b *testing.B) {
	const submitters, pollers = 50, 50
	c := newBenchCluster(b)
	conns := make([]*client.Client, submitters+pollers)
	for i := range conns {
		conns[i] = c.dial()
	}
	defer func() {
		for _, cl := range conns {
			cl.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), *loadDuration)
	defer cancel()
	var (
		lastID atomic.Int64
		errs   atomic.Int64
		mu     sync.Mutex
		sub    []time.Duration
		poll   []time.Duration
		wg     sync.WaitGroup
	)
	first := c.submit("-H", "true")
	lastID.Store(first)
	record := func(into *[]time.Duration, local []time.Duration) {
		mu.Lock()
		*into = append(*into, local...)
		mu.Unlock()
	}
	began := time.Now()
	for i, cl := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			defer func() {
				if i < submitters {
					record(&sub, lat)
				} else {
					record(&poll, lat)
				}
			}()
			for ctx.Err() == nil {
				t0 := time.Now()
				var err error
				if i < submitters {
					var r *api.SubmitReply
					r, err = cl.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{Command: "true", Hold: true, SubmitCwd: "/tmp"}})
					if err == nil {
						for {
							last := lastID.Load()
							if r.JobId <= last || lastID.CompareAndSwap(last, r.JobId) {
								break
							}
						}
					}
				} else {
					hi := lastID.Load()
					id := hi - rand.Int64N(min(hi-first+1, 1000))
					_, err = cl.Query(ctx, &api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all", Refs: []*api.JobRef{{JobId: id}}})
				}
				if ctx.Err() != nil {
					return // the end of the run, not a failed request
				}
				if err != nil {
					errs.Add(1)
					continue
				}
				lat = append(lat, time.Since(t0))
			}
		}()
	}
	wg.Wait()
	d := time.Since(began)
	pct := func(l []time.Duration, p float64) float64 {
		if len(l) == 0 {
			return 0
		}
		slices.Sort(l)
		return ms(l[min(len(l)-1, int(float64(len(l))*p))])
	}
	what := fmt.Sprintf("%d submitters + %d pollers, %s", submitters, pollers, loadDuration.String())
	report(b, what+": submissions", float64(len(sub))/d.Seconds(), "submits/s", nil)
	report(b, what+": submit p50", pct(sub, 0.50), "ms", nil)
	report(b, what+": submit p99", pct(sub, 0.99), "ms", nil)
	report(b, what+": polls", float64(len(poll))/d.Seconds(), "queries/s", nil)
	report(b, what+": poll p50", pct(poll, 0.50), "ms", nil)
	report(b, what+": poll p99", pct(poll, 0.99), "ms", nil)
	report(b, what+": failed requests", float64(errs.Load()), "errors", atMost(0))
	if n := errs.Load(); n > 0 {
		b.Errorf("%d requests failed under load\nxced log:\n%s", n, c.logTail())
	}
}
