package worker

import (
	"log/slog"
	"sync"
	"time"

	"xce/lib/cgroup"
)

// cgRemovals are the job cgroups being removed after their jobs' ends
// were reported: an empty cgroup's removal (an rmdir per hierarchy, and
// retries while the kernel still releases the job's last processes) is
// no part of the job's end. A job of the same id started again (a requeue)
// waits for its old cgroup to go before it makes its new one, and Close
// waits for all.
type cgRemovals struct {
	mu      sync.Mutex
	pending map[jobKey]chan struct{} // closed once removed
	wg      sync.WaitGroup
}

// removeLater removes a job's cgroup in the background.
func (w *Worker) removeLater(k jobKey, cg cgroup.Job) {
	done := make(chan struct{})
	w.rm.mu.Lock()
	if w.rm.pending == nil {
		w.rm.pending = map[jobKey]chan struct{}{}
	}
	prev := w.rm.pending[k]
	w.rm.pending[k] = done
	w.rm.wg.Add(1)
	w.rm.mu.Unlock()
	go func() {
		defer w.rm.wg.Done()
		if prev != nil {
			<-prev
		}
		t0 := time.Now()
		if err := cg.Remove(); err != nil {
			slog.Warn("the job's cgroup could not be removed", "job", k.id, "index", k.idx, "cgroup", cg.Path(), "err", err)
		}
		traceStep("cgroup-remove", t0)
		w.rm.mu.Lock()
		if w.rm.pending[k] == done {
			delete(w.rm.pending, k)
		}
		w.rm.mu.Unlock()
		close(done)
	}()
}

// waitRemoved waits until job k's old cgroup, if one is being removed,
// is gone.
func (w *Worker) waitRemoved(k jobKey) {
	w.rm.mu.Lock()
	ch := w.rm.pending[k]
	w.rm.mu.Unlock()
	if ch != nil {
		<-ch
	}
}
