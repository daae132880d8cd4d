package top

import (
	"context"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"xce/lib/api"
)

// Controller is what xcetop needs of the controller. lib/top/live
// implements it over gRPC; the tests and the benchmark use a simulated one.
type Controller interface {
	Info(ctx context.Context) (*api.ClusterInfo, error)
	// Jobs returns every job (refs empty) or the named ones, each with its
	// effective spec, pending reason and usage; submitted asks for the spec
	// as submitted too (bjobs -l).
	Jobs(ctx context.Context, refs []*api.JobRef, submitted bool) ([]*api.Job, error)
	// Watch calls fn with every job change until ctx ends or the stream
	// breaks. The jobs come without their specs.
	Watch(ctx context.Context, fn func(*api.Job)) error
	Hosts(ctx context.Context) ([]*api.Host, error)
	Queues(ctx context.Context) ([]*api.Queue, error)
	Signal(ctx context.Context, req *api.SignalRequest) (*api.SignalReply, error)
	Control(ctx context.Context, req *api.ControlRequest) (*api.ControlReply, error)
}

// Messages the feed sends the model.
type (
	// InfoMsg is the controller's description of the cluster and caller.
	InfoMsg struct{ Info *api.ClusterInfo }
	// SnapshotMsg replaces every job (at start and after a reconnection).
	SnapshotMsg struct{ Jobs []*api.Job }
	// JobsMsg carries changed jobs. A job without an effective spec keeps
	// the one the model has.
	JobsMsg struct{ Jobs []*api.Job }
	// HostsMsg replaces the hosts.
	HostsMsg struct{ Hosts []*api.Host }
	// QueuesMsg replaces the queues.
	QueuesMsg struct{ Queues []*api.Queue }
	// ConnMsg says whether the controller answers.
	ConnMsg struct {
		Up  bool
		Err error
	}
)

// Feed keeps the model up to date from the controller: a snapshot of the
// jobs, then the watch stream (batched, so that a burst of changes costs
// one redraw), and the hosts and queues polled every PollEvery. When the
// stream breaks it says so and starts again, snapshot first.
type Feed struct {
	Ctl        Controller
	Send       func(tea.Msg)
	PollEvery  time.Duration // 2s when zero
	BatchEvery time.Duration // 200ms when zero
}

// Run feeds until ctx ends.
func (f *Feed) Run(ctx context.Context) {
	if f.PollEvery == 0 {
		f.PollEvery = 2 * time.Second
	}
	if f.BatchEvery == 0 {
		f.BatchEvery = 200 * time.Millisecond
	}
	go f.poll(ctx)
	backoff := 250 * time.Millisecond
	for ctx.Err() == nil {
		up, err := f.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if up {
			backoff = 250 * time.Millisecond
		}
		f.Send(ConnMsg{Up: false, Err: err})
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff < 4*time.Second {
			backoff *= 2
		}
		if r, ok := f.Ctl.(interface{ Redial() error }); ok {
			r.Redial()
		}
	}
}

func (f *Feed) poll(ctx context.Context) {
	t := time.NewTicker(f.PollEvery)
	defer t.Stop()
	for {
		cx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if hs, err := f.Ctl.Hosts(cx); err == nil {
			f.Send(HostsMsg{Hosts: hs})
		}
		if qs, err := f.Ctl.Queues(cx); err == nil {
			f.Send(QueuesMsg{Queues: qs})
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// session is one connection: info, snapshot, then the watch stream. It
// says whether the connection was up before it broke.
func (f *Feed) session(ctx context.Context) (bool, error) {
	cx, cancel := context.WithCancel(ctx)
	defer cancel()
	info, err := f.Ctl.Info(cx)
	if err != nil {
		return false, err
	}
	f.Send(InfoMsg{Info: info})

	// Watch first, so that no change between the snapshot and the stream
	// is lost; changes that arrive before the snapshot is sent wait.
	var mu sync.Mutex
	var pending []*api.Job
	known := map[int64]bool{}
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- f.Ctl.Watch(cx, func(j *api.Job) {
			mu.Lock()
			pending = append(pending, j)
			mu.Unlock()
		})
	}()
	jobs, err := f.Ctl.Jobs(cx, nil, false)
	if err != nil {
		return false, err
	}
	for _, j := range jobs {
		known[j.GetJobId()] = true
	}
	f.Send(SnapshotMsg{Jobs: jobs})
	f.Send(ConnMsg{Up: true})
	t := time.NewTicker(f.BatchEvery)
	defer t.Stop()
	for {
		select {
		case err := <-watchErr:
			if err == nil {
				err = context.Canceled
			}
			return true, err
		case <-t.C:
		}
		mu.Lock()
		batch := pending
		pending = nil
		mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		// A job id never seen: fetch it whole (its effective spec, user,
		// queue and name do not travel on the stream).
		var missing []*api.JobRef
		for _, j := range batch {
			if !known[j.GetJobId()] {
				known[j.GetJobId()] = true
				missing = append(missing, &api.JobRef{JobId: j.GetJobId(), ArrayIndex: -1})
			}
		}
		if len(missing) > 0 {
			qx, qcancel := context.WithTimeout(cx, 10*time.Second)
			full, err := f.Ctl.Jobs(qx, missing, false)
			qcancel()
			if err == nil {
				batch = append(full, batch...)
			}
		}
		f.Send(JobsMsg{Jobs: batch})
	}
}
