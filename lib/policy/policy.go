// Package policy owns what the controller derives, for lib/sched, from the
// cluster's configuration and a job's submission: the queues, limits,
// shared resources and groups of a snapshot, the effective spec a
// submission gets (the layering, with the controller's defaults), the
// fairshare account a job is charged to, the sched.Job and sched.Alloc of
// a job, and the configured limits checked at the start of a cycle. It is
// pure: the live controller and the simulator (lib/sim) call the same
// functions, so that a simulated schedule is the controller's.
package policy

import (
	"log/slog"
	"slices"
	"time"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/gpu"
	"xce/lib/resreq"
	"xce/lib/sched"
)

// Queues are the configuration's queues as lib/sched reads them, in the
// configuration's order; usage is each fairshare queue's past use per
// account (nil: none).
func Queues(conf *config.Config, usage map[string]map[string]sched.FairUsage) []sched.Queue {
	names := conf.QueueNames()
	out := make([]sched.Queue, 0, len(names))
	for _, name := range names {
		q := conf.Queues[name]
		sq := sched.Queue{
			Name:          name,
			Priority:      q.Priority,
			Hosts:         q.Hosts,
			SlotLimit:     q.MaxSlots,
			UserSlotLimit: q.MaxSlotsPerUser,
			HostSlotLimit: q.MaxSlotsPerHost,
			SlotReserve:   q.SlotReserve,
			Preempt:       queuePreempt(conf, q),
		}
		if len(q.Fairshare) > 0 {
			sq.Fairshare = &sched.Fairshare{Shares: q.Fairshare, Usage: usage[name]}
		}
		out = append(out, sq)
	}
	return out
}

// Limits are the configuration's [[limits]] in file order (sched.Limits
// relies on them coming first in a snapshot), then the projects' quotas.
func Limits(conf *config.Config) []sched.Limit {
	out := ConfigLimits(conf)
	for _, name := range sortedKeys(conf.Projects) {
		p := conf.Projects[name]
		l := sched.Limit{Name: "project " + name, Projects: []string{name}, Slots: p.MaxSlots}
		if p.MaxMem > 0 {
			l.Resources = map[string]float64{"mem": float64(p.MaxMem) / 1024}
		}
		if l.Slots > 0 || l.Resources != nil {
			out = append(out, l)
		}
	}
	return out
}

// ConfigLimits are the configuration's [[limits]] as lib/sched reads them,
// in file order.
func ConfigLimits(conf *config.Config) []sched.Limit {
	out := make([]sched.Limit, 0, len(conf.Limits))
	for _, l := range conf.Limits {
		sl := sched.Limit{
			Name: l.Name, Users: l.Users, Queues: l.Queues, Projects: l.Projects, Apps: l.Apps, LicProjects: l.LicProjects,
			Hosts: l.Hosts, PerUsers: l.PerUser, PerQueues: l.PerQueue, PerProjects: l.PerProject, PerApps: l.PerApp,
			PerLicProjects: l.PerLicProject, PerHosts: l.PerHost, SlotsPerProcessor: l.SlotsPerProcessor,
			Slots: limitCount(l.Slots), Jobs: limitCount(l.Jobs),
		}
		for r, v := range l.Resources {
			if sl.Resources == nil {
				sl.Resources = map[string]float64{}
			}
			sl.Resources[r] = v
		}
		for r, a := range l.Amounts {
			if a.Percent > 0 {
				if sl.HostPercent == nil {
					sl.HostPercent = map[string]float64{}
				}
				sl.HostPercent[r] = a.Percent
				continue
			}
			if sl.Resources == nil {
				sl.Resources = map[string]float64{}
			}
			sl.Resources[r] = a.MB
		}
		out = append(out, sl)
	}
	return out
}

// limitCount is SLOTS or JOBS for lib/sched: 0 there means no limit, so
// LSF's 0 (nothing may run) is sched.NoneAllowed.
func limitCount(v *int) int {
	switch {
	case v == nil:
		return 0
	case *v == 0:
		return sched.NoneAllowed
	}
	return *v
}

// Shared are the totals of the cluster-wide resources (license tokens).
func Shared(conf *config.Config) map[string]float64 {
	out := map[string]float64{}
	for name, r := range conf.Resources {
		if r.Total > 0 {
			out[name] = float64(r.Total)
		}
	}
	return out
}

