package controller

import (
	"errors"
	"fmt"
	"log/slog"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/gpu"
	"xce/lib/policy"
	"xce/lib/store"
)

// UserError is a submission or request the controller refuses; its text is
// LSF's where LSF has one. The API turns it into InvalidArgument or
// PermissionDenied.
type UserError struct {
	Msg        string
	Permission bool
	// Busy: refused only for now (a threshold such as MAX_PEND_JOBS); the
	// API says ResourceExhausted so that a client may retry.
	Busy bool
}

func (e *UserError) Error() string { return e.Msg }

func userErr(format string, a ...any) error { return &UserError{Msg: fmt.Sprintf(format, a...)} }

// Caller is who sent a request, from the socket peer's credentials.
type Caller struct {
	UID, GID uint32
	// Host is the host the request came from; "" for the local socket
	// (this host).
	Host string
	// Remote: the call came over TCP (a user's proof), not the local
	// socket.
	Remote bool
}

// Submit validates a job, stores it durably and queues it.
func (c *Controller) Submit(who Caller, spec *api.JobSpec) (*api.SubmitReply, error) {
	if err := c.checkDiskSpace(); err != nil {
		return nil, err
	}
	p, err := c.prepare(who, spec)
	if err != nil {
		return nil, err
	}
	defer p.release()
	// Durable before acknowledged; concurrent submissions share the fsync.
	if err := c.store.Submit(p.sub); err != nil {
		slog.Error("store submission", "job", p.reply.JobId, "err", err)
		return nil, fmt.Errorf("cannot store the job: %w", err)
	}
	c.accept(who, []*prepared{p})
	return p.reply, nil
}

// PackResult is the outcome of one job of a pack: its reply, or why it was
// refused.
type PackResult struct {
	Reply *api.SubmitReply
	Err   error
}

// SubmitPack submits a job pack (bsub -pack): each job as Submit would, in
// order, the pack's jobs stored together in shared commits. With
// stopOnError the first refusal ends the pack: the jobs after it are not
// submitted, and the results stop there (a store that fails mid-batch
// ends it after the batch, each of whose jobs has its own result). A job
// that depends on others (-w) is prepared after the jobs before it are
// stored and queued, so that it may name them.
func (c *Controller) SubmitPack(who Caller, specs []*api.JobSpec, stopOnError bool) []PackResult {
	results := make([]PackResult, 0, len(specs))
	var (
		batch []*prepared
		at    []int // batch[i]'s place in results
	)
	flush := func() bool {
		if len(batch) == 0 {
			return true
		}
		subs := make([]*store.Submission, len(batch))
		for i, p := range batch {
			subs[i] = p.sub
		}
		errs := c.store.SubmitMany(subs)
		var stored []*prepared
		ok := true
		for i, p := range batch {
			if errs[i] != nil {
				slog.Error("store submission", "job", p.reply.JobId, "err", errs[i])
				results[at[i]] = PackResult{Err: fmt.Errorf("cannot store the job: %w", errs[i])}
				ok = false
				continue
			}
			results[at[i]] = PackResult{Reply: p.reply}
			stored = append(stored, p)
		}
		c.accept(who, stored)
		for _, p := range batch {
			p.release()
		}
		batch, at = batch[:0], at[:0]
		return ok
	}
	if err := c.checkDiskSpace(); err != nil {
		// Once for the pack: its jobs are stored within moments.
		for range specs {
			if results = append(results, PackResult{Err: err}); stopOnError {
				break
			}
		}
		return results
	}
	for _, spec := range specs {
		if spec.GetDependency() != "" && !flush() && stopOnError {
			break
		}
		p, err := c.prepare(who, spec)
		results = append(results, PackResult{Err: err})
		if err != nil {
			if stopOnError {
				break
			}
			continue
		}
		batch, at = append(batch, p), append(at, len(results)-1)
	}
	flush()
	return results
}

// prepared is a submission validated and given its job id, not yet stored.
type prepared struct {
	sub   *store.Submission
	keep  *effSpec
	reply *api.SubmitReply
	// release gives back what the submission holds of its user's
	// MAX_PEND_JOBS while it is being stored.
	release func()
}

