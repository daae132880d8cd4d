package controller

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/store"
)

// Accounting (bacct). Every finish of a job or array element is accounted
// for the cluster's acct_retention: while the controller holds the job
// (clean_period), from memory; once clean() forgets it, from its
// accounting record in the store (lib/store's acct.go), an api.Job with
// its times, hosts, exit status and reason, resource usage and the
// exceptions it showed, its submitted spec, and an effective spec cut
// down to what accounting reports (user, queue, project, application,
// groups, resource requirement, tasks, limits).
//
// clean() writes the records of the jobs it forgets, in one batch, before
// it forgets them: the transaction that records a job's end stays as it
// was (writing the record there would more than double what the finish
// path writes; see lib/store's BenchmarkFinishBatch). Accounting merges
// the two sources in end order; a job clean() is forgetting meanwhile is
// in both for a moment and counted once.
//
// Exceptions are judged with the queue's thresholds in force when the
// record is built: at query time while the job is held, when clean()
// stores it afterwards (LSF judges them once too, when it logs the job).

// acctPage bounds the records of one streamed Accounting reply.
const acctPage = 1000

// acctRecord builds the accounting record of a job that has just finished:
// j is its finished record, eff its effective spec.
func acctRecord(conf *config.Config, j *api.Job, eff *effSpec) *api.Job {
	rec := &api.Job{
		JobId:         j.JobId,
		ArrayIndex:    j.ArrayIndex,
		State:         j.State,
		SubmitTime:    j.SubmitTime,
		StartTime:     j.StartTime,
		EndTime:       j.EndTime,
		ExecHosts:     j.ExecHosts,
		ExitStatus:    j.ExitStatus,
		TermReason:    j.TermReason,
		TermReasonSet: j.TermReasonSet,
		ExecHome:      j.ExecHome,
		ExecCwd:       j.ExecCwd,
		ArraySize:     j.ArraySize,
		ArrayEnd:      j.ArrayEnd,
		ArrayStep:     j.ArrayStep,
		AllocSlots:    j.AllocSlots,
		KillReason:    j.KillReason,
		PostExec:      j.PostExec,
	}
	if rec.EndTime == 0 {
		rec.EndTime = time.Now().UnixNano()
	}
	if u := j.Usage; u != nil {
		// The totals, not the last sample's process list.
		rec.Usage = &api.ResourceUsage{
			CpuTimeMs: u.CpuTimeMs, MaxMemKb: u.MaxMemKb, AvgMemKb: u.AvgMemKb,
			SwapKb: u.SwapKb, Nthreads: u.Nthreads, Nprocs: u.Nprocs,
		}
	}
	rec.Exceptions = api.ExceptionBits(jobExceptions(rec, rec.GetUsage().GetCpuTimeMs(),
		time.Duration(eff.GetEstimatedRunSec())*time.Second, rulesOf(conf, eff.GetQueue()), time.Now()))
	if eff != nil {
		rec.Effective = &api.JobSpec{
			Queue:           eff.queue,
			User:            eff.user,
			Uid:             eff.uid,
			JobName:         eff.jobName,
			Project:         eff.project,
			App:             eff.app,
			UserGroup:       eff.GetUserGroup(),
			JobGroup:        eff.GetJobGroup(),
			MinTasks:        eff.minTasks,
			MaxTasks:        eff.maxTasks,
			RunLimitSec:     eff.runLimit,
			EstimatedRunSec: eff.GetEstimatedRunSec(),
			Description:     eff.GetDescription(),
		}
		if eff.resReq != "" {
			rec.Effective.ResReq = []string{eff.resReq}
		}
	}
	return rec
}

// acctRequeued gives each change that sends a finished job back to
// pending (brequeue of a DONE or EXIT job) the accounting record of the
// finish it overwrites (c.mu held, before the changes are written). Jobs
// that finish are accounted later, by clean().
func (c *Controller) acctRequeued(changes []store.Change) {
	for i := range changes {
		ch := &changes[i]
		r := c.jobs[key{ch.Job.JobId, ch.Job.ArrayIndex}]
		if r == nil || !isFinished(r.job.State) || isFinished(ch.Job.State) {
			continue
		}
		ch.Acct = acctRecord(c.config(), r.job, r.eff)
	}
}

// finishedRecords builds the accounting records of finished jobs (c.mu
// held).
func (c *Controller) finishedRecords(jobs []*api.Job) []*api.Job {
	conf := c.config()
	var recs []*api.Job
	for _, j := range jobs {
		if !isFinished(j.State) {
			continue
		}
		var eff *effSpec
		if els := c.elements(j.JobId); len(els) > 0 {
			eff = els[0].eff // an array's elements share it
		}
		recs = append(recs, acctRecord(conf, j, eff))
	}
	return recs
}

// accountMissing stores the records of finished jobs that have none yet.
func (c *Controller) accountMissing(recs []*api.Job) error {
	if len(recs) == 0 {
		return nil
	}
	n, err := c.store.AddAcct(recs)
	if err != nil {
		return fmt.Errorf("store accounting records: %w", err)
	}
	if n > 0 {
		slog.Info("accounted finished jobs that had no accounting record", "jobs", n)
	}
	return nil
}