// HostGroups maps each host group to its members.
func HostGroups(conf *config.Config) map[string][]string {
	out := make(map[string][]string, len(conf.HostGroups))
	for name, g := range conf.HostGroups {
		out[name] = g.Members
	}
	return out
}

// UserGroups maps each user group to its members; nil when there is none.
func UserGroups(conf *config.Config) map[string][]string {
	if len(conf.UserGroups) == 0 {
		return nil
	}
	out := make(map[string][]string, len(conf.UserGroups))
	for name, g := range conf.UserGroups {
		out[name] = g.Members
	}
	return out
}

// FairAccount is the fairshare account a job is charged to in its queue:
// the user group it named with -G when that group holds shares there (as
// LSF charges a -G job to the group's share account), else "" for the
// job's user.
func FairAccount(conf *config.Config, queue, userGroup string) string {
	if userGroup == "" {
		return ""
	}
	if q := conf.Queues[queue]; q != nil {
		if _, ok := q.Fairshare[userGroup]; ok {
			return userGroup
		}
	}
	return ""
}

// Layer lays a configuration over a submission (with its environment) and
// returns the effective spec without the environment, with the
// controller's defaults (at least one task), the exec chain the worker
// runs, the origins bjobs -l shows and the limits a cycle checks. Its
// errors are lib/config's *config.Rejection.
func Layer(conf *config.Config, spec *api.JobSpec, admin bool) (*config.Result, *api.JobSpec, error) {
	res, err := config.LayerFor(spec, conf, admin)
	if err != nil {
		return nil, nil, err
	}
	eff := res.Effective
	eff.Env, eff.EnvRef = nil, nil // the environment stays with the submitted spec
	if eff.MinTasks <= 0 {
		eff.MinTasks = 1
	}
	if eff.MaxTasks < eff.MinTasks {
		eff.MaxTasks = eff.MinTasks
	}
	eff.PreExecChain, eff.PostExecChain = res.Exec.PreExec, res.Exec.PostExec
	eff.JobStarter, eff.EnvOverlay = res.Exec.JobStarter, res.Exec.Env
	eff.Container, eff.ExecDriver = res.Exec.Container, res.Exec.ExecDriver
	eff.Origin, eff.PendLimits = map[string]string{}, nil // the layering's alone
	for field, o := range res.Origin {
		eff.Origin[field] = o.String()
	}
	for _, p := range res.Pend {
		eff.PendLimits = append(eff.PendLimits, &api.PendLimit{
			Kind: pendKind[p.Kind], Name: p.Name, Max: p.Max, Need: p.Need, Reason: p.Reason,
		})
	}
	return res, eff, nil
}

var pendKind = map[config.LimitKind]api.PendLimit_Kind{
	config.QueueSlots:     api.PendLimit_QUEUE_SLOTS,
	config.QueueUserSlots: api.PendLimit_QUEUE_USER_SLOTS,
	config.QueueHostSlots: api.PendLimit_QUEUE_HOST_SLOTS,
	config.ProjectSlots:   api.PendLimit_PROJECT_SLOTS,
	config.ProjectMem:     api.PendLimit_PROJECT_MEM,
	config.ProjectGPUs:    api.PendLimit_PROJECT_GPUS,
	config.SharedResource: api.PendLimit_SHARED_RESOURCE,
	config.UserSlots:      api.PendLimit_USER_SLOTS,
}

// Spec is what Job and Alloc read of an effective spec: *api.JobSpec
// has these getters, and so has the controller's compact form.
type Spec interface {
	GetUser() string
	GetQueue() string
	GetProject() string
	GetApp() string
	GetUserGroup() string
	GetMinTasks() int32
	GetMaxTasks() int32
	GetExclusive() bool
	GetUserPriority() int32
	GetRunLimitSec() int64
	GetGpu() string
}

// Job is a pending job as lib/sched places it: req is its parsed
// effective requirement (nil: none), hosts its -m list (with any hosts an
// old instance still ends on).
func Job(conf *config.Config, k sched.JobKey, e Spec, req *resreq.ResReq, local resreq.Local, hosts []string, submit time.Time) sched.Job {
	return sched.Job{
		Key:  k,
		User: e.GetUser(), Queue: e.GetQueue(), Project: e.GetProject(), App: e.GetApp(),
		Account:  FairAccount(conf, e.GetQueue(), e.GetUserGroup()),
		Req:      req,
		Local:    local,
		MinSlots: int(e.GetMinTasks()), MaxSlots: int(e.GetMaxTasks()),
		Hosts:     hosts,
		Exclusive: e.GetExclusive(),
		Priority:  int(e.GetUserPriority()),
		Submit:    submit,
		RunLimit:  time.Duration(e.GetRunLimitSec()) * time.Second,
		GPU:       GPUReq(e.GetGpu()),
	}
}

