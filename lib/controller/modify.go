package controller

import (
	"fmt"
	"log/slog"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/store"
)

// modifiable are the submitted-spec fields bmod may change: the options a
// user gives bsub, not the identity or the submission context.
var modifiable = map[string]bool{
	"queue": true, "job_name": true, "array_limit": true, "min_tasks": true, "max_tasks": true,
	"res_req": true, "output_file": true, "output_overwrite": true, "error_file": true, "error_overwrite": true,
	"input_file": true, "cwd": true, "run_limit_sec": true, "mem_limit_kb": true, "mem_limit_hard": true,
	"project": true, "app": true, "pre_exec": true, "post_exec": true, "exclusive": true, "hosts": true,
	"dependency": true, "user_priority": true, "mail_user": true, "notify_begin": true, "notify_end": true, "notify_exit_only": true,
	"begin_time": true, "term_time": true, "rerunnable": true, "description": true, "login_shell": true,
	"user_group": true, "job_group": true, "gpu": true, "cpu_limit_sec": true, "estimated_run_sec": true,
	"outdir": true, "file_limit_kb": true, "data_limit_kb": true, "stack_limit_kb": true, "core_limit_kb": true,
	"swap_limit_kb": true, "process_limit": true, "thread_limit": true, "requeue_exit_values": true,
	"warning_action": true, "warning_time_sec": true, "terminate_orphan": true,
	"reservation": true,
}

// runningModifiable are the fields bmod may change once a job runs (LSF's
// -c, -M, -W, -o, -e, -r, and -We); the limits reach the running job.
var runningModifiable = map[string]bool{
	"run_limit_sec": true, "mem_limit_kb": true, "mem_limit_hard": true, "cpu_limit_sec": true,
	"output_file": true, "output_overwrite": true, "error_file": true, "error_overwrite": true,
	"rerunnable": true, "estimated_run_sec": true,
}

// limitFields are the running job's limits its shepherd enforces.
var limitFields = []string{"run_limit_sec", "mem_limit_kb", "mem_limit_hard", "cpu_limit_sec"}

const errModifyRunning = "Only the following parameters can be used to modify a running job: -c, -M, -W, -o, -e, -r, -We"

