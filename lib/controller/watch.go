package controller

import (
	"xce/lib/api"
)

// watcher is one Watch stream. Its channel is buffered; a watcher that
// falls that far behind is dropped (its stream ends and the client
// reconnects) rather than slowing the controller down.
type watcher struct {
	refs    map[key]bool // empty: every job
	ids     map[int64]bool
	ch      chan *api.Job
	dropped bool
}

const watchBuffer = 4096

// Watch registers a watcher; the returned cancel unregisters it. With
// initial, the watched jobs' current records are queued first.
func (c *Controller) Watch(refs []*api.JobRef, initial bool) (<-chan *api.Job, func()) {
	w := &watcher{refs: map[key]bool{}, ids: map[int64]bool{}, ch: make(chan *api.Job, watchBuffer)}
	for _, r := range refs {
		if r.ArrayIndex < 0 {
			w.ids[r.JobId] = true
		} else {
			w.refs[key{r.JobId, r.ArrayIndex}] = true
		}
	}
	c.mu.Lock()
	c.watchers[w] = struct{}{}
	if initial {
		for _, r := range refs {
			for _, x := range c.resolve(r) {
				c.send(w, x.job)
			}
		}
	}
	c.mu.Unlock()
	return w.ch, func() {
		c.mu.Lock()
		if _, ok := c.watchers[w]; ok {
			delete(c.watchers, w)
			if !w.dropped {
				close(w.ch)
			}
		}
		c.mu.Unlock()
	}
}

func (w *watcher) wants(j *api.Job) bool {
	if len(w.refs) == 0 && len(w.ids) == 0 {
		return true
	}
	return w.ids[j.JobId] || w.refs[key{j.JobId, j.ArrayIndex}]
}

// publish tells watchers about a changed job (c.mu held).
func (c *Controller) publish(r *rec) {
	for w := range c.watchers {
		if w.wants(r.job) {
			c.send(w, r.job)
		}
	}
}

func (c *Controller) send(w *watcher, j *api.Job) {
	if w.dropped {
		return
	}
	select {
	case w.ch <- j:
	default:
		w.dropped = true
		close(w.ch)
	}
}
