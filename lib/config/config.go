package config

import (
	"maps"
	"slices"
	"strings"

	"xce/lib/api"
	"xce/lib/gpu"
	"xce/lib/hostlist"
	"xce/lib/resreq"
)

// Config is a cluster's configuration: what xce.toml says, with every
// default filled in. Load and Default return it validated; treat it as
// read-only (Layer and the lookups below never modify it). The maps are
// keyed by name and each element's Name repeats its key.
type Config struct {
	Cluster    Cluster               `toml:"cluster"`
	Resources  map[string]*Resource  `toml:"resources"`
	Hosts      map[string]*Host      `toml:"hosts"`
	HostGroups map[string]*HostGroup `toml:"host_groups"`
	UserGroups map[string]*UserGroup `toml:"user_groups"`
	Queues     map[string]*Queue     `toml:"queues"`
	Apps       map[string]*App       `toml:"apps"`
	Projects   map[string]*Project   `toml:"projects"`
	Users      map[string]*User      `toml:"users"`
	// Limits are the resource allocation limits ([[limits]], LSF's
	// lsb.resources Limit sections), in file order.
	Limits []*Limit `toml:"limits"`
	// Providers and Templates are the hosts on demand (elastic.go).
	Providers map[string]*Provider `toml:"providers"`
	Templates map[string]*Template `toml:"templates"`
	// ComputeUnits are the compute units ([[compute_units]], LSF's
	// lsb.hosts ComputeUnit sections), in file order (cu.go).
	ComputeUnits []*ComputeUnit `toml:"compute_units"`
	// RsvPolicies let users create advance reservations (rsvpolicy.go).
	RsvPolicies []*RsvPolicy `toml:"reservation_policies"`

	// File is the path the configuration was loaded from; "" for Default.
	File string `toml:"-"`

	schema *resreq.Schema
	// hostFailureTimeoutSet: the file names host_failure_timeout (0 there
	// means never, not the default).
	hostFailureTimeoutSet bool
}