// prepare validates a submission, lays the configuration over it and
// allocates its job id (and its array's records). The caller has checked
// the disk's free space.
func (c *Controller) prepare(who Caller, spec *api.JobSpec) (*prepared, error) {
	if spec == nil || strings.TrimSpace(spec.Command) == "" {
		return nil, userErr("No command is specified")
	}
	c.scrubSpec(who, spec)
	if err := checkSpec(spec); err != nil {
		return nil, err
	}

	defaultQueue := spec.Queue == ""
	eff, indices, err := c.validate(who, spec)
	if err != nil {
		return nil, err
	}

	origin := splitOrigin(eff)
	keep, err := c.effs.intern(eff)
	if err != nil {
		return nil, fmt.Errorf("encode effective spec: %w", err)
	}

	now := time.Now().UnixNano()
	pendLimit := c.config().UserPendLimit(spec.User)
	release := func() {}
	c.mu.Lock()
	if pendLimit > 0 {
		// LSF's MAX_PEND_JOBS: the user's pending jobs, with those of
		// submissions being stored now, and this one's.
		if c.pendingOf(who.UID)+c.pendStoring[who.UID]+len(indices) > pendLimit {
			c.mu.Unlock()
			return nil, &UserError{Msg: errPendThreshold, Busy: true}
		}
		c.pendStoring[who.UID] += len(indices)
		release = func() {
			c.mu.Lock()
			if c.pendStoring[who.UID] -= len(indices); c.pendStoring[who.UID] <= 0 {
				delete(c.pendStoring, who.UID)
			}
			c.mu.Unlock()
		}
	}
	id := c.nextID
	c.nextID++
	if c.nextID >= c.ceiling {
		// Reserve the next block before handing out an id from it.
		if err := c.store.SetIDCeiling(c.ceiling + idBlock); err != nil {
			c.nextID--
			c.mu.Unlock()
			release()
			return nil, fmt.Errorf("reserve job ids: %w", err)
		}
		c.ceiling += idBlock
	}
	sub := &store.Submission{Spec: spec, EffectiveRaw: keep.raw, OriginRaw: origin}
	for _, idx := range indices {
		c.seq++
		j := &api.Job{JobId: id, ArrayIndex: idx, State: api.JobState_PEND, SubmitTime: now, Seq: c.seq}
		if spec.Hold {
			j.State = api.JobState_PSUSP
		}
		if len(indices) > 1 || idx > 0 {
			j.ArraySize = int32(len(indices))
			j.ArrayEnd = indices[len(indices)-1]
			j.ArrayStep = arrayStep(indices)
		}
		sub.Jobs = append(sub.Jobs, j)
		sub.Events = append(sub.Events, &api.Event{
			JobId: id, ArrayIndex: idx, Time: now, Type: api.EventType_SUBMIT,
			State: j.State, User: spec.User,
		})
	}
	c.mu.Unlock()
	reply := &api.SubmitReply{JobId: id, Queue: eff.Queue, DefaultQueue: defaultQueue, ArraySize: int32(len(indices))}
	return &prepared{sub: sub, keep: keep, reply: reply, release: release}, nil
}

// accept queues stored submissions and wakes the scheduler.
func (c *Controller) accept(who Caller, ps []*prepared) {
	if len(ps) == 0 {
		return
	}
	c.mu.Lock()
	for _, p := range ps {
		for _, j := range p.sub.Jobs {
			r := &rec{job: j, eff: p.keep}
			c.insert(r)
			c.publish(r)
		}
		c.stats.submitted.Add(int64(len(p.sub.Jobs)))
		c.lastSub[who.UID] = max(c.lastSub[who.UID], p.reply.JobId)
	}
	c.mu.Unlock()
	c.Kick()
}

// errPendThreshold is lsb.err's text for a user at MAX_PEND_JOBS.
const errPendThreshold = "Pending job threshold reached"

// pendingOf counts a user's pending jobs, PEND and PSUSP, each array
// element one (c.mu held).
func (c *Controller) pendingOf(uid uint32) int {
	n := 0
	for _, r := range c.jobs {
		if s := r.job.State; (s == api.JobState_PEND || s == api.JobState_PSUSP) && r.eff.GetUid() == uid {
			n++
		}
	}
	return n
}

