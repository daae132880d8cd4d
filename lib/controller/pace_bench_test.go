package controller

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/store"
)

// BenchmarkDispatchPace is make bench's short-job row in-process, where a
// CPU profile sees the controller alone: 1,000 `true` elements on 2 slots
// of the single-host default, each ending as soon as it starts (no
// process), from the submission until all are DONE; on a fresh
// controller and on ones already holding finished jobs (history must not
// slow the path). It reports the wall time per job (store commits and
// the loop's pace) and the controller's CPU per job.
//
//	go test ./lib/controller/ -run '^$' -bench DispatchPace -benchtime 1x
func BenchmarkDispatchPace(b *testing.B) {
	for _, hist := range []int{0, 10000, 100000} {
		b.Run(fmt.Sprintf("history-%d", hist), func(b *testing.B) {
			st, err := store.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			fx := &fakeExec{running: map[key]bool{}, autoExit: 0}
			c, err := New(Config{Host: "hostA", Slots: 2, NCPUs: 2}, st, fx)
			if err != nil {
				b.Fatal(err)
			}
			fx.c = c
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			go func() { c.Run(ctx); close(stopped) }()
			defer func() { cancel(); <-stopped; st.Close() }()
			for left := hist; left > 0; left -= 1000 {
				r, err := c.Submit(alice, &api.JobSpec{Command: "true", Hold: true, ArraySpec: fmt.Sprintf("[1-%d]", min(left, 1000))})
				if err != nil {
					b.Fatal(err)
				}
				c.Signal(alice, &api.SignalRequest{Refs: []*api.JobRef{{JobId: r.JobId, ArrayIndex: -1}}})
			}
			for c.stats.finished[1].Load() < int64(hist) {
				time.Sleep(10 * time.Millisecond)
			}
			const n = 1000
			for i := 0; i < b.N; i++ {
				base := c.stats.finished[0].Load()
				cpu0 := selfCPU()
				began := time.Now()
				if _, err := c.Submit(alice, &api.JobSpec{Command: "true", ArraySpec: fmt.Sprintf("[1-%d]", n)}); err != nil {
					b.Fatal(err)
				}
				for c.stats.finished[0].Load() < base+n {
					time.Sleep(time.Millisecond)
				}
				d := time.Since(began)
				b.ReportMetric(float64(d.Microseconds())/n, "us/job")
				b.ReportMetric(float64((selfCPU()-cpu0).Microseconds())/n, "us-cpu/job")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkSubmitBurst: 10,000 submissions from 32 goroutines at once to a
// controller with 2 slots (the jobs end as they start): the scheduling
// cycles they cause, per submission. With no pause between cycles, what
// arrives while one runs is taken together by the next: far fewer cycles
// than submissions.
func BenchmarkSubmitBurst(b *testing.B) {
	st, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var cycles atomic.Int64
	fx := &fakeExec{running: map[key]bool{}, autoExit: 0}
	c, err := New(Config{Host: "hostA", Slots: 2, NCPUs: 2, ObserveCycle: func(time.Duration) { cycles.Add(1) }}, st, fx)
	if err != nil {
		b.Fatal(err)
	}
	fx.c = c
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { c.Run(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped; st.Close() }()
	const n, clients = 10000, 32
	for i := 0; i < b.N; i++ {
		c0 := cycles.Load()
		began := time.Now()
		var wg sync.WaitGroup
		for w := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := w; j < n; j += clients {
					if _, err := c.Submit(alice, &api.JobSpec{Command: "true"}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		d := time.Since(began)
		b.ReportMetric(float64(cycles.Load()-c0)/n, "cycles/submission")
		b.ReportMetric(n/d.Seconds(), "submits/s")
	}
	b.ReportMetric(0, "ns/op")
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}