// Cluster holds the cluster-wide parameters (LSF's lsb.params and
// lsf.cluster ClusterAdmins).
type Cluster struct {
	Preemption // preemption parameters (preempt.go)
	Elims      // reported resources (elim.go)

	Name           string   `toml:"name"`            // default "xce"
	Administrators []string `toml:"administrators"`  // user names; the controller's own user is always one
	DefaultQueue   string   `toml:"default_queue"`   // the queue of a job without -q (DEFAULT_QUEUE)
	DefaultProject string   `toml:"default_project"` // the project of a job without -P; default "default"
	DefaultApp     string   `toml:"default_app"`     // the profile of a job without -app; "" = none
	CleanPeriod    Duration `toml:"clean_period"`    // how long finished jobs stay visible; default 1h
	MaxArraySize   int      `toml:"max_array_size"`  // largest job array index; default 1000
	// EadminTriggerDuration (lsb.params EADMIN_TRIGGER_DURATION): how long a
	// job must have run before its CPU use can make it an idle job (the
	// queues' job_idle); default 1m.
	EadminTriggerDuration Duration `toml:"eadmin_trigger_duration"`
	// AcctRetention is how long the accounting record of a finished job
	// is kept for bacct (LSF keeps lsb.acct files); default 30 days, at
	// least clean_period.
	AcctRetention Duration `toml:"acct_retention"`
	// AdvRsvMinLength is the shortest advance reservation window brsvadd
	// accepts; default LSF's 10 minutes.
	AdvRsvMinLength Duration `toml:"advance_reservation_min_length"`
	// OrphanJobTermGracePeriod (ORPHAN_JOB_TERM_GRACE_PERIOD): a pending
	// job whose dependency can never be met is ended (TERM_ORPHAN_SYSTEM)
	// once it has been so this long; 0 keeps it pending (bsub -ti ends it
	// at once either way).
	OrphanJobTermGracePeriod Duration `toml:"orphan_job_term_grace_period"`
	// LocalMaxPreexecRetry (LOCAL_MAX_PREEXEC_RETRY): how many times a
	// job's pre-exec may fail (exit codes other than 0 and 99) before
	// LocalMaxPreexecRetryAction; 0 = no limit, LSF's default.
	LocalMaxPreexecRetry int `toml:"local_max_preexec_retry"`
	// LocalMaxPreexecRetryAction (LOCAL_MAX_PREEXEC_RETRY_ACTION): what a
	// job whose pre-exec reached the limit becomes: "suspend" (PSUSP,
	// bresume lets it try again; LSF's default) or "exit".
	LocalMaxPreexecRetryAction string `toml:"local_max_preexec_retry_action"`
	// PreexecRetryInterval: how long a job whose pre-exec failed waits
	// before it is dispatched again. LSF tries again at a later scheduling
	// session (MBD_SLEEP_TIME, 10 s by default), so a host whose pre-exec
	// check fails is not hammered; default 10s.
	PreexecRetryInterval Duration `toml:"preexec_retry_interval"`
	// MaxPendJobs (lsb.params MAX_PEND_JOBS): how many pending jobs
	// (PEND and PSUSP, each array element one) a user may have; a
	// submission beyond it is refused ("Pending job threshold reached").
	// users.U.max_pend_jobs overrides it; 0 = no limit.
	MaxPendJobs int `toml:"max_pend_jobs"`
	// Memory limits (lsf.conf): without either, a job's memory limit is
	// only a per-process soft RLIMIT_RSS, which Linux does not enforce.
	// MemlimitEnforce (LSB_MEMLIMIT_ENFORCE) also has the job killed when
	// its processes together pass it; JobMemlimit (LSB_JOB_MEMLIMIT) has
	// the job killed there and sets no RLIMIT_RSS. bsub -M N! kills
	// whatever these say. Read when xced starts.
	MemlimitEnforce bool `toml:"memlimit_enforce"`
	JobMemlimit     bool `toml:"job_memlimit"`
	// StdoutDirect (LSB_STDOUT_DIRECT): a job writes straight into its
	// -o/-e files, the report appended at the end; otherwise it writes to
	// a spool file that is copied there, under the report, when it ends.
	// Read when xced starts.
	StdoutDirect bool `toml:"stdout_direct"`
	// HostUnavailGrace: how long a host's worker may be out of touch
	// before the host is unavail and its jobs UNKWN (LSF's
	// HOST_INACTIVITY_LIMIT times EXINTERVAL); longer than a worker's
	// restart and rejoin. Default 60s.
	HostUnavailGrace Duration `toml:"host_unavail_grace"`
	// HostFailureTimeout: how long after its worker went a host's jobs
	// are given up on: rerunnable ones (-r, the queue's or profile's
	// rerunnable) are requeued to run elsewhere, the others end EXIT
	// (TERM_REMOVE_HUNG_JOB, as REMOVE_HUNG_JOBS_FOR=host_unavail does).
	// Default 10m; 0 = never (they stay UNKWN until the host returns).
	HostFailureTimeout Duration `toml:"host_failure_timeout"`
	// TLSCertFile and TLSKeyFile: the certificate (PEM) the workers' port
	// presents, instead of the one xced generates in its directory on
	// first start (cluster.crt, cluster.key).
	TLSCertFile string `toml:"tls_cert_file"`
	TLSKeyFile  string `toml:"tls_key_file"`
	// GpuReq (lsf.conf LSB_GPU_REQ): the cluster's default GPU
	// requirement, in bsub -gpu syntax, for jobs that ask for GPUs (-gpu,
	// or rusage[ngpus_physical=N]); the queue's, the profile's and the
	// job's own keywords win. GpuReqMerge (lsb.params GPU_REQ_MERGE):
	// every keyword is merged on its own (otherwise only num, mode, mps and
	// j_exclusive are, the others come together from the highest level
	// that sets one; lib/gpu.Merge).
	GpuReq      string `toml:"gpu_req"`
	GpuReqMerge bool   `toml:"gpu_req_merge"`
	// Controllers (LSF_MASTER_LIST): the controller candidates' addresses
	// (HOST:PORT), for a highly available controller; each candidate runs
	// xced with --listen one of them. Empty: one controller, no
	// replication.
	Controllers []string `toml:"controllers"`
	// MaxUserPriority (lsb.params MAX_USER_PRIORITY): the highest
	// priority a user may give a job with bsub -sp (1 to it); the cluster's
	// and the queue's administrators may go beyond it. 0: -sp is not
	// enabled, and only administrators may use it.
	MaxUserPriority int `toml:"max_user_priority"`
	// UnitForLimits (lsf.conf LSF_UNIT_FOR_LIMITS): the unit of a memory
	// amount written without one in a resource requirement
	// (rusage[mem=500000], select[mem>4000]), "KB" to "EB"; default "MB".
	// It should be the unit bsub reads from lsf.conf for -M.
	UnitForLimits string `toml:"unit_for_limits"`
	// ComputeUnitTypes (lsb.params COMPUTE_UNIT_TYPES): the compute unit
	// types, finest first; a trailing "!" marks the default type of
	// cu[] (else the first). See cu.go.
	ComputeUnitTypes []string `toml:"compute_unit_types"`
	// How workers contain jobs in cgroups (lsf.conf; containment.go):
	// ProcessTracking (LSF_PROCESS_TRACKING): every job runs in a cgroup
	// of its own, which tracks, freezes and kills all its processes;
	// default true (a worker that cannot make cgroups falls back to the
	// process tree and says so when it starts). CgroupAcct
	// (LSF_LINUX_CGROUP_ACCT): the job's CPU time and memory are read
	// from its cgroup; default true, and memory enforcement turns it on
	// whatever it says, as LSF does. ResourceEnforce
	// (LSB_RESOURCE_ENFORCE): what the kernel enforces through the job's
	// cgroup, "memory" (its memory limit), "cpu" (the cores the scheduler
	// gave it), "gpu" (the devices it gave it); default none, as LSF's.
	// Each host may override them under [hosts.NAME]
	// (Config.Containment gives a host's).
	ProcessTracking *bool     `toml:"process_tracking"`
	CgroupAcct      *bool     `toml:"cgroup_acct"`
	ResourceEnforce *[]string `toml:"resource_enforce"`
	// MetricsListen is where xced serves its Prometheus metrics, /healthz
	// and /readyz (HOST:PORT); "" = nowhere. xced --metrics overrides it.
	MetricsListen string `toml:"metrics_listen"`
}