// validate lays the cluster's configuration over a submission (lib/config:
// queue, profile, project, ceilings and quotas) and checks what only the
// live cluster knows; it returns the effective spec (without the
// environment) and the array indices ([0] for a plain job).
func (c *Controller) validate(who Caller, spec *api.JobSpec) (*api.JobSpec, []int32, error) {
	conf := c.config()
	_, eff, err := c.layerWith(conf, spec)
	if err != nil {
		return nil, nil, err
	}
	if q := c.queues[eff.Queue]; q == nil || !q.q.Open {
		return nil, nil, userErr("%s: Queue has been closed", eff.Queue)
	}
	// With remote workers the hosts connected now are not all there is: a
	// large job waits for hosts rather than being refused.
	if int(eff.MinTasks) > c.cfg.Slots && !c.cfg.Workers {
		return nil, nil, userErr("Too many processors requested")
	}
	c.mu.Lock()
	err = c.checkHostList(conf, eff.Hosts)
	if err == nil {
		err = c.checkRsvJob(conf, eff)
	}
	if err == nil {
		err = c.checkClaimJob(conf, eff)
	}
	c.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	if eff.BeginTime > 0 && eff.TermTime > 0 && eff.BeginTime > eff.TermTime {
		return nil, nil, userErr("Start time is later than termination time")
	}
	if err := checkUserPriority(conf, c.isAdmin(who.UID), spec.GetUser(), eff); err != nil {
		return nil, nil, err
	}
	if err := checkSubmission(conf, spec.GetUser(), eff); err != nil {
		return nil, nil, err
	}
	if err := checkGPU(eff); err != nil {
		return nil, nil, err
	}
	if eff.Dependency != "" {
		c.mu.Lock()
		err := c.checkDependency(who.UID, eff.Dependency)
		if err == nil {
			err = c.checkCycle(0, who.UID, eff.JobName, eff.Dependency)
		}
		c.mu.Unlock()
		if err != nil {
			return nil, nil, &UserError{Msg: err.Error()}
		}
	}
	if eff.ArraySpec == "" {
		return eff, []int32{0}, nil
	}
	indices, err := parseArray(eff.ArraySpec, max(conf.Cluster.MaxArraySize, 1))
	return eff, indices, err
}

// checkGPU refuses a -gpu requirement LSF would not parse. One that no
// host meets now is accepted, as LSF accepts it: the job pends with the
// GPU reason (bjobs -p) until a host brings the devices (a GPU host that
// is down, or has not joined yet).
func checkGPU(eff *api.JobSpec) error {
	if eff.Gpu == "" {
		return nil
	}
	if _, err := gpu.Parse(eff.Gpu); err != nil {
		return userErr("%v", err)
	}
	return nil
}

// checkSubmission refuses what LSF refuses of a job's groups and
// interactive mode, with lsb.err's texts.
func checkSubmission(conf *config.Config, user string, eff *api.JobSpec) error {
	if g := eff.GetJobGroup(); g != "" && !validJobGroup(g) {
		return userErr("%s: Bad/empty job group name", g)
	}
	if g := eff.GetUserGroup(); g != "" {
		if conf.UserGroups[g] == nil {
			return userErr("%s: Bad user group name", g)
		}
		if !conf.UserIn(user, []string{g}) {
			return userErr("%s: User not in the specified user group", g)
		}
	}
	if q := conf.Queues[eff.GetQueue()]; q != nil {
		batch := eff.GetInteractive() == api.Interactive_BATCH
		switch {
		case q.Interactive == "only" && batch:
			return userErr("Queue only accepts interactive jobs")
		case q.Interactive == "no" && !batch:
			return userErr("Queue does not accept interactive jobs")
		}
	}
	switch eff.GetInteractive() {
	case api.Interactive_BATCH:
	case api.Interactive_PTY, api.Interactive_PTY_SHELL:
		if eff.GetInputFile() != "" {
			return userErr("Input file not allowed with pseudo-terminal")
		}
		fallthrough
	default:
		if eff.GetRerunnable() {
			return userErr("Interactive job cannot be rerunnable")
		}
	}
	return nil
}