// pruneAcct deletes the accounting records older than the retention.
func (c *Controller) pruneAcct(now time.Time) {
	cl := c.config().Cluster
	// Never less than the clean period (xced --clean-period may exceed
	// the configured retention).
	keep := time.Duration(max(cl.AcctRetention, cl.CleanPeriod)) * time.Second
	if keep <= 0 {
		return
	}
	n, err := c.store.PruneAcct(now.Add(-keep).UnixNano())
	if err != nil {
		slog.Error("prune accounting records", "err", err)
		return
	}
	if n > 0 {
		slog.Info("pruned accounting records", "records", n, "older_than", now.Add(-keep).Format(time.RFC3339))
	}
}

// acctFilter is bacct's selection, compiled once per request.
type acctFilter struct {
	who        Caller
	allUsers   bool
	users      map[string]bool // nil: the caller's (unless allUsers)
	queues     map[string]bool
	projects   map[string]bool
	hosts      map[string]bool
	app, name  string
	userGroup  string
	group      string
	states     []api.JobState
	exceptions bool
	submitted  *api.TimeRange
	dispatched *api.TimeRange
}

func set(items []string) map[string]bool {
	if len(items) == 0 {
		return nil
	}
	m := map[string]bool{}
	for _, s := range items {
		m[s] = true
	}
	return m
}

func newAcctFilter(conf *config.Config, who Caller, req *api.AcctRequest) *acctFilter {
	f := &acctFilter{
		who:        who,
		allUsers:   req.AllUsers,
		users:      set(req.Users),
		queues:     set(req.Queues),
		projects:   set(req.Projects),
		app:        req.App,
		name:       req.Name,
		userGroup:  req.UserGroup,
		group:      api.JobGroupPath(req.JobGroup),
		states:     req.States,
		exceptions: req.Exceptions,
		submitted:  req.Submitted,
		dispatched: req.Dispatched,
	}
	if len(req.Hosts) > 0 {
		f.hosts = set(conf.ExpandHosts(req.Hosts))
		for _, h := range req.Hosts {
			f.hosts[h] = true // a host the configuration does not list
		}
	}
	return f
}

func inRange(r *api.TimeRange, t int64) bool {
	return r == nil || (t != 0 && t >= r.Start && (r.End == 0 || t <= r.End))
}

// match applies the filter to a record; a job named by id is selected
// whoever owns it, as bjobs does.
func (f *acctFilter) match(j *api.Job, named bool) bool {
	e := j.GetEffective()
	if !named && !f.allUsers {
		if f.users != nil {
			if !f.users[e.GetUser()] {
				return false
			}
		} else if e.GetUid() != f.who.UID {
			return false
		}
	}
	if f.queues != nil && !f.queues[e.GetQueue()] {
		return false
	}
	if f.projects != nil && !f.projects[e.GetProject()] {
		return false
	}
	if f.app != "" && e.GetApp() != f.app {
		return false
	}
	if f.hosts != nil && !slices.ContainsFunc(j.ExecHosts, func(h *api.HostSlots) bool { return f.hosts[h.Host] }) {
		return false
	}
	if f.name != "" {
		s := j.GetSpec()
		if s == nil {
			s = e
		}
		name := s.GetJobName()
		if name == "" {
			name = s.GetCommand()
		}
		if !namePatternMatches(f.name, name, j.ArrayIndex) {
			return false
		}
	}
	if f.userGroup != "" && e.GetUserGroup() != f.userGroup {
		return false
	}
	if f.group != "" && !inGroup(e.GetJobGroup(), f.group, true) {
		return false
	}
	if len(f.states) > 0 && !slices.Contains(f.states, j.State) {
		return false
	}
	if f.exceptions && j.Exceptions == 0 {
		return false
	}
	return inRange(f.submitted, j.SubmitTime) && inRange(f.dispatched, j.StartTime)
}

// acctKey identifies one finish of a job.
type acctKey struct {
	id  int64
	idx int32
	end int64
}