// Resource is a site-defined resource (lsf.shared Resource and
// lsf.cluster ResourceMap in one): a host attribute, a static per-host
// value, or a shared pool such as license tokens.
type Resource struct {
	Name        string `toml:"-"`
	Description string `toml:"description"`
	// Type is "numeric" (the default), "string" or "boolean".
	Type string `toml:"type"`
	// Units: values take memory units (scratch > 100GB) and default to MB.
	Units bool `toml:"units"`
	// Consumable: jobs may reserve it in rusage[]. A shared resource is
	// always consumable.
	Consumable bool `toml:"consumable"`
	// Increasing: a larger value means a more loaded host (order[]).
	Increasing bool `toml:"increasing"`
	// Total makes the resource shared: one cluster-wide pool of this many
	// units (LSF's ResourceMap "N@[all]"). 0 = a per-host resource.
	Total int64 `toml:"total"`
	// Instances makes a resource of named instances (instances.go): a
	// host lists them ([hosts.NAME] instances, or an elim reports them)
	// and rusage[] gives a job that many of them by name.
	Instances bool `toml:"instances"`
	// Provider lends more of a shared resource when jobs need more than
	// Total (elastic.go's checkBorrow): at most BorrowMax units at once,
	// each loan given back after IdleTime unused.
	Provider  string   `toml:"provider"`
	BorrowMax int64    `toml:"borrow_max"`
	IdleTime  Duration `toml:"idle_time"`
	// SimLendDelay is how long the provider takes to lend in `xced
	// simulate` (the live cluster waits for the real provider).
	SimLendDelay Duration `toml:"sim_lend_delay"`
}

// Shared reports whether the resource is one cluster-wide pool.
func (r *Resource) Shared() bool { return r.Total > 0 }