// Modify is bmod: it changes fields of a job's submission, lays the
// configuration over it again, and writes both specs before the job is
// considered again. A running job takes only new limits, files and
// -r/-We (runningModifiable); its new limits are sent to it at once. An
// array's elements share their specs, so the whole array is modified,
// and not once one of its elements has finished.
func (c *Controller) Modify(who Caller, req *api.ModifyRequest) *api.ModifyReply {
	reply := &api.ModifyReply{}
	res := &api.ControlResult{Ref: req.Ref}
	reply.Results = append(reply.Results, res)
	conf := c.config()
	fields, arrayErr := c.modifyArray(conf, req)
	if arrayErr != "" {
		res.Error = arrayErr
		return reply
	}
	for _, f := range fields {
		if !modifiable[f] {
			res.Error = fmt.Sprintf("%s cannot be modified", f)
			return reply
		}
	}
	admin := c.isAdmin(who.UID)
	c.mu.Lock()
	defer c.mu.Unlock()
	recs := c.elements(req.Ref.GetJobId())
	if ref := req.Ref; ref.GetArrayIndex() > 0 && len(c.resolve(ref)) == 0 {
		recs = nil // "4[1]" of a job that has no element 1
	}
	if len(recs) == 0 {
		res.Error = errNoJob
		return reply
	}
	r := recs[0]
	switch {
	case r.eff.GetUid() != who.UID && !admin:
		res.Error = errPermission
		return reply
	}
	var running []*rec
	for _, e := range recs {
		switch {
		case isFinished(e.job.State):
			res.Error = errFinished
			return reply
		case isRunning(e.job.State):
			running = append(running, e)
		}
	}
	if arrayErr = sameArray(req, r); arrayErr != "" {
		res.Error = arrayErr
		return reply
	}
	if len(running) > 0 {
		for _, f := range fields {
			if !runningModifiable[f] {
				res.Error = errModifyRunning
				return reply
			}
		}
	}
	id := r.job.JobId
	spec, _, err := c.store.Spec(id)
	if err != nil {
		res.Error = err.Error()
		return reply
	}
	src, dst := req.Spec.ProtoReflect(), spec.ProtoReflect()
	for _, name := range fields {
		fd := dst.Descriptor().Fields().ByName(protoreflect.Name(name))
		if src.Has(fd) {
			dst.Set(fd, src.Get(fd))
		} else {
			dst.Clear(fd)
		}
	}
	scrubLaunch(spec)
	withEnv := proto.Clone(spec).(*api.JobSpec)
	if withEnv.Env, err = c.store.Env(spec.EnvRef); err != nil {
		res.Error = err.Error()
		return reply
	}
	if err := checkSpec(withEnv); err != nil {
		res.Error = err.Error()
		return reply
	}
	_, eff, err := c.layerWith(conf, withEnv)
	if err == nil {
		err = checkSubmission(conf, spec.GetUser(), eff)
	}
	if err == nil && slices.Contains(fields, "user_priority") {
		name, _ := lookupUser(who.UID)
		err = checkUserPriority(conf, admin, name, eff)
	}
	if err == nil {
		err = c.checkHostList(conf, eff.Hosts)
	}
	if err == nil {
		err = c.checkRsvJob(conf, eff)
	}
	if err == nil {
		err = checkGPU(eff)
	}
	if err == nil && eff.Dependency != "" {
		err = c.checkDependency(r.eff.GetUid(), eff.Dependency)
	}
	if err == nil && eff.Dependency != "" {
		err = c.checkCycle(r.job.JobId, r.eff.GetUid(), eff.JobName, eff.Dependency)
	}
	if err == nil && (c.queues[eff.Queue] == nil || !c.queues[eff.Queue].q.Open) {
		err = userErr("%s: Queue has been closed", eff.Queue)
	}
	if err != nil {
		res.Error = err.Error()
		return reply
	}
	origin := splitOrigin(eff)
	raw, err := proto.Marshal(eff)
	submitted, err2 := proto.Marshal(spec)
	if err != nil || err2 != nil {
		res.Error = fmt.Sprint("encode the new spec: ", err, err2)
		return reply
	}
	user := lookupName(who)
	var changes []store.Change
	for i, e := range recs {
		nj := c.clone(e)
		ch := store.Change{Job: nj, Event: c.event(nj, api.EventType_MODIFY, user, "Parameters of Job are changed")}
		if i == 0 {
			ch.EffectiveRaw, ch.OriginRaw, ch.SubmittedRaw = raw, origin, submitted
		}
		changes = append(changes, ch)
	}
	if err := c.commit(changes); err != nil {
		res.Error = "Failed to record the request: " + err.Error()
		return reply
	}
	if slices.ContainsFunc(fields, func(f string) bool { return slices.Contains(limitFields, f) }) {
		for _, e := range running {
			if err := c.execOf(e.job).SetLimits(e.job.JobId, e.job.ArrayIndex, eff); err != nil {
				slog.Warn("cannot change a running job's limits", "job", e.job.JobId, "index", e.job.ArrayIndex, "err", err)
			}
		}
	}
	c.dirty = true
	c.Kick()
	return reply
}

// modifyArray takes "array_spec" (bmod -J "name[indices]") out of a
// request's fields: a job's array indices cannot change, but indices the
// cluster would never accept (more than max_array_size) are refused as
// bsub refuses them, not dropped. It returns the other fields, or the
// error.
func (c *Controller) modifyArray(conf *config.Config, req *api.ModifyRequest) ([]string, string) {
	if !slices.Contains(req.Fields, "array_spec") {
		return req.Fields, ""
	}
	if a := req.Spec.GetArraySpec(); a != "" {
		if _, err := parseArray(a, max(conf.Cluster.MaxArraySize, 1)); err != nil {
			return nil, err.Error()
		}
	}
	return slices.DeleteFunc(slices.Clone(req.Fields), func(f string) bool { return f == "array_spec" }), ""
}

// sameArray refuses a request that would change the job's array indices
// (c.mu held).
func sameArray(req *api.ModifyRequest, r *rec) string {
	if !slices.Contains(req.Fields, "array_spec") {
		return ""
	}
	if a := req.Spec.GetArraySpec(); a != "" && a != arrayText(r.job) {
		return errArrayIndices
	}
	return ""
}

const errArrayIndices = "The indices of a job array cannot be modified"

// arrayText is a job's array indices as -J writes them, "[1-10:2]" for a
// regular range; "" for a plain job.
func arrayText(j *api.Job) string {
	if j.ArraySize == 0 {
		return ""
	}
	first := j.ArrayEnd - (j.ArraySize-1)*j.ArrayStep
	if j.ArrayStep <= 1 {
		return fmt.Sprintf("[%d-%d]", first, j.ArrayEnd)
	}
	return fmt.Sprintf("[%d-%d:%d]", first, j.ArrayEnd, j.ArrayStep)
}
