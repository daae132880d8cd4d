package controller

// battach: a command in a running job's container, run by the worker of
// one of the job's hosts (lib/worker's battach.go). The controller is
// where the caller is known: it lets the job's owner and administrators
// through, for a running job, on one of its hosts; the worker then
// names the container itself from the job.

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/worker"
)

// battacher is an executor that can run battach's command: the embedded
// worker itself, a remote worker's connection by asking it.
type battacher interface {
	Battach(ctx context.Context, req *rpc.BattachRequest) *rpc.BattachReply
}

// Battach runs req's shell in the job's container on req.Host (the
// job's first host when empty).
func (c *Controller) Battach(ctx context.Context, who Caller, req *rpc.BattachRequest) (*rpc.BattachReply, error) {
	ex, fwd, err := c.battachTarget(who, req)
	if err != nil {
		return nil, err
	}
	b, ok := ex.(battacher)
	if !ok {
		return nil, userErr("Job <%s>: the job's host <%s> is not connected", jobName(req.JobId, req.Index), fwd.Host)
	}
	fwd.Stdin = req.Stdin
	reply := b.Battach(ctx, fwd)
	if reply.Error != "" {
		slog.Info("battach: the worker could not run the command", "job", req.JobId, "index", req.Index, "host", fwd.Host, "err", reply.Error)
		return nil, userErr("%s", reply.Error)
	}
	return reply, nil
}

// battachTarget checks who may run req's command (the job's owner or an
// administrator, for a running job, on one of its hosts) and returns the
// executor of that host and the request it gets.
func (c *Controller) battachTarget(who Caller, req *rpc.BattachRequest) (Executor, *rpc.BattachRequest, error) {
	name := jobName(req.JobId, req.Index)
	if req.Shell != "" && !filepath.IsAbs(req.Shell) {
		return nil, nil, userErr("%s: The shell path must be an absolute path", req.Shell)
	}
	c.mu.Lock()
	r := c.jobs[key{req.JobId, req.Index}]
	var j *api.Job
	var uid uint32
	if r != nil {
		j, uid = r.job, r.eff.GetUid()
	}
	var state api.JobState
	var hosts []string
	if j != nil {
		state = j.State
		for _, h := range j.ExecHosts {
			hosts = append(hosts, h.Host)
		}
	}
	c.mu.Unlock()
	switch {
	case j == nil:
		return nil, nil, userErr("Job <%s> is not found", name)
	case uid != who.UID && !c.isAdmin(who.UID):
		return nil, nil, userErr("Job <%s>: User permission denied", name)
	case isFinished(state):
		return nil, nil, userErr("Job <%s> : Already finished.", name)
	case !isRunning(state) || len(hosts) == 0:
		return nil, nil, userErr("Job <%s> : Not yet started.", name)
	}
	host := req.Host
	if host == "" {
		host = hosts[0]
	} else if !slices.Contains(hosts, host) {
		return nil, nil, userErr("Job <%s>: Host <%s> is not an execution host of the job", name, host)
	}
	return c.taskExecutor(host), &rpc.BattachRequest{JobId: req.JobId, Index: req.Index, Host: host, Shell: req.Shell, Uid: who.UID}, nil
}

// Battach asks the remote worker and waits for its answer, at most a
// little longer than the worker lets the command run.
func (w *workerConn) Battach(ctx context.Context, req *rpc.BattachRequest) *rpc.BattachReply {
	ch := make(chan *rpc.BattachReply, 1)
	w.mu.Lock()
	w.battachID++
	id := w.battachID
	w.battaches[id] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.battaches, id)
		w.mu.Unlock()
	}()
	fwd := &rpc.BattachRequest{Id: id, JobId: req.JobId, Index: req.Index, Host: req.Host, Shell: req.Shell, Stdin: req.Stdin, Uid: req.Uid}
	w.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Battach{Battach: fwd}})
	t := time.NewTimer(worker.BattachTimeout + 10*time.Second)
	defer t.Stop()
	lost := &rpc.BattachReply{Error: "Job <" + jobName(req.JobId, req.Index) + ">: lost contact with host " + w.name + ", where the job runs"}
	select {
	case r := <-ch:
		return r
	case <-w.closed:
		return lost
	case <-t.C:
		return lost
	case <-ctx.Done():
		return &rpc.BattachReply{Error: ctx.Err().Error()}
	}
}

// battached takes the worker's answer to a battach call.
func (w *workerConn) battached(r *rpc.BattachReply) {
	w.mu.Lock()
	ch := w.battaches[r.Id]
	delete(w.battaches, r.Id)
	w.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// Battach is the Controller service's call.
func (s *Service) Battach(ctx context.Context, req *rpc.BattachRequest) (*rpc.BattachReply, error) {
	who, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.c.Battach(ctx, who, req)
	if err != nil {
		return nil, toStatus(err)
	}
	return r, nil
}
