package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/gpu"
	"xce/lib/resreq"
)

// Source is a layer an effective value can come from.
type Source uint8

// Sources, innermost first.
const (
	FromJob     Source = iota + 1 // the job's own option
	FromProfile                   // its application profile (-app, or cluster.default_app)
	FromQueue                     // its queue
	FromProject                   // its project
	FromDefault                   // the cluster's defaults or XCE's built-in ones
)

func (s Source) String() string {
	switch s {
	case FromJob:
		return "job"
	case FromProfile:
		return "profile"
	case FromQueue:
		return "queue"
	case FromProject:
		return "project"
	case FromDefault:
		return "default"
	}
	return "unknown"
}

// Part is one layer's contribution to an effective value.
type Part struct {
	Source Source
	Name   string // the profile, queue or project; "" for job and default
	// Deprecated marks a queue-level res_req, pre_exec or post_exec, kept
	// for configurations imported from LSF.
	Deprecated bool
}

// String returns "job", "profile fluent", "queue short (deprecated)".
func (p Part) String() string {
	s := p.Source.String()
	if p.Name != "" {
		s += " " + p.Name
	}
	if p.Deprecated {
		s += " (deprecated)"
	}
	return s
}

// Origin says where an effective value came from: one part for most
// values; every contributing layer, innermost first, for a merged one
// (res_req, pre_exec, post_exec).
type Origin []Part

// String returns the parts joined by " + ": "job + profile fluent".
func (o Origin) String() string {
	s := make([]string, len(o))
	for i, p := range o {
		s[i] = p.String()
	}
	return strings.Join(s, " + ")
}

// Deprecated reports whether part of the value comes from a deprecated
// queue-level setting.
func (o Origin) Deprecated() bool {
	return slices.ContainsFunc(o, func(p Part) bool { return p.Deprecated })
}

// Result is a submission after layering.
type Result struct {
	// Effective is the submission with every layered value resolved:
	// queue, app, project, min_tasks, max_tasks, res_req (one merged,
	// canonical string; none when no layer has a requirement),
	// run_limit_sec and mem_limit_kb. pre_exec and post_exec stay the
	// job's own (the inner layer); Exec has the full sequence. Every other
	// field is copied from the submission.
	Effective *api.JobSpec
	// Origin has, for every layered value that is set, where it came
	// from, keyed by the JobSpec field name ("queue", "app", "project",
	// "min_tasks", "max_tasks", "res_req", "run_limit_sec",
	// "mem_limit_kb", "pre_exec", "post_exec") or by the Exec field name
	// ("job_starter", "env").
	Origin map[string]Origin
	// Exec is how the job runs: what the worker needs beyond the spec.
	Exec Exec
	// Pend are the limits and quotas the scheduler must check before it
	// starts the job. Each can hold the job only for now: Layer has
	// already rejected a job that exceeds one on its own.
	Pend []PendCheck
}

// Exec is what runs around the job and in its environment.
type Exec struct {
	// PreExec are the pre-execution commands in the order they run: the
	// queue's (deprecated), the profile's, the job's own -E. PostExec are
	// the post-execution commands in the order they run: the job's -Ep,
	// the profile's, the queue's (deprecated).
	PreExec  []string
	PostExec []string
	// JobStarter wraps the job's command ("" = none); %USRCMD in it
	// stands for the command.
	JobStarter string
	// Env are NAME=VALUE settings to apply over the job's own
	// environment, sorted by name.
	Env []string
	// Container is the profile's container value in canonical form
	// (lib/container), "" for none; ExecDriver its exec_driver.
	Container, ExecDriver string
}

// LimitKind is what a PendCheck limits.
type LimitKind uint8

// Limit kinds.
const (
	QueueSlots     LimitKind = iota + 1 // queues.Q.max_slots: slots of the queue's started jobs
	QueueUserSlots                      // queues.Q.max_slots_per_user: the user's slots in the queue
	QueueHostSlots                      // queues.Q.max_slots_per_host: the queue's slots on each host
	ProjectSlots                        // projects.P.max_slots
	ProjectMem                          // projects.P.max_mem, in KB
	ProjectGPUs                         // projects.P.max_gpus
	SharedResource                      // resources.R.total, in the resource's units
	UserSlots                           // users.U.max_slots: the user's slots in all queues
)