// Host is an execution host the configuration knows.
type Host struct {
	Name        string `toml:"-"`
	Description string `toml:"description"`
	// Slots is the host's job slots (MXJ); 0 = one per CPU, found when the
	// host's worker registers.
	Slots int `toml:"slots"`
	// Server: the host runs jobs (LSF's server column of lsf.cluster);
	// false for a controller's host that only schedules. Default true.
	Server *bool `toml:"server"`
	// Type and Model override what the worker detects ("" = detected).
	Type  string `toml:"type"`
	Model string `toml:"model"`
	// CPUFactor (lsf.shared HostModel CPUFACTOR of the host's model): the
	// host's speed relative to others, its cpuf resource; 0 = 1.
	CPUFactor float64 `toml:"cpu_factor"`
	// Attributes are the Boolean resources the host has (LSF RESOURCES).
	Attributes []string `toml:"attributes"`
	// Resources are static values of numeric and string resources:
	// integers or floats for numeric ones, strings for string ones.
	Resources map[string]any `toml:"resources"`
	// ProcessTracking, CgroupAcct and ResourceEnforce override the
	// cluster's for this host; a key left out keeps the cluster's.
	ProcessTracking *bool     `toml:"process_tracking"`
	CgroupAcct      *bool     `toml:"cgroup_acct"`
	ResourceEnforce *[]string `toml:"resource_enforce"`
	// ElimDir overrides the cluster's elim_dir for this host (elim.go).
	ElimDir string `toml:"elim_dir"`
	// Instances are the host's named instances of instance resources
	// (instances.go): { fpga = ["fpga0", "fpga1"] }.
	Instances map[string][]string `toml:"instances"`
}

// IsServer reports whether the host runs jobs.
func (h *Host) IsServer() bool { return h.Server == nil || *h.Server }

// HostGroup names a set of hosts (lsb.hosts HostGroup).
type HostGroup struct {
	Name        string `toml:"-"`
	Description string `toml:"description"`
	// Members are host names, other group names, "all" (every configured
	// host) and "~name" exclusions, applied in order.
	Members []string `toml:"members"`
}

// UserGroup names a set of users (lsb.users UserGroup).
type UserGroup struct {
	Name        string `toml:"-"`
	Description string `toml:"description"`
	// Members are user names, other group names and "all".
	Members []string `toml:"members"`
}

