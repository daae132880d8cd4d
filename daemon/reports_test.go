package main

import (
	"sync"
	"testing"

	"xce/lib/worker"
)

type recorder struct {
	mu  sync.Mutex
	got []int64
}

func (r *recorder) Report(rep worker.Report) {
	r.mu.Lock()
	r.got = append(r.got, rep.JobID)
	r.mu.Unlock()
}

// Reports that arrive before the controller exists wait and are delivered
// in order once it does; none is lost or delivered twice, and none reaches
// a nil receiver (the restart panic of issue 11).
func TestReportGateQueuesUntilOpen(t *testing.T) {
	var g reportGate
	var wg sync.WaitGroup
	for i := int64(1); i <= 50; i++ {
		g.Report(worker.Report{JobID: i})
	}
	rec := &recorder{}
	// Concurrent reports while the gate opens.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := int64(51); i <= 100; i++ {
			g.Report(worker.Report{JobID: i})
		}
	}()
	g.open(rec)
	wg.Wait()
	if len(rec.got) != 100 {
		t.Fatalf("%d reports delivered, want 100", len(rec.got))
	}
	seen := map[int64]bool{}
	for i, id := range rec.got {
		if seen[id] {
			t.Fatalf("report %d delivered twice", id)
		}
		seen[id] = true
		if i < 50 && id != int64(i+1) {
			t.Fatalf("queued reports out of order: %v", rec.got[:50])
		}
	}
}