// checkUserPriority checks bsub -sp as LSF checks it against
// MAX_USER_PRIORITY (cluster.max_user_priority): a user may give 1 to
// the maximum, and without one not use -sp at all; the cluster's and the
// job's queue's administrators may go beyond it.
func checkUserPriority(conf *config.Config, admin bool, user string, eff *api.JobSpec) error {
	p := eff.GetUserPriority()
	switch {
	case p == 0:
		return nil
	case p < 0:
		return userErr("Bad user priority")
	case admin:
		return nil
	}
	if q := conf.Queues[eff.GetQueue()]; q != nil && len(q.Administrators) > 0 && conf.UserIn(user, q.Administrators) {
		return nil
	}
	if max := conf.Cluster.MaxUserPriority; max == 0 || int(p) > max {
		return userErr("Bad user priority")
	}
	return nil
}

// validJobGroup checks a job group path as LSF does: it starts with "/",
// does not end with one (except "/" itself), has no "//" and no blanks.
func validJobGroup(g string) bool {
	return strings.HasPrefix(g, "/") && (g == "/" || !strings.HasSuffix(g, "/")) &&
		!strings.Contains(g, "//") && !strings.ContainsAny(g, " \t\n")
}

// layerWith lays a configuration over a submission (with its environment)
// and returns the effective spec without the environment. What the
// layering decided beyond the spec's own fields travels with it: the
// worker runs the exec chain, the scheduler checks the limits, bjobs -l
// shows the origins. It reads no controller state.
func (c *Controller) layerWith(conf *config.Config, spec *api.JobSpec) (*config.Result, *api.JobSpec, error) {
	res, eff, err := policy.Layer(conf, spec, c.isAdmin(spec.GetUid()))
	if err != nil {
		return nil, nil, &UserError{Msg: err.Error()}
	}
	return res, eff, nil
}

// parseArray expands "[1-10:2,15]" into sorted, distinct indices.
func parseArray(spec string, maxSize int) ([]int32, error) {
	body := strings.TrimSuffix(strings.TrimPrefix(spec, "["), "]")
	if body == "" || len(body)+2 != len(spec) {
		return nil, userErr("Job array index error")
	}
	seen := map[int32]bool{}
	var out []int32
	for _, part := range strings.Split(body, ",") {
		step := 1
		if i := strings.IndexByte(part, ':'); i >= 0 {
			s, err := strconv.Atoi(part[i+1:])
			if err != nil || s <= 0 {
				return nil, userErr("Job array index error")
			}
			step = s
			part = part[:i]
		}
		lo, hi := part, part
		if i := strings.IndexByte(part, '-'); i >= 0 {
			lo, hi = part[:i], part[i+1:]
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a <= 0 || b < a {
			return nil, userErr("Job array index error")
		}
		if b > maxSize {
			return nil, userErr("Job array index too large")
		}
		for v := a; v <= b; v += step {
			if !seen[int32(v)] {
				seen[int32(v)] = true
				out = append(out, int32(v))
			}
		}
	}
	if len(out) > maxSize {
		return nil, userErr("Job array index too large")
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func arrayStep(idx []int32) int32 {
	if len(idx) < 2 {
		return 1
	}
	return idx[1] - idx[0]
}

var errNoUser = errors.New("unknown user")

// lookupUser names a uid and its home directory (cached).
func lookupUser(uid uint32) (name, home string) {
	userCacheMu.Lock()
	defer userCacheMu.Unlock()
	if u, ok := userCache[uid]; ok {
		return u[0], u[1]
	}
	name, home = strconv.Itoa(int(uid)), "/"
	if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		name, home = u.Username, u.HomeDir
	} else {
		slog.Warn("look up user", "uid", uid, "err", errors.Join(errNoUser, err))
	}
	userCache[uid] = [2]string{name, home}
	return name, home
}

var (
	userCacheMu sync.Mutex
	userCache   = map[uint32][2]string{}
)