// Queue is a queue: scheduling policy (DESIGN.md, configuration layering).
// A zero limit means no limit.
type Queue struct {
	Name        string `toml:"-"`
	Description string `toml:"description"`
	Priority    int    `toml:"priority"` // higher is scheduled first; default 1
	Nice        int    `toml:"nice"`
	// Hosts are the candidate hosts: host and group names, "all",
	// "others", "none", "~name" exclusions and "name+N" preferences, as
	// lsb.queues HOSTS. Default ["all"].
	Hosts []string `toml:"hosts"`
	// Users may submit to the queue: user and group names, "all" and
	// "~name" exclusions. Default ["all"].
	Users          []string `toml:"users"`
	Administrators []string `toml:"administrators"`

	MaxSlots        int `toml:"max_slots"`          // QJOB_LIMIT, bqueues MAX
	MaxSlotsPerUser int `toml:"max_slots_per_user"` // UJOB_LIMIT, JL/U
	MaxSlotsPerHost int `toml:"max_slots_per_host"` // HJOB_LIMIT, JL/H

	// Task range (TASKLIMIT): -n must lie in [MinTasks, MaxTasks];
	// DefaultTasks is used when neither job nor profile says.
	MinTasks     int `toml:"min_tasks"`
	DefaultTasks int `toml:"default_tasks"`
	MaxTasks     int `toml:"max_tasks"`

	// Ceilings (MEMLIMIT, RUNLIMIT): the largest value a job may have, and
	// the value a job gets when neither it nor its profile sets one.
	MaxMem          Memory   `toml:"max_mem"`
	DefaultMem      Memory   `toml:"default_mem"`
	MaxRunLimit     Duration `toml:"max_run_limit"`
	DefaultRunLimit Duration `toml:"default_run_limit"`
	// Runtime (RUNTIME): the run time estimate of the queue's jobs that
	// give none, with -We or through their profile.
	Runtime Duration `toml:"runtime"`

	// RunWindows: jobs run only inside them (suspended outside);
	// DispatchWindows: jobs start only inside them. Empty = always open.
	RunWindows      []Window `toml:"run_windows"`
	DispatchWindows []Window `toml:"dispatch_windows"`

	// Interactive (lsb.queues INTERACTIVE): "no" refuses interactive jobs
	// (bsub -I, -Ip, -Is), "only" refuses batch jobs; "" or "yes" takes
	// both.
	Interactive string `toml:"interactive"`

	// Exclusive: the queue accepts exclusive jobs (bsub -x).
	Exclusive bool `toml:"exclusive"`
	// ExclusiveCU (EXCLUSIVE=CU[type]): the compute unit type whose units
	// the queue's jobs may use exclusively (cu[excl]); "" none.
	ExclusiveCU string `toml:"exclusive_cu"`
	// Rerunnable (RERUNNABLE): the queue's jobs run again elsewhere when
	// their host fails, as with bsub -r.
	Rerunnable bool `toml:"rerunnable"`

	// Job exceptions (lsb.queues JOB_OVERRUN, JOB_UNDERRUN, JOB_IDLE), shown
	// by bjobs -x and EXCEPTION STATUS; 0 = not detected. JobOverrun: a job
	// running longer is "overrun". JobUnderrun: a job that exits abnormally
	// (EXIT) after running less is "underrun". JobIdle (0 to 1): a running
	// job whose CPU time / run time stays below it, once it has run for the
	// cluster's eadmin_trigger_duration, is "idle".
	JobOverrun  Duration `toml:"job_overrun"`
	JobUnderrun Duration `toml:"job_underrun"`
	JobIdle     float64  `toml:"job_idle"`

	// SlotReserve (LSF's SLOT_RESERVE): a job that does not fit holds the
	// slots it will start on; smaller jobs with run limits may use them
	// only if they end before (backfill).
	SlotReserve bool `toml:"slot_reserve"`

	// Fairshare maps users, user groups and "default" to shares
	// (USER_SHARES); empty = first come, first served. Kept for the
	// scheduler.
	Fairshare map[string]int `toml:"fairshare"`
	// Preemptive lists the queues whose jobs this queue's jobs may
	// preempt ("lower" = every queue of lower priority; "queue+N" gives
	// LSF's preference level N, the higher preempted first); Preemptable
	// the queues whose jobs may preempt this queue's ("higher" = every
	// queue of higher priority).
	Preemptive  []string `toml:"preemptive"`
	Preemptable []string `toml:"preemptable"`
	// QueuePreemption: terminate_when, max_job_preempt, ... (preempt.go).
	QueuePreemption

	// Deprecated, for configurations imported from LSF: a queue-level
	// resource requirement merged as LSF does (resreq.MergeLSF), and
	// queue pre/post-exec commands run outside the profile's.
	ResReq   string `toml:"res_req"`
	PreExec  string `toml:"pre_exec"`
	PostExec string `toml:"post_exec"`

	// RequeueExitValues (REQUEUE_EXIT_VALUES): exit codes that send the
	// queue's jobs back to pending, "code ... [EXCLUDE(code ...)]" or
	// "all [~code ...]"; a profile's or the job's own (-Q) wins.
	RequeueExitValues string `toml:"requeue_exit_values"`

	// GpuReq (lsb.queues GPU_REQ): the GPU requirement of the queue's
	// jobs, in bsub -gpu syntax; every job of the queue is a GPU job. The
	// profile's and the job's own keywords win.
	GpuReq string `toml:"gpu_req"`

	// RCHosts (RC_HOSTS): the templates the queue's jobs may be given
	// hosts of: "all", template names, or Boolean resources templates
	// carry. Empty: none (nothing is provisioned for the queue).
	// RCAccount (RC_ACCOUNT): the account its instances are tagged with.
	RCHosts   []string `toml:"rc_hosts"`
	RCAccount string   `toml:"rc_account"`

	resReq *resreq.ResReq
	gpuReq *gpu.Req
}