// Alloc is a running job as lib/sched accounts it; its Hosts are the
// caller's (HostAllocs).
func Alloc(conf *config.Config, k sched.JobKey, e Spec, start time.Time) sched.Alloc {
	return sched.Alloc{
		Job: k, User: e.GetUser(),
		Account: FairAccount(conf, e.GetQueue(), e.GetUserGroup()),
		Queue:   e.GetQueue(), Project: e.GetProject(), App: e.GetApp(), Exclusive: e.GetExclusive(),
		Start: start, RunLimit: time.Duration(e.GetRunLimitSec()) * time.Second,
	}
}

// Rusage is what a running job reserves on each of its hosts: the first
// alternative of its requirement's rusage (nil: none).
func Rusage(req *resreq.ResReq) resreq.UsageSet {
	if req != nil && req.Simple != nil && req.Simple.Rusage != nil && len(req.Simple.Rusage.Or) > 0 {
		return req.Simple.Rusage.Or[0]
	}
	return nil
}

// GPUReq is an effective GPU requirement as lib/sched reads it (nil:
// none). The layering checked it at submission.
func GPUReq(s string) *sched.GPUReq {
	if s == "" {
		return nil
	}
	r, err := gpu.Parse(s)
	if err != nil {
		slog.Warn("effective GPU requirement does not parse", "gpu", s, "err", err)
		return nil
	}
	return r.Sched()
}

// limitKey names what a configured limit counts: a queue's, a user's in a
// queue, a project's or a shared resource's use.
type limitKey struct {
	kind api.PendLimit_Kind
	name string
	user string // QUEUE_USER_SLOTS and USER_SLOTS only
}

// LimitUse is what the started jobs take from each configured limit the
// layering gave them (api.JobSpec.PendLimits), checked at the start of a
// cycle before lib/sched places anything.
type LimitUse map[limitKey]int64

func keyOf(p *api.PendLimit, user string) limitKey {
	k := limitKey{kind: p.Kind, name: p.Name}
	switch p.Kind {
	case api.PendLimit_QUEUE_USER_SLOTS, api.PendLimit_USER_SLOTS:
		k.user = user
	}
	return k
}

// amount is what a job takes from one of its limits: its slots for slot
// limits, what the layering computed otherwise.
func amount(p *api.PendLimit, slots int) int64 {
	switch p.Kind {
	case api.PendLimit_QUEUE_SLOTS, api.PendLimit_QUEUE_USER_SLOTS, api.PendLimit_QUEUE_HOST_SLOTS,
		api.PendLimit_PROJECT_SLOTS, api.PendLimit_USER_SLOTS:
		return int64(slots)
	}
	return p.Need
}

// clusterWide reports whether a limit is counted over the whole cluster.
// A queue's per-host slot limit is not: lib/sched holds it on each host
// (sched.Queue.HostSlotLimit), and counted here it capped the queue's
// slots in the whole cluster at the per-host figure.
func clusterWide(p *api.PendLimit) bool {
	return p.Kind != api.PendLimit_QUEUE_HOST_SLOTS
}

// Take counts a job of user holding slots against its limits.
func (u LimitUse) Take(limits []*api.PendLimit, user string, slots int) {
	for _, p := range limits {
		if clusterWide(p) {
			u[keyOf(p, user)] += amount(p, slots)
		}
	}
}

// Blocked is the reason one of its limits holds a job of user needing
// need slots now, "" when none does.
func (u LimitUse) Blocked(limits []*api.PendLimit, user string, need int) string {
	for _, p := range limits {
		if clusterWide(p) && u[keyOf(p, user)]+amount(p, need) > p.Max {
			return p.Reason
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// AddFinished adds a finished job's use to its fairshare account's past
// usage: its CPU time, its run time times its slots, as of the latest end.
// lib/sched decays it to each cycle's time.
func AddFinished(u sched.FairUsage, cpu time.Duration, start, end time.Time, slots int) sched.FairUsage {
	u.CPU += cpu
	u.Run += end.Sub(start) * time.Duration(max(slots, 1))
	if end.After(u.At) {
		u.At = end
	}
	return u
}
