package controller

import (
	"fmt"
	"log/slog"
	"strconv"

	"xce/lib/api"
	"xce/lib/api/rpc"
)

// maxPeek bounds one Peek reply; bpeek asks again from where it stopped.
const maxPeek = 1 << 20

// peeker is an executor that can read a job's output so far: the embedded
// worker reads it on this host, a remote worker's connection asks it.
type peeker interface {
	Peek(id int64, idx int32, offset int64, max int) ([]byte, int64, string, error)
}

// Peek is a running job's output so far, from the worker of its host
// (bpeek, xcetop): for the job's owner and the administrators.
func (c *Controller) Peek(who Caller, req *rpc.PeekRequest) (*rpc.PeekReply, error) {
	c.mu.Lock()
	r := c.jobs[key{req.JobId, req.Index}]
	var j *api.Job
	var uid uint32
	if r != nil {
		j, uid = r.job, r.eff.GetUid()
	}
	c.mu.Unlock()
	switch {
	case j == nil:
		return nil, userErr("Job <%s> is not found", jobName(req.JobId, req.Index))
	case uid != who.UID && !c.isAdmin(who.UID):
		return nil, userErr("Job <%s>: User permission denied", jobName(req.JobId, req.Index))
	case j.StartTime == 0:
		// A finished job's spool stays on its host until the job is
		// forgotten, so bpeek -f reads the last of it.
		return nil, userErr("Job <%s> : Not yet started.", jobName(req.JobId, req.Index))
	}
	p, ok := c.execOf(j).(peeker)
	if !ok {
		return nil, userErr("Job <%s> : the job's host is not connected", jobName(req.JobId, req.Index))
	}
	max := int(req.MaxBytes)
	if max <= 0 || max > maxPeek {
		max = maxPeek
	}
	data, size, path, err := p.Peek(req.JobId, req.Index, req.Offset, max)
	if err != nil {
		// One answer whatever the cause: the file is missing, refused,
		// or one the job's user may not open are all the same to the
		// caller, who learns nothing about paths they cannot see. The
		// cause goes to the log.
		slog.Info("bpeek: cannot read the job's output", "job", req.JobId, "index", req.Index, "path", path, "err", err)
		return nil, userErr("Job <%s> : Cannot open the job's output file", jobName(req.JobId, req.Index))
	}
	return &rpc.PeekReply{Data: data, Size: size, Path: path}, nil
}

// jobName is "12" or "12[3]", as LSF's messages name a job.
func jobName(id int64, idx int32) string {
	if idx == 0 {
		return strconv.FormatInt(id, 10)
	}
	return fmt.Sprintf("%d[%d]", id, idx)
}