// App is an application profile (bsub -app): what an application needs
// and how it runs. A zero limit means not set.
type App struct {
	Name        string `toml:"-"`
	Description string `toml:"description"`
	// ResReq is the profile's resource requirement. A job's select[] is
	// always ANDed with it; its other sections may be overridden unless
	// "res_req" is in Fixed.
	ResReq       string   `toml:"res_req"`
	MinTasks     int      `toml:"min_tasks"`
	DefaultTasks int      `toml:"default_tasks"`
	MaxTasks     int      `toml:"max_tasks"`
	RunLimit     Duration `toml:"run_limit"`
	MemLimit     Memory   `toml:"mem_limit"`
	// Runtime (lsb.applications RUNTIME): the run time estimate of a job
	// that gives none (bsub -We), for backfill and runtime_est_exceeded.
	Runtime Duration `toml:"runtime"`
	// Fixed lists the attributes a job may not override: "res_req",
	// "tasks", "run_limit", "mem_limit", "env". The others are defaults
	// that the job's own options replace.
	Fixed []string `toml:"fixed"`
	// PreExec and PostExec are the outer pre/post-exec commands: the
	// profile's pre-exec runs before the job's own -E, its post-exec after
	// the job's -Ep.
	PreExec  string `toml:"pre_exec"`
	PostExec string `toml:"post_exec"`
	// AllowJobExec says whether a job may bring its own -E/-Ep; default
	// true.
	AllowJobExec *bool `toml:"allow_job_exec"`
	// JobStarter wraps the job's command; %USRCMD stands for it (without
	// it the command is appended).
	JobStarter string `toml:"job_starter"`
	// Rerunnable (RERUNNABLE): the profile's jobs run again elsewhere
	// when their host fails, as with bsub -r.
	Rerunnable bool `toml:"rerunnable"`
	// Env is set in the job's environment.
	Env map[string]string `toml:"env"`
	// RequeueExitValues: as the queue's, for the profile's jobs; the
	// job's own -Q wins.
	RequeueExitValues string `toml:"requeue_exit_values"`
	// GpuReq (lsb.applications GPU_REQ): the GPU requirement of the
	// profile's jobs, in bsub -gpu syntax; every job of the profile is a
	// GPU job. With "gpu_req" in Fixed a job may not change its keywords.
	GpuReq string `toml:"gpu_req"`
	// Container (lsb.applications CONTAINER) runs the profile's jobs in
	// a container: RUNTIME[image(IMAGE) options(OPTIONS)] (lib/container).
	// ExecDriver is LSF's EXEC_DRIVER, kept for docker profiles.
	Container  string `toml:"container"`
	ExecDriver string `toml:"exec_driver"`

	resReq *resreq.ResReq
	gpuReq *gpu.Req
	// containerErr: the container or exec_driver value is malformed;
	// submissions to the profile are refused with it (container.go).
	containerErr error
}

// Fixable attribute names of App.Fixed.
var fixable = []string{"res_req", "tasks", "run_limit", "mem_limit", "env", "gpu_req"}

// IsFixed reports whether the profile fixes attribute attr.
func (a *App) IsFixed(attr string) bool { return slices.Contains(a.Fixed, attr) }

// JobExecAllowed reports whether a job of this profile may bring its own
// pre/post-exec commands.
func (a *App) JobExecAllowed() bool { return a.AllowJobExec == nil || *a.AllowJobExec }

// Project is a project (bsub -P): resource ownership. A zero quota means
// no quota.
// User holds one user's cluster-wide limits (LSF's lsb.users MAX_JOBS);
// the entry "default" applies to every user without one of their own.
type User struct {
	Name     string `toml:"-"`
	MaxSlots int    `toml:"max_slots"` // job slots the user's started jobs may hold; 0 = no limit
	// MaxPendJobs (lsb.users MAX_PEND_JOBS): the user's pending jobs;
	// 0 = the "default" entry's, else cluster.max_pend_jobs.
	MaxPendJobs int `toml:"max_pend_jobs"`
}