// Accounting answers bacct: the accounting records that match req, in the
// order the jobs ended (for job ids, in the order named, each job's in end
// order), handed to send a page at a time. The finished jobs the
// controller still holds are accounted from memory, the others from the
// store, read one page per transaction so that a slow reader holds
// nothing.
func (c *Controller) Accounting(who Caller, req *api.AcctRequest, send func(*api.AcctReply) error) error {
	conf := c.config()
	f := newAcctFilter(conf, who, req)
	page := &api.AcctReply{}
	flush := func() error {
		if len(page.Jobs) == 0 && len(page.NotFound) == 0 {
			return nil
		}
		err := send(page)
		page = &api.AcctReply{}
		return err
	}
	specs := map[int64]*api.JobSpec{}
	admin := c.isAdmin(who.UID)
	keep := func(j *api.Job) {
		if !req.Specs {
			j.Spec, j.Effective = nil, nil
		}
		page.Jobs = append(page.Jobs, j)
	}
	// The jobs held now, by ref (or all of them): their records and, for
	// the refs, whether the controller knows the job at all.
	held := func(refs []*api.JobRef) ([]*api.Job, []bool) {
		// Records are immutable and effective specs replaced, not
		// changed: the lock is held only to collect pointers.
		type pair struct {
			job *api.Job
			eff *effSpec
		}
		var found []pair
		known := make([]bool, len(refs))
		c.mu.Lock()
		if refs == nil {
			for _, r := range c.jobs {
				if isFinished(r.job.State) {
					found = append(found, pair{r.job, r.eff})
				}
			}
		}
		for i, ref := range refs {
			for _, r := range c.resolve(ref) {
				known[i] = true
				if isFinished(r.job.State) {
					found = append(found, pair{r.job, r.eff})
				}
			}
		}
		c.mu.Unlock()
		jobs := make([]*api.Job, len(found))
		for i, p := range found {
			jobs[i] = acctRecord(conf, p.job, p.eff)
		}
		return jobs, known
	}
	// live keeps the held records that match, in end order, with their
	// submitted specs when asked for.
	live := func(jobs []*api.Job, named bool) ([]*api.Job, map[acctKey]bool) {
		seen := map[acctKey]bool{}
		out := jobs[:0]
		for _, j := range jobs {
			seen[acctKey{j.JobId, j.ArrayIndex, j.EndTime}] = true
			if req.Specs {
				spec, ok := specs[j.JobId]
				if !ok {
					spec = &api.JobSpec{}
					if raw, err := c.store.SubmittedRaw(j.JobId); err == nil {
						if err := proto.Unmarshal(raw, spec); err != nil {
							spec = nil
						}
					}
					if spec != nil && spec.Uid != who.UID && !admin {
						// Another user's environment is not the
						// caller's to see (as bjobs -env).
						spec.Env, spec.EnvSpec = nil, ""
					}
					specs[j.JobId] = spec
				}
				j.Spec = spec
			}
			if f.match(j, named) && inRange(req.Completed, j.EndTime) {
				out = append(out, j)
			}
		}
		sortByEnd(out)
		return out, seen
	}
	if len(req.Refs) > 0 {
		for _, ref := range req.Refs {
			jobs, known := held([]*api.JobRef{ref})
			mem, seen := live(jobs, true)
			recs, err := c.store.AcctOf(ref.JobId, ref.ArrayIndex)
			if err != nil {
				return err
			}
			if len(recs) == 0 && !known[0] {
				page.NotFound = append(page.NotFound, ref)
			}
			stored := recs[:0]
			for _, j := range recs {
				if !seen[acctKey{j.JobId, j.ArrayIndex, j.EndTime}] && f.match(j, true) && inRange(req.Completed, j.EndTime) {
					stored = append(stored, j)
				}
			}
			all := append(stored, mem...)
			sortByEnd(all)
			for _, j := range all {
				keep(j)
			}
			if len(page.Jobs) >= acctPage {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	}
	jobs, _ := held(nil)
	mem, seen := live(jobs, false)
	var from, to int64
	if r := req.Completed; r != nil {
		from, to = r.Start, r.End
		if to == 0 {
			to = 1<<63 - 1
		}
	}
	var cursor []byte
	for {
		next, err := c.store.ScanAcct(cursor, from, to, req.Specs || req.Name != "", func(j *api.Job) bool {
			if seen[acctKey{j.JobId, j.ArrayIndex, j.EndTime}] || !f.match(j, false) {
				return false
			}
			// Held jobs that ended earlier go first.
			for len(mem) > 0 && endsBefore(mem[0], j) {
				keep(mem[0])
				mem = mem[1:]
			}
			keep(j)
			return len(page.Jobs) >= acctPage
		})
		if err != nil {
			return err
		}
		if next == nil {
			break
		}
		if err := flush(); err != nil {
			return err
		}
		cursor = next
	}
	for _, j := range mem {
		keep(j)
		if len(page.Jobs) >= acctPage {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// endsBefore orders records as the store keys them: end, job, element.
func endsBefore(a, b *api.Job) bool {
	if a.EndTime != b.EndTime {
		return a.EndTime < b.EndTime
	}
	if a.JobId != b.JobId {
		return a.JobId < b.JobId
	}
	return a.ArrayIndex < b.ArrayIndex
}

func sortByEnd(jobs []*api.Job) {
	slices.SortFunc(jobs, func(a, b *api.Job) int {
		switch {
		case endsBefore(a, b):
			return -1
		case endsBefore(b, a):
			return 1
		}
		return 0
	})
}

// Accounting streams bacct's records, a page a message.
func (s *Service) Accounting(req *api.AcctRequest, stream grpc.ServerStreamingServer[api.AcctReply]) error {
	who, err := caller(stream.Context())
	if err != nil {
		return err
	}
	if err := s.c.Accounting(who, req, stream.Send); err != nil {
		if stream.Context().Err() != nil {
			return err // the reader went away
		}
		slog.Error("read accounting records", "err", err)
		return toStatus(err)
	}
	return nil
}
