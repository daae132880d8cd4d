package top

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"xce/lib/api"
)

// sim is a simulated controller: a cluster of hosts and jobs in memory
// that records the controls it receives.
type sim struct {
	mu      sync.Mutex
	info    *api.ClusterInfo
	hosts   []*api.Host
	queues  []*api.Queue
	jobs    []*api.Job
	watch   chan *api.Job // what Watch streams; closing it breaks the stream
	down    bool          // Info and Jobs fail
	signals []*api.SignalRequest
	control []*api.ControlRequest
	queries int
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// newSim builds nh hosts, nj jobs over users u0..u9 and queues normal,
// short, long; job i runs on host i%nh when it runs.
func newSim(nh, nj int) *sim {
	s := &sim{
		info:  &api.ClusterInfo{ClusterName: "simc", MasterHost: "master", CallerIsAdmin: true},
		watch: make(chan *api.Job, 1024),
	}
	for i := range nh {
		st := api.HostState_HOST_OK
		switch {
		case i%50 == 7:
			st = api.HostState_HOST_CLOSED
		case i%97 == 5:
			st = api.HostState_HOST_UNAVAIL
		case i%211 == 3:
			st = api.HostState_HOST_UNREACH
		}
		h := &api.Host{Name: fmt.Sprintf("node%05d", i), State: st, MaxSlots: 32, Njobs: int32(i % 33),
			Ncpus: 32, MaxmemKb: 256 << 20, MemKb: int64(256-i%200) << 20, R1M: float64(i%40) / 2, Ut: float64(i%100) / 100, Ngpus: int32(i % 3 / 2 * 4)}
		// As the controller reports them: an administrator's closed_Adm,
		// a host whose slots are all taken closed_Full.
		switch {
		case st == api.HostState_HOST_CLOSED:
			h.StatusDetail = "closed_Adm"
		case st == api.HostState_HOST_OK && h.Njobs >= h.MaxSlots:
			h.State, h.StatusDetail = api.HostState_HOST_CLOSED, "closed_Full"
		}
		s.hosts = append(s.hosts, h)
	}
	s.queues = []*api.Queue{
		{Name: "normal", Priority: 30, Open: true, Active: true, IsDefault: true, Njobs: 10, Pend: 4, Run: 6},
		{Name: "short", Priority: 40, Open: true, Active: true, MaxSlots: 100, UserSlotLimit: 10, UserShares: map[string]int32{"u1": 10, "default": 1}},
		{Name: "long", Priority: 20, Open: false, Active: false},
	}
	qs := []string{"normal", "short", "long"}
	for i := range nj {
		s.jobs = append(s.jobs, simJob(i, nh, qs[i%3]))
	}
	return s
}

func simJob(i, nh int, queue string) *api.Job {
	states := []api.JobState{api.JobState_RUN, api.JobState_PEND, api.JobState_RUN, api.JobState_DONE, api.JobState_EXIT, api.JobState_USUSP, api.JobState_RUN, api.JobState_PEND}
	st := states[i%len(states)]
	user := fmt.Sprintf("u%d", i%10)
	sub := t0.Add(-time.Duration(i%3600) * time.Second)
	j := &api.Job{
		JobId: int64(i + 1), State: st, SubmitTime: sub.UnixNano(), Seq: 1,
		Effective: &api.JobSpec{User: user, Queue: queue, Command: fmt.Sprintf("sim-%d --step %d", i+1, i%7), MinTasks: 1, ResReq: []string{"rusage[mem=1024]"}},
	}
	if st != api.JobState_PEND {
		j.StartTime = sub.Add(10 * time.Second).UnixNano()
		j.ExecHosts = []*api.HostSlots{{Host: fmt.Sprintf("node%05d", i%max(1, nh)), Slots: 1}}
		j.AllocSlots = 1
		j.SpoolOutput = fmt.Sprintf("/spool/%d.out", i+1)
	} else {
		j.PendReason = "Not enough job slot(s): 3 hosts;\nJob's requirements for resource reservation not satisfied: 2 hosts;\nrusage[mem=1024]: 2 hosts have less than 1024 MB unreserved"
	}
	if st == api.JobState_DONE || st == api.JobState_EXIT {
		j.EndTime = sub.Add(20 * time.Second).UnixNano()
	}
	return j
}

func (s *sim) Info(context.Context) (*api.ClusterInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil, errors.New("connection refused")
	}
	return s.info, nil
}

func (s *sim) Jobs(_ context.Context, refs []*api.JobRef, _ bool) ([]*api.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries++
	if s.down {
		return nil, errors.New("connection refused")
	}
	if len(refs) == 0 {
		return append([]*api.Job(nil), s.jobs...), nil
	}
	var out []*api.Job
	for _, r := range refs {
		for _, j := range s.jobs {
			if j.JobId == r.JobId && (r.ArrayIndex < 0 || r.ArrayIndex == j.ArrayIndex) {
				out = append(out, j)
			}
		}
	}
	return out, nil
}

func (s *sim) Watch(ctx context.Context, fn func(*api.Job)) error {
	s.mu.Lock()
	ch := s.watch
	s.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case j, ok := <-ch:
			if !ok {
				return errors.New("stream broken")
			}
			fn(j)
		}
	}
}

func (s *sim) Hosts(context.Context) ([]*api.Host, error)   { return s.hosts, nil }
func (s *sim) Queues(context.Context) ([]*api.Queue, error) { return s.queues, nil }

func (s *sim) Signal(_ context.Context, req *api.SignalRequest) (*api.SignalReply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signals = append(s.signals, req)
	return &api.SignalReply{Results: []*api.SignalResult{{Ref: req.Refs[0]}}}, nil
}

func (s *sim) Control(_ context.Context, req *api.ControlRequest) (*api.ControlReply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.control = append(s.control, req)
	return &api.ControlReply{}, nil
}