// UserPendLimit is how many pending jobs user may have, 0 for no limit:
// the user's own max_pend_jobs, else the "default" entry's, else the
// cluster's.
func (c *Config) UserPendLimit(user string) int {
	for _, name := range []string{user, "default"} {
		if u := c.Users[name]; u != nil && u.MaxPendJobs > 0 {
			return u.MaxPendJobs
		}
	}
	return c.Cluster.MaxPendJobs
}

// UserSlotLimit is the number of slots user's started jobs may hold, 0 for
// no limit: the user's own entry, else "default".
func (c *Config) UserSlotLimit(user string) int {
	if u := c.Users[user]; u != nil {
		return u.MaxSlots
	}
	if u := c.Users["default"]; u != nil {
		return u.MaxSlots
	}
	return 0
}

type Project struct {
	Name        string `toml:"-"`
	Description string `toml:"description"`
	MaxSlots    int    `toml:"max_slots"`
	MaxMem      Memory `toml:"max_mem"`
	MaxGPUs     int    `toml:"max_gpus"`
}

// DefaultAcctRetention is how long accounting records are kept when the
// configuration does not say: 30 days.
const DefaultAcctRetention Duration = 30 * 24 * 3600

// Default is the built-in configuration xced uses without a configuration
// file: cluster "xce", one host with the slots given, and the default
// queue "normal" (priority 30, nice 20) open to every user on every host.
// Unlike LSF's stock normal queue it accepts exclusive jobs (bsub -x): on a
// single host with no configuration, refusing them helps nobody.
func Default(hostName string, slots int) *Config {
	c := &Config{
		Cluster: Cluster{Name: "xce", DefaultQueue: "normal"},
		Hosts:   map[string]*Host{hostName: {Slots: slots}},
		Queues: map[string]*Queue{"normal": {
			Priority:    30,
			Nice:        20,
			Exclusive:   true,
			Description: "For normal low priority jobs, running only if hosts are lightly loaded.  This is the default queue.",
		}},
	}
	if err := c.finish(); err != nil {
		panic("config: the built-in default is invalid: " + err.Error())
	}
	return c
}

// Schema returns the resources the cluster knows: the built-in ones and
// those of [resources]. Resource requirements are parsed against it.
func (c *Config) Schema() *resreq.Schema { return c.schema }

// QueueNames returns the queue names, highest priority first (ties by
// name), the order bqueues lists them in.
func (c *Config) QueueNames() []string {
	names := slices.Sorted(maps.Keys(c.Queues))
	slices.SortStableFunc(names, func(a, b string) int { return c.Queues[b].Priority - c.Queues[a].Priority })
	return names
}

// IsAdmin reports whether user is a cluster administrator (directly or
// through a user group).
func (c *Config) IsAdmin(user string) bool { return c.UserIn(user, c.Cluster.Administrators) }

// PrimaryAdmin is the primary cluster administrator (LSF's first
// ClusterAdmins name): the first of administrators that names one user,
// not a group, "all" or an exclusion; "" when none does.
func (c *Config) PrimaryAdmin() string {
	for _, e := range c.Cluster.Administrators {
		if e == "all" || strings.HasPrefix(e, "~") || c.UserGroups[e] != nil {
			continue
		}
		return e
	}
	return ""
}

// UserIn reports whether user is named by list: a user name, a user group
// (recursively) or "all"; "~name" excludes. Entries apply in order, so
// ["all", "~guests"] is everyone but the guests group.
func (c *Config) UserIn(user string, list []string) bool { return c.userIn(user, list, 0) }

func (c *Config) userIn(user string, list []string, depth int) bool {
	in := false
	for _, e := range list {
		neg := strings.HasPrefix(e, "~")
		name := strings.TrimPrefix(e, "~")
		match := name == "all" || name == user
		if g := c.UserGroups[name]; !match && g != nil && depth <= len(c.UserGroups) {
			match = c.userIn(user, g.Members, depth+1)
		}
		if match {
			in = !neg
		}
	}
	return in
}

// ExpandHosts turns a list of host and group names ("all", "~name",
// "name+N" preferences) into configured host names, sorted. "others" and
// "none" contribute nothing.
func (c *Config) ExpandHosts(list []string) []string {
	set := map[string]bool{}
	c.expandHosts(list, set, 0)
	return slices.Sorted(maps.Keys(set))
}