// PendCheck is a limit the scheduler must check when it considers
// starting the job: while what is in use already plus Need exceeds Max,
// the job pends with Reason (as bjobs -p shows it).
type PendCheck struct {
	Kind LimitKind
	Name string // the queue, project or shared resource
	Max  int64  // the limit: slots, KB, GPUs or resource units
	// Need is what the job takes from the limit when it starts: its
	// minimum slots, its memory in KB, its GPUs per host, or its rusage
	// of the shared resource.
	Need int64
	// PerHost: the limit applies to each execution host on its own
	// (QueueHostSlots); Reason is then a host-level reason.
	PerHost bool
	Reason  string
}

// Blocks reports whether the job must pend when inUse is already taken
// from the limit (on the host in question, for a PerHost check).
func (p PendCheck) Blocks(inUse int64) bool { return inUse+p.Need > p.Max }

// Rejection is a submission Layer refuses; Msg is the text bsub prints
// before ". Job not submitted." (the text does not end with a period).
type Rejection struct {
	Msg string
}

func (r *Rejection) Error() string { return r.Msg }

func reject(format string, a ...any) error { return &Rejection{Msg: fmt.Sprintf(format, a...)} }

// Layer turns a submission into its effective spec (DESIGN.md,
// configuration layering). It is pure: it reads sub and cfg and modifies
// neither; cfg comes from Load or Default. The submission's identity
// fields (user) should be filled in; its env is read for the profile's env
// layering. Every error is a *Rejection.
func Layer(sub *api.JobSpec, cfg *Config) (*Result, error) { return LayerFor(sub, cfg, false) }

