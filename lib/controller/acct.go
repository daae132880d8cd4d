package controller

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"google.golang.org/grpc"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/store"
)

// Accounting (bacct). Every finish of a job or array element leaves an
// accounting record in the store (lib/store's acct.go), kept for the
// cluster's acct_retention long after clean() has forgotten the job: an
// api.Job with its times, hosts, exit status and reason, resource usage
// and the exceptions it showed, its submitted spec, and an effective spec
// cut down to what accounting reports (user, queue, project, application,
// groups, resource requirement, tasks, limits).
//
// The record rides in the change that finishes the job (commit adds it),
// so it costs the finish path no write of its own: it is built from memory
// and the store copies the submitted spec into it in the same
// transaction. clean() and restore() also write, for the finished jobs
// they handle, any record that is missing (jobs that ended under a
// controller without accounting), so a job is accounted at the latest
// when it is forgotten.
//
// Exceptions are judged once, when the job finishes, with its queue's
// thresholds then (LSF's lsb.acct records them the same way); bjobs -x
// -a judges recently finished jobs with the thresholds in force.

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
	rec.Exceptions = jobExceptions(rec, rec.GetUsage().GetCpuTimeMs(),
		time.Duration(eff.GetEstimatedRunSec())*time.Second, rulesOf(conf, eff.GetQueue()), time.Now())
	if eff != nil {
		rec.Effective = &api.JobSpec{
			Queue:           eff.queue,
			User:            eff.user,
			Uid:             eff.uid,
			JobName:         eff.jobName,
			Project:         eff.project,
			App:             eff.app,
			UserGroup:       eff.userGroup,
			JobGroup:        eff.jobGroup,
			MinTasks:        eff.minTasks,
			MaxTasks:        eff.maxTasks,
			RunLimitSec:     eff.runLimit,
			EstimatedRunSec: eff.estRun,
			Description:     eff.desc,
		}
		if eff.resReq != "" {
			rec.Effective.ResReq = []string{eff.resReq}
		}
	}
	return rec
}

// addAcct gives each change that finishes a job its accounting record
// (c.mu held, before the changes are written). A change finishes a job
// when its state is DONE or EXIT and the job's was not, in memory or in
// an earlier change of the same batch.
func (c *Controller) addAcct(changes []store.Change) {
	var conf *config.Config
	var staged map[key]api.JobState
	var effs map[int64]*effSpec // effective specs the batch replaces
	for i := range changes {
		ch := &changes[i]
		j := ch.Job
		k := key{j.JobId, j.ArrayIndex}
		if ch.EffectiveRaw != nil {
			if eff, err := decodeEffSpec(ch.EffectiveRaw); err == nil {
				if effs == nil {
					effs = map[int64]*effSpec{}
				}
				effs[j.JobId] = eff
			}
		}
		r := c.jobs[k]
		if r == nil {
			continue
		}
		was, ok := staged[k]
		if !ok {
			was = r.job.State
		}
		if staged == nil {
			staged = map[key]api.JobState{}
		}
		staged[k] = j.State
		if !isFinished(j.State) || isFinished(was) {
			continue
		}
		eff := r.eff
		if e := effs[j.JobId]; e != nil {
			eff = e
		}
		if conf == nil {
			conf = c.config()
		}
		ch.Acct = acctRecord(conf, j, eff)
	}
}

// finishedRecords builds the accounting records of finished jobs (c.mu
// held), for accountMissing.
func (c *Controller) finishedRecords(jobs []*api.Job) []*api.Job {
	conf := c.config()
	var recs []*api.Job
	for _, j := range jobs {
		if !isFinished(j.State) {
			continue
		}
		var eff *effSpec
		if els := c.byID[j.JobId]; len(els) > 0 {
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
	if f.exceptions && len(j.Exceptions) == 0 {
		return false
	}
	return inRange(f.submitted, j.SubmitTime) && inRange(f.dispatched, j.StartTime)
}

// Accounting answers bacct: the accounting records that match req, in the
// order the jobs ended (for job ids, in the order named), handed to send
// a page at a time. The store is read one page per transaction, so a slow
// reader holds nothing.
func (c *Controller) Accounting(who Caller, req *api.AcctRequest, send func(*api.AcctReply) error) error {
	f := newAcctFilter(c.config(), who, req)
	page := &api.AcctReply{}
	flush := func() error {
		if len(page.Jobs) == 0 && len(page.NotFound) == 0 {
			return nil
		}
		err := send(page)
		page = &api.AcctReply{}
		return err
	}
	keep := func(j *api.Job) {
		if !req.Specs {
			j.Spec, j.Effective = nil, nil
		}
		page.Jobs = append(page.Jobs, j)
	}
	if len(req.Refs) > 0 {
		for _, ref := range req.Refs {
			recs, err := c.store.AcctOf(ref.JobId, ref.ArrayIndex)
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				page.NotFound = append(page.NotFound, ref)
			}
			for _, j := range recs {
				if f.match(j, true) && inRange(req.Completed, j.EndTime) {
					keep(j)
				}
			}
			if len(page.Jobs) >= acctPage {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	}
	var from, to int64
	if r := req.Completed; r != nil {
		from, to = r.Start, r.End
		if to == 0 {
			to = 1<<63 - 1
		}
	}
	var cursor []byte
	for {
		next, err := c.store.ScanAcct(cursor, from, to, func(j *api.Job) bool {
			if f.match(j, false) {
				keep(j)
			}
			return len(page.Jobs) >= acctPage
		})
		if err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		cursor = next
	}
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
