package unixrpc

import (
	"sync"
	"sync/atomic"
)

// workers runs connections and calls on goroutines kept for the next one
// once they finish. A new goroutine's stack starts at 8 KB, and a call
// through the codec and the controller grows it to 32 KB or more, copying
// it at each doubling: under a stream of submissions that copying was 7%
// of the controller's CPU. A kept goroutine has its stack grown already.
type workers struct {
	work     chan func()
	quit     chan struct{}
	stopOnce sync.Once
	idle     atomic.Int32
	live     atomic.Int32 // goroutines, running a task or waiting
	// maxIdle bounds the goroutines kept waiting, and with them the
	// memory their stacks hold when the server is quiet.
	maxIdle int32
}

// tasksPerWorker is how many tasks a goroutine runs before it ends: a
// stack grown by one deep call is given back after a while.
const tasksPerWorker = 1 << 14

func newWorkers(maxIdle int) *workers {
	return &workers{work: make(chan func()), quit: make(chan struct{}), maxIdle: int32(maxIdle)}
}

// run runs f on a waiting goroutine, or on a new one if none waits.
func (w *workers) run(f func()) {
	select {
	case w.work <- f:
	default:
		w.live.Add(1)
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	defer w.live.Add(-1)
	for n := 1; ; n++ {
		f()
		f = nil // what f holds is garbage while the goroutine waits
		if n == tasksPerWorker {
			return
		}
		if w.idle.Add(1) > w.maxIdle {
			w.idle.Add(-1)
			return
		}
		select {
		case f = <-w.work:
			w.idle.Add(-1)
		case <-w.quit:
			w.idle.Add(-1)
			return
		}
	}
}

// stop ends the waiting goroutines; tasks run after it still run, each
// on a goroutine of its own that then ends.
func (w *workers) stop() { w.stopOnce.Do(func() { close(w.quit) }) }