func (c *Config) expandHosts(list []string, set map[string]bool, depth int) {
	for _, e := range list {
		neg := strings.HasPrefix(e, "~")
		name := hostRefName(e)
		var names []string
		switch {
		case name == "all":
			names = slices.Collect(maps.Keys(c.Hosts))
		case c.Hosts[name] != nil:
			names = []string{name}
		case c.HostGroups[name] != nil && depth <= len(c.HostGroups):
			sub := map[string]bool{}
			c.expandHosts(c.HostGroups[name].Members, sub, depth+1)
			names = slices.Collect(maps.Keys(sub))
		}
		for _, n := range names {
			if neg {
				delete(set, n)
			} else {
				set[n] = true
			}
		}
	}
}

// hostRefName strips "~" and a "+N" preference from a host list entry.
func hostRefName(e string) string { return hostlist.Name(e) }

// APIQueues returns the queues as lib/api sends them (bqueues), highest
// priority first; every queue is open and active, and the counters are
// zero for the controller to fill.
func (c *Config) APIQueues() []*api.Queue {
	var out []*api.Queue
	for _, name := range c.QueueNames() {
		q := c.Queues[name]
		out = append(out, &api.Queue{
			Name:          name,
			Priority:      int32(q.Priority),
			Open:          true,
			Active:        true,
			Description:   q.Description,
			MaxSlots:      int32(q.MaxSlots),
			UserSlotLimit: int32(q.MaxSlotsPerUser),
			HostSlotLimit: int32(q.MaxSlotsPerHost),
			IsDefault:     name == c.Cluster.DefaultQueue,
			RunLimitSec:   int64(q.MaxRunLimit),
			Nice:          int32(q.Nice),
			Hosts:         slices.Clone(q.Hosts),
			Users:         slices.Clone(q.Users),

			MinTasks:           int32(q.MinTasks),
			DefaultTasks:       int32(q.DefaultTasks),
			MaxTasks:           int32(q.MaxTasks),
			MaxMemKb:           int64(q.MaxMem),
			DefaultMemKb:       int64(q.DefaultMem),
			DefaultRunLimitSec: int64(q.DefaultRunLimit),
			RunWindows:         windowStrings(q.RunWindows),
			DispatchWindows:    windowStrings(q.DispatchWindows),
			Exclusive:          q.Exclusive,
			UserShares:         shares(q.Fairshare),
			Preemptive:         slices.Clone(q.Preemptive),
			Preemptable:        slices.Clone(q.Preemptable),
			Administrators:     slices.Clone(q.Administrators),
			ResReq:             q.ResReq,
			PreExec:            q.PreExec,
			PostExec:           q.PostExec,
			GpuReq:             q.GpuReq,
		})
	}
	return out
}

// APIApps returns the application profiles as the API sends them, by
// name (the live counts are the controller's to fill).
func (c *Config) APIApps() []*api.App {
	var out []*api.App
	for _, name := range slices.Sorted(maps.Keys(c.Apps)) {
		a := c.Apps[name]
		var env map[string]string
		if len(a.Env) > 0 {
			env = maps.Clone(a.Env)
		}
		out = append(out, &api.App{
			Name:         name,
			Description:  a.Description,
			ResReq:       a.ResReq,
			Fixed:        slices.Clone(a.Fixed),
			MinTasks:     int32(a.MinTasks),
			DefaultTasks: int32(a.DefaultTasks),
			MaxTasks:     int32(a.MaxTasks),
			RunLimitSec:  int64(a.RunLimit),
			MemLimitKb:   int64(a.MemLimit),
			PreExec:      a.PreExec,
			PostExec:     a.PostExec,
			AllowJobExec: a.JobExecAllowed(),
			JobStarter:   a.JobStarter,
			Env:          env,
			GpuReq:       a.GpuReq,
			Container:    a.Container,
			ExecDriver:   a.ExecDriver,
		})
	}
	return out
}

func windowStrings(ws []Window) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}

func shares(m map[string]int) map[string]int32 {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]int32, len(m))
	for k, v := range m {
		out[k] = int32(v)
	}
	return out
}