// LayerFor is Layer for a submitter the caller knows to be a cluster
// administrator (admin) beyond cluster.administrators (root, the
// controller's own user): as in LSF, an administrator may use every
// queue whatever its users list says.
func LayerFor(sub *api.JobSpec, cfg *Config, admin bool) (*Result, error) {
	if sub == nil {
		return nil, reject("No job specification")
	}
	l := &layering{
		sub:   sub,
		cfg:   cfg,
		admin: admin,
		res:   &Result{Effective: proto.Clone(sub).(*api.JobSpec), Origin: map[string]Origin{}},

		ceilingOnly: map[string]bool{},
	}
	for _, step := range []func() error{
		l.setQueue, l.setApp, l.setProject, l.checkExclusive, l.setExec, l.setResReq, l.checkCU, l.setTasks,
		l.setRunLimit, l.setMemLimit, l.setRequeue, l.setRerun, l.setGPU, l.checkShared, l.checkSlots,
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return l.res, nil
}

type layering struct {
	sub   *api.JobSpec
	cfg   *Config
	admin bool // the submitter administers the cluster (LayerFor)
	res   *Result

	q   *Queue
	app *App // nil without a profile
	prj *Project
	rr  *resreq.ResReq // the merged requirement

	// ceilingOnly marks limits that are the queue's ceiling because no
	// layer set a value.
	ceilingOnly map[string]bool
}

func (l *layering) eff() *api.JobSpec { return l.res.Effective }

func (l *layering) origin(field string, parts ...Part) { l.res.Origin[field] = parts }

func (l *layering) job() Part     { return Part{Source: FromJob} }
func (l *layering) profile() Part { return Part{Source: FromProfile, Name: l.app.Name} }
func (l *layering) queuePart() Part {
	return Part{Source: FromQueue, Name: l.q.Name}
}
func (l *layering) deprecated() Part {
	return Part{Source: FromQueue, Name: l.q.Name, Deprecated: true}
}

func (l *layering) pend(p PendCheck) { l.res.Pend = append(l.res.Pend, p) }

func (l *layering) setQueue() error {
	name, from := l.sub.Queue, l.job()
	if name == "" {
		name, from = l.cfg.Cluster.DefaultQueue, Part{Source: FromDefault}
	}
	l.q = l.cfg.Queues[name]
	if l.q == nil {
		return reject("%s: No such queue", name)
	}
	l.eff().Queue = name
	l.origin("queue", from)
	// LSF admits cluster administrators to every queue.
	if l.sub.User != "" && !l.admin && !l.cfg.IsAdmin(l.sub.User) && !l.cfg.UserIn(l.sub.User, l.q.Users) {
		return reject("%s: User cannot use the queue", name)
	}
	return nil
}

func (l *layering) setApp() error {
	name, from := l.sub.App, l.job()
	if name == "" {
		name, from = l.cfg.Cluster.DefaultApp, Part{Source: FromDefault}
	}
	if name == "" {
		return nil
	}
	l.app = l.cfg.Apps[name]
	if l.app == nil {
		return reject("%s: No such application profile", name)
	}
	l.eff().App = name
	l.origin("app", from)
	return nil
}

func (l *layering) setProject() error {
	name, from := l.sub.Project, l.job()
	if name == "" {
		name, from = l.cfg.Cluster.DefaultProject, Part{Source: FromDefault}
	}
	l.eff().Project = name
	l.origin("project", from)
	l.prj = l.cfg.Projects[name] // a project need not be configured
	return nil
}

// setRequeue chooses the requeue exit values: the job's own (-Q), else
// the profile's, else the queue's.
func (l *layering) setRequeue() error {
	switch {
	case l.sub.RequeueExitValues != "":
		l.origin("requeue_exit_values", l.job())
	case l.app != nil && l.app.RequeueExitValues != "":
		l.eff().RequeueExitValues = l.app.RequeueExitValues
		l.origin("requeue_exit_values", l.profile())
	case l.q.RequeueExitValues != "":
		l.eff().RequeueExitValues = l.q.RequeueExitValues
		l.origin("requeue_exit_values", l.queuePart())
	}
	return nil
}

func (l *layering) checkExclusive() error {
	if l.sub.Exclusive && !l.q.Exclusive {
		return reject("%s: Queue does not accept EXCLUSIVE jobs", l.q.Name)
	}
	return nil
}

// exec layers the pre/post-exec commands: queue (deprecated) outermost,
// then the profile, then the job's own.
func (l *layering) setExec() error {
	x := &l.res.Exec
	var pre, post Origin
	if l.q.PreExec != "" {
		x.PreExec = append(x.PreExec, l.q.PreExec)
		pre = append(pre, l.deprecated())
	}
	if l.app != nil {
		if !l.app.JobExecAllowed() {
			switch {
			case l.sub.PreExec != "":
				return reject("Application profile %s does not allow a job's own pre-execution command (-E)", l.app.Name)
			case l.sub.PostExec != "":
				return reject("Application profile %s does not allow a job's own post-execution command (-Ep)", l.app.Name)
			}
		}
		if l.app.PreExec != "" {
			x.PreExec = append(x.PreExec, l.app.PreExec)
			pre = append(pre, l.profile())
		}
		if l.app.PostExec != "" {
			x.PostExec = append(x.PostExec, l.app.PostExec)
			post = append(post, l.profile())
		}
		x.JobStarter = l.app.JobStarter
		if x.JobStarter != "" {
			l.origin("job_starter", l.profile())
		}
		if l.app.containerErr != nil {
			return containerReject(l.app)
		}
		var err error
		if x.Container, err = jobContainer(l.app, l.sub.Env); err != nil {
			return reject("%v", err)
		}
		if x.Container != "" {
			x.ExecDriver = l.app.ExecDriver
			l.origin("container", l.profile())
		}
		l.env()
	}
	if l.sub.PreExec != "" {
		x.PreExec = append(x.PreExec, l.sub.PreExec)
		pre = append(pre, l.job())
	}
	if l.sub.PostExec != "" {
		x.PostExec = append([]string{l.sub.PostExec}, x.PostExec...)
		post = append(post, l.job())
	}
	if l.q.PostExec != "" {
		x.PostExec = append(x.PostExec, l.q.PostExec)
		post = append(post, l.deprecated())
	}
	// Origins list the layers innermost first.
	slices.Reverse(pre)
	slices.SortStableFunc(post, func(a, b Part) int { return int(a.Source) - int(b.Source) })
	if len(pre) > 0 {
		l.origin("pre_exec", pre...)
	}
	if len(post) > 0 {
		l.origin("post_exec", post...)
	}
	return nil
}

// env layers the profile's environment: the job's own value of a
// variable wins unless the profile fixes env.
func (l *layering) env() {
	if len(l.app.Env) == 0 {
		return
	}
	own := map[string]bool{}
	if !l.app.IsFixed("env") {
		for _, kv := range l.sub.Env {
			name, _, _ := strings.Cut(kv, "=")
			own[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(l.app.Env)) {
		if !own[name] {
			l.res.Exec.Env = append(l.res.Exec.Env, name+"="+l.app.Env[name])
		}
	}
	if len(l.res.Exec.Env) > 0 {
		l.origin("env", l.profile())
	}
}

// resReq merges the job's -R with the profile's requirement
// (resreq.MergeProfile) and, for imported configurations, the queue's
// (resreq.MergeLSF).
func (l *layering) setResReq() error {
	var parts Origin
	var job *resreq.ResReq
	if len(l.sub.ResReq) > 0 {
		reqs := make([]*resreq.ResReq, 0, len(l.sub.ResReq))
		for _, s := range l.sub.ResReq {
			r, err := resreq.Parse(s, resreq.WithSchema(l.cfg.schema))
			if err != nil {
				if len(l.sub.ResReq) > 1 {
					return reject("%v: %q: %v", resreq.ErrBadResReq, s, err)
				}
				return reject("%v: %v", resreq.ErrBadResReq, err)
			}
			reqs = append(reqs, r)
		}
		var err error
		if job, err = resreq.Join(reqs...); err != nil {
			return reject("%v: %v", resreq.ErrBadResReq, err)
		}
		parts = append(parts, l.job())
	}
	merged := job
	if l.app != nil && l.app.resReq != nil {
		var err error
		merged, err = resreq.MergeProfile(job, l.app.resReq, l.app.IsFixed("res_req"))
		if err != nil {
			// resreq writes some sections twice: "span[span[hosts=1]]".
			msg := doubled.ReplaceAllString(err.Error(), "$1")
			msg = strings.Replace(msg, "the application profile", "application profile "+l.app.Name, 1)
			if !strings.Contains(msg, l.app.Name) {
				msg = "application profile " + l.app.Name + ": " + msg
			}
			return reject("%s", capitalize(msg))
		}
		parts = append(parts, l.profile())
	}
	if l.q.resReq != nil {
		merged = resreq.MergeLSF(merged, nil, l.q.resReq)
		parts = append(parts, l.deprecated())
	}
	l.rr = merged
	l.eff().ResReq = nil
	if merged != nil {
		if s := merged.String(); s != "" {
			l.eff().ResReq = []string{s}
			l.origin("res_req", parts...)
		}
	}
	return nil
}

var doubled = regexp.MustCompile(`(?:order|span|cu|affinity)\[((?:order|span|cu|affinity)\[[^\[\]]*\])\]`)

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// by names the layer a non-job value came from, for messages.
func by(o Origin) string {
	if len(o) == 1 && o[0].Source != FromJob {
		p := o[0]
		if p.Source == FromProfile {
			return " (from application profile " + p.Name + ")"
		}
		return " (from " + p.String() + ")"
	}
	return ""
}

func (l *layering) setTasks() error {
	e := l.eff()
	lo, hi := l.sub.MinTasks, l.sub.MaxTasks
	switch {
	case lo > 0:
		hi = max(hi, lo)
		if l.app != nil && l.app.IsFixed("tasks") {
			if d := int32(l.app.defaultTasks()); lo != d || hi != d {
				return reject("Application profile %s fixes the number of tasks at %d; the job asks for %s (-n)", l.app.Name, d, taskText(lo, hi))
			}
		}
		l.origin("min_tasks", l.job())
	case l.app != nil && l.app.defaultTasks() > 0:
		lo = int32(l.app.defaultTasks())
		l.origin("min_tasks", l.profile())
	case l.q.DefaultTasks > 0:
		lo = int32(l.q.DefaultTasks)
		l.origin("min_tasks", l.queuePart())
	case l.q.MinTasks > 0:
		lo = int32(l.q.MinTasks)
		l.origin("min_tasks", l.queuePart())
	default:
		lo = 1
		l.origin("min_tasks", Part{Source: FromDefault})
	}
	if l.sub.MinTasks <= 0 {
		hi = lo
	}
	l.res.Origin["max_tasks"] = l.res.Origin["min_tasks"]
	e.MinTasks, e.MaxTasks = lo, hi
	from := by(l.res.Origin["min_tasks"])
	check := func(who string, min, max int) error {
		if max > 0 && int(hi) > max {
			return reject("Job requests %s%s; %s allows at most %d", plural(int64(hi), "task", "tasks"), from, who, max)
		}
		if min > 0 && int(lo) < min {
			return reject("Job requests %s%s; %s requires at least %d", plural(int64(lo), "task", "tasks"), from, who, min)
		}
		return nil
	}
	if l.app != nil {
		if err := check("application profile "+l.app.Name, l.app.MinTasks, l.app.MaxTasks); err != nil {
			return err
		}
	}
	return check("queue "+l.q.Name, l.q.MinTasks, l.q.MaxTasks)
}

func taskText(lo, hi int32) string {
	if lo == hi {
		return strconv.Itoa(int(lo))
	}
	return fmt.Sprintf("%d,%d", lo, hi)
}

// defaultTasks is the profile's own number of tasks: default_tasks, else
// min_tasks; 0 when it sets neither.
func (a *App) defaultTasks() int {
	if a.DefaultTasks > 0 {
		return a.DefaultTasks
	}
	return a.MinTasks
}

// limit layers one limit: the job's value unless the profile fixes its
// own, then the profile's (capped at the queue's ceiling), the queue's
// default, the queue's ceiling; and checks the job's against the ceiling.
func (l *layering) limit(field, attr, opt string, job int64, prof, qdef, qmax int64, text func(int64) string, what string) (int64, error) {
	v := job
	switch {
	case job > 0:
		if l.app != nil && l.app.IsFixed(attr) && prof > 0 && job != prof {
			return 0, reject("Application profile %s fixes the %s at %s; the job asks for %s (%s)", l.app.Name, what, text(prof), text(job), opt)
		}
		l.origin(field, l.job())
	case prof > 0 && qmax > 0 && prof > qmax:
		// A profile's limit does not override the queue's hard limit
		// (LSF): the queue's applies.
		v = qmax
		l.origin(field, l.queuePart())
	case prof > 0:
		v = prof
		l.origin(field, l.profile())
	case qdef > 0:
		v = qdef
		l.origin(field, l.queuePart())
	case qmax > 0:
		v = qmax
		l.origin(field, l.queuePart())
		l.ceilingOnly[field] = true
	}
	if qmax > 0 && v > qmax {
		return 0, reject("Job requests %s%s; queue %s allows at most %s", l.describe(what, text(v)), by(l.res.Origin[field]), l.q.Name, text(qmax))
	}
	return v, nil
}

func (l *layering) describe(what, amount string) string {
	if what == "memory limit" {
		return amount + " memory"
	}
	return "a " + what + " of " + amount
}

func (l *layering) setRunLimit() error {
	var prof int64
	if l.app != nil {
		prof = int64(l.app.RunLimit)
	}
	v, err := l.limit("run_limit_sec", "run_limit", "-W", l.sub.RunLimitSec, prof, int64(l.q.DefaultRunLimit), int64(l.q.MaxRunLimit),
		func(s int64) string { return Duration(s).String() }, "run limit")
	l.eff().RunLimitSec = v
	// The run time estimate (RUNTIME): the job's -We, else the profile's,
	// else the queue's.
	if l.sub.EstimatedRunSec == 0 {
		switch {
		case l.app != nil && l.app.Runtime > 0:
			l.eff().EstimatedRunSec = int64(l.app.Runtime)
		case l.q.Runtime > 0:
			l.eff().EstimatedRunSec = int64(l.q.Runtime)
		}
	}
	return err
}

func (l *layering) setMemLimit() error {
	var prof int64
	if l.app != nil {
		prof = int64(l.app.MemLimit)
	}
	v, err := l.limit("mem_limit_kb", "mem_limit", "-M", l.sub.MemLimitKb, prof, int64(l.q.DefaultMem), int64(l.q.MaxMem),
		func(kb int64) string { return Memory(kb).Human() }, "memory limit")
	l.eff().MemLimitKb = v
	if err != nil {
		return err
	}
	if p := l.prj; p != nil && p.MaxMem > 0 {
		need := l.memNeed()
		if need > int64(p.MaxMem) {
			return reject("Job requests %s memory; project %s allows at most %s", Memory(need).Human(), p.Name, p.MaxMem.Human())
		}
		if need > 0 {
			l.pend(PendCheck{Kind: ProjectMem, Name: p.Name, Max: int64(p.MaxMem), Need: need,
				Reason: fmt.Sprintf("Project %s has reached its quota of %s memory", p.Name, p.MaxMem.Human())})
		}
	}
	return nil
}

// memNeed is the memory the job holds against a project quota, in KB: its
// effective memory limit, unless that is only the queue's ceiling; else its
// rusage[mem] times its minimum tasks.
func (l *layering) memNeed() int64 {
	if v := l.eff().MemLimitKb; v > 0 && !l.ceilingOnly["mem_limit_kb"] {
		return v
	}
	if mb, ok := l.reserved("mem"); ok {
		return int64(mb*1024+0.5) * int64(l.eff().MinTasks)
	}
	return 0
}

// reserved returns the amount of a resource the merged requirement
// reserves when the job starts; only a simple requirement whose rusage
// has no || alternatives is considered.
func (l *layering) reserved(name string) (float64, bool) {
	if !l.rr.IsSimple() || l.rr.Simple.Rusage == nil || len(l.rr.Simple.Rusage.Or) != 1 {
		return 0, false
	}
	return l.rr.Simple.Rusage.Or[0].AmountAt(name, 0)
}

// setGPU merges the job's GPU requirement (lib/gpu.Merge): the cluster's
// gpu_req (only for a job that asks for GPUs), the queue's, the
// profile's (fixed or default) and the job's own -gpu, or, without one,
// what its rusage[ngpus_physical=N] stands for. The effective spec's gpu
// is the merged requirement with LSF's defaults ("" for a job without
// GPUs), and the project's GPU quota is checked against its num.
func (l *layering) setGPU() error {
	var job *gpu.Req
	if s := strings.TrimSpace(l.sub.Gpu); s != "" {
		r, err := gpu.Parse(s)
		if err != nil {
			return reject("%v", err)
		}
		job = r
	} else if l.rr.IsSimple() && l.rr.Simple.Rusage != nil && len(l.rr.Simple.Rusage.Or) == 1 {
		for _, u := range l.rr.Simple.Rusage.Or[0] {
			for _, ru := range u.Resources {
				if ru.Name == "ngpus_physical" && len(ru.Amounts) > 0 {
					if r, ok := gpu.FromRusage(ru.Amounts[0].Value, ru.Method == "task"); ok {
						job = r
					}
				}
			}
		}
	}
	var qr, ar *gpu.Req
	qr = l.q.gpuReq
	fixed := false
	if l.app != nil {
		ar, fixed = l.app.gpuReq, l.app.IsFixed("gpu_req")
	}
	l.eff().Gpu = ""
	if job == nil && qr == nil && ar == nil {
		return nil
	}
	var cl *gpu.Req
	if s := l.cfg.Cluster.GpuReq; s != "" {
		cl, _ = gpu.Parse(s) // checked by Load
	}
	levels := []gpu.Level{{Name: "cluster", Req: cl}, {Name: "queue " + l.q.Name, Req: qr}}
	parts := []Part{{Source: FromDefault}, l.queuePart()}
	if l.app != nil {
		levels = append(levels, gpu.Level{Name: "application profile " + l.app.Name, Req: ar, Fixed: fixed})
		parts = append(parts, l.profile())
	}
	levels = append(levels, gpu.Level{Name: "job", Req: job})
	parts = append(parts, l.job())
	merged, err := gpu.Merge(l.cfg.Cluster.GpuReqMerge, levels...)
	if err != nil {
		return reject("%v", err)
	}
	var origin Origin
	for i := len(levels) - 1; i >= 0; i-- {
		if r := levels[i].Req; r != nil && r.Set != 0 {
			origin = append(origin, parts[i])
		}
	}
	if len(origin) == 0 {
		origin = Origin{{Source: FromDefault}}
	}
	e := merged.Effective()
	l.eff().Gpu = merged.Full()
	l.origin("gpu", origin...)
	return l.checkGPUs(e)
}

// checkGPUs checks the project's GPU quota against the effective
// requirement's num (per host; per task times the minimum slots).
func (l *layering) checkGPUs(e *gpu.Req) error {
	p := l.prj
	if p == nil || p.MaxGPUs == 0 {
		return nil
	}
	n := int64(e.Num)
	if e.PerTask {
		n *= int64(max(1, l.eff().MinTasks))
	}
	if n > int64(p.MaxGPUs) {
		return reject("Job requests %s; project %s allows at most %d", plural(n, "GPU", "GPUs"), p.Name, p.MaxGPUs)
	}
	l.pend(PendCheck{Kind: ProjectGPUs, Name: p.Name, Max: int64(p.MaxGPUs), Need: n,
		Reason: fmt.Sprintf("Project %s has reached its quota of %s", p.Name, plural(int64(p.MaxGPUs), "GPU", "GPUs"))})
	return nil
}

// shared checks the job's rusage of shared resources against their totals.
func (l *layering) checkShared() error {
	if !l.rr.IsSimple() || l.rr.Simple.Rusage == nil || len(l.rr.Simple.Rusage.Or) != 1 {
		return nil
	}
	for _, name := range l.rr.Simple.Rusage.Or[0].Names() {
		r := l.cfg.Resources[name]
		if r == nil || !r.Shared() {
			continue
		}
		amt, _ := l.reserved(name)
		need := int64(amt + 0.999999)
		if need > r.Ceiling() {
			return reject("Job requests %s %s; the cluster has %d %s in all", strconv.FormatFloat(amt, 'f', -1, 64), name, r.Ceiling(), name)
		}
		l.pend(PendCheck{Kind: SharedResource, Name: name, Max: r.Ceiling(), Need: need,
			Reason: fmt.Sprintf("Job's requirements for reserving resource (%s) not satisfied", name)})
	}
	return nil
}

// slots checks the job's minimum slots against the queue's and the
// project's slot limits.
func (l *layering) checkSlots() error {
	n := int64(l.eff().MinTasks)
	q := l.q
	type lim struct {
		kind    LimitKind
		max     int
		ceiling string
		reason  string
		perHost bool
	}
	lims := []lim{
		{QueueSlots, q.MaxSlots, "queue " + q.Name + " allows at most %s", "The queue has reached its job slot limit", false},
		{QueueUserSlots, q.MaxSlotsPerUser, "queue " + q.Name + " allows at most %s per user", "User has reached the per-user job slot limit of the queue", false},
		{QueueHostSlots, q.MaxSlotsPerHost, "queue " + q.Name + " allows at most %s per host", "Queue's per-host job slot limit reached", true},
	}
	if p := l.prj; p != nil {
		lims = append(lims, lim{ProjectSlots, p.MaxSlots, "project " + p.Name + " allows at most %s",
			fmt.Sprintf("Project %s has reached its quota of %s", p.Name, plural(int64(p.MaxSlots), "job slot", "job slots")), false})
	}
	// The user's own limit; a submission without a user (a test, a tool
	// checking a spec) has none.
	user := l.sub.GetUser()
	if user != "" {
		lims = append(lims, lim{UserSlots, l.cfg.UserSlotLimit(user), "user " + user + " may use at most %s",
			"The user has reached his/her job slot limit", false})
	}
	for _, m := range lims {
		if m.max == 0 {
			continue
		}
		// A job spread over hosts takes only part of its slots on each;
		// only one that must fit on one host is held to the whole amount.
		if (!m.perHost || l.oneHost()) && n > int64(m.max) {
			return reject("Job requests %s; "+m.ceiling, plural(n, "job slot", "job slots"), plural(int64(m.max), "job slot", "job slots"))
		}
		pc := PendCheck{Kind: m.kind, Max: int64(m.max), Need: n, PerHost: m.perHost, Reason: m.reason}
		pc.Name = q.Name
		switch m.kind {
		case ProjectSlots:
			pc.Name = l.prj.Name
		case UserSlots:
			pc.Name = user
		}
		if m.perHost && !l.oneHost() {
			pc.Need = 1 // at least one slot on each host it uses
		}
		l.pend(pc)
	}
	return nil
}

// oneHost reports whether the merged requirement asks for span[hosts=1].
func (l *layering) oneHost() bool {
	return l.eff().MinTasks == 1 || l.rr.IsSimple() && l.rr.Simple.Span != nil && l.rr.Simple.Span.Hosts == 1
}

// setRerun: a job is rerunnable with -r, or when its profile or queue is
// (RERUNNABLE; the job's own -r first, then the profile, then the
// queue). An interactive job never is, as in LSF.
func (l *layering) setRerun() error {
	e := l.res.Effective
	if e.Rerunnable || e.GetInteractive() != api.Interactive_BATCH {
		return nil
	}
	switch {
	case l.app != nil && l.app.Rerunnable:
		e.Rerunnable = true
		l.origin("rerunnable", l.profile())
	case l.q.Rerunnable:
		e.Rerunnable = true
		l.origin("rerunnable", l.queuePart())
	}
	return nil
}
