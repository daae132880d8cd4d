package sched

import (
	"fmt"
	"time"

	"xce/lib/resreq"
)

// JobKey names one job or one array element (Index 0 for a plain job).
type JobKey struct {
	ID    int64
	Index int32
}

// String returns "12" or "12[3]", as bjobs prints a job.
func (k JobKey) String() string {
	if k.Index == 0 {
		return fmt.Sprint(k.ID)
	}
	return fmt.Sprintf("%d[%d]", k.ID, k.Index)
}

// HostStatus is what the controller knows about a host's availability.
type HostStatus uint8

// Host states. Only HostOK hosts take jobs.
const (
	HostOK      HostStatus = iota
	HostClosed             // badmin hclose
	HostLocked             // lim locked
	HostUnavail            // the worker is not connected
)

// Host is one execution host as the controller sees it at the start of a
// cycle.
type Host struct {
	Name     string
	Status   HostStatus
	MaxSlots int // MXJ: job slots of the host
	// Values holds the host's static attributes (type, model, ncpus, site
	// resources) and the load indices its worker last reported (mem, swp
	// and tmp are the AVAILABLE amounts in MB, r15s, ut, ...), built with
	// Schema.NewHost. A counter resource (a consumable site resource such
	// as ngpus_physical) holds the host's total. nil: the host defines no
	// resource.
	Values *resreq.Host
	// GPUs are the host's GPU devices (at most 64). On a host that lists
	// them, GPU jobs get devices (GPUAlloc) and the ngpus_physical select
	// and order read is the devices no job uses; a host without a list
	// keeps ngpus_physical as a plain counter for rusage.
	GPUs []GPU
	// CPUs are the host's cores (logical CPU numbers) when it binds jobs
	// to cores (resource_enforce cpu): every job gets its own, one per
	// slot, in HostAlloc.CPUs, and no two jobs share one. nil: the host
	// does not bind jobs to cores.
	CPUs []int
	// Instances are the host's named instances by resource ("fpga" ->
	// fpga0, fpga1; instances.go): a job's rusage of the resource gets
	// that many of them by name. Values should hold the resource as
	// their count. nil: none.
	Instances map[string][]string
}

// Queue is a queue's scheduling policy (lsb.queues).
type Queue struct {
	Name     string
	Priority int  // PRIORITY: higher is scheduled first
	Inactive bool // badmin qinact (or a closed run window)
	// Hosts is HOSTS: host names, host group names, "all"; a trailing
	// "+N" preference is ignored. Empty: every host.
	Hosts []string
	// Exclusive: every job of the queue runs host-exclusive, as if it had
	// been submitted with -x. (LSF's EXCLUSIVE=Y, which only allows -x,
	// is checked by the controller at submission.)
	Exclusive     bool
	SlotLimit     int // QJOB_LIMIT: slots the queue's jobs may use; 0 none
	UserSlotLimit int // UJOB_LIMIT: slots each user's jobs may use in the queue
	HostSlotLimit int // HJOB_LIMIT: slots the queue's jobs may use on one host
	// SlotReserve (SLOT_RESERVE): a job that does not fit holds the slots
	// it will start on, computed from the run limits of running jobs;
	// other jobs may use them only if they finish before (backfill).
	SlotReserve bool
	// Fairshare, when set, orders the queue's jobs by their users'
	// dynamic priority instead of first come first served.
	Fairshare *Fairshare
	Preempt   QueuePreempt // preemption (preempt.go)
}

// Fairshare is a queue's FAIRSHARE policy between users.
type Fairshare struct {
	// Shares per account: a user, or a user group its members charge with
	// bsub -G (Job.Account); "default" applies to accounts not listed. An
	// account with no entry and no default has 1 share.
	Shares map[string]int
	// Usage is each user's accumulated history in the queue (finished
	// jobs' CPU and run time), as of its At time; the scheduler decays it
	// to Snapshot.Now and adds the run time of running jobs itself.
	Usage map[string]FairUsage
	// HistHours: one hour of past usage counts 0.1 hour after HistHours
	// hours (LSF's HIST_HOURS); 0 means 5.
	HistHours float64
	// Factors of LSF's dynamic priority formula; 0 means LSF's default
	// (CPU_TIME_FACTOR 0.7, RUN_TIME_FACTOR 0.7, RUN_JOB_FACTOR 3).
	CPUTimeFactor, RunTimeFactor, RunJobFactor float64
}

// FairUsage is one user's accumulated usage.
type FairUsage struct {
	CPU, Run time.Duration
	At       time.Time
}

// Per says how a Limit counts its consumers.
type Per uint8

// Per values: PerNone counts all matching jobs together; the others keep
// one count per user, project, queue or host.
const (
	PerNone Per = iota
	PerUser
	PerProject
	PerQueue
	PerHost
)

// Limit is a resource allocation limit (an lsb.resources Limit section,
// xce.toml's [[limits]]), a project's quota or a user's MAX_JOBS. A job
// counts against it when it matches every consumer list given (an empty
// list matches all); the Per lists make one limit per member instead of
// one for all of them together (see limits.go and the package doc).
//
// Consumer lists hold names, group names (user groups in Snapshot.
// UserGroups, host groups in Snapshot.HostGroups), "all", and "~name" to
// leave a name or a group's members out.
type Limit struct {
	Name                    string
	Queues, Users, Projects []string
	Apps, LicProjects       []string
	// Hosts restricts the limit to the slots and amounts jobs hold on
	// these hosts (all of them together; PerHosts: each on its own).
	Hosts []string
	// One limit for each member of these lists (user groups count each
	// member user on their own).
	PerUsers, PerQueues, PerProjects, PerApps, PerLicProjects, PerHosts []string
	// Per is a shorthand for the quotas the controller builds: PerUser,
	// PerProject and PerQueue count each user, project or queue the
	// matching lists let in on its own; PerHost each host of Hosts (or
	// every host).
	Per   Per
	Slots int // 0: no slot limit; NoneAllowed (< 0): not one slot
	// SlotsPerProcessor limits each host's slots to this many times its
	// processors (ncpus), rounded down; per host only.
	SlotsPerProcessor float64
	Jobs              int // RUN, SSUSP and USUSP jobs; 0: no limit; NoneAllowed: not one
	// Resources limits the amounts jobs reserve (rusage), e.g. "mem" in
	// MB or "ngpus_physical"; a job counts max(reserved, used).
	Resources map[string]float64
	// HostPercent limits mem, swp or tmp to this percentage of each
	// host's maxmem, maxswp or maxtmp; per host only.
	HostPercent map[string]float64
}

// NoneAllowed is a Limit's Slots or Jobs of LSF's SLOTS=0 or JOBS=0:
// nothing may be used (0 means no limit).
const NoneAllowed = -1

// Job is a pending job the controller wants placed: one that is not held,
// whose begin time has passed, whose dependency is met and whose array
// limit allows another element.
type Job struct {
	Key                  JobKey
	User, Queue, Project string
	App, LicProject      string // -app; the licence project (limits only)
	// Account is the fairshare account the job is charged to in its
	// queue (a user group holding shares, bsub -G); "" means User.
	Account            string
	Req                *resreq.ResReq // effective requirement; nil: none
	Local              resreq.Local   // for type==local; see the package doc
	MinSlots, MaxSlots int            // -n min,max; 0: 1
	Hosts              []string       // -m: hosts and host groups
	Exclusive          bool           // -x
	Priority           int            // -sp (higher first)
	Submit             time.Time
	RunLimit           time.Duration // -W (wall clock); 0 none
	// GPU is the job's effective GPU requirement (-gpu merged with the
	// queue, profile and cluster); nil: none, except that
	// rusage[ngpus_physical=N] asks for N shared GPUs on hosts that list
	// their devices. The rusage of ngpus_physical that LSF adds for -gpu
	// may be in Req too: on hosts with devices it is not counted twice.
	GPU *GPUReq
	Rsv string // bsub -U: the advance reservation (AdvRsv.ID); "" none
	// JobGroup is bsub -g's group path ("/a/b"; "" none), for the job
	// group limits (jobgroup.go).
	JobGroup string
	// Claim is bsub -claim: the standalone claim (Claim.Name) whose
	// holdings the job uses (claim.go); "" none.
	Claim string
}

// HostAlloc is the part of a job on one host.
type HostAlloc struct {
	Host  string
	Slots int
	// Rusage is the rusage set reserved by the part of the requirement
	// this host runs (nil: nothing). Amounts are per host unless the
	// usage names /task (per slot) or /job (once, on the Lead host).
	Rusage resreq.UsageSet
	// Lead is the first host of each part (compound term) of the job.
	Lead bool
	// Used is what the job actually uses on the host, as its worker
	// reports (mem in MB ...); a gauge resource is charged max(reserved,
	// used). nil in placements.
	Used map[string]float64
	// GPU is the devices the job holds on the host (nil: none). The
	// controller keeps a placement's GPU with the job and gives it back in
	// every later snapshot's Running, so devices stay held across
	// restarts and are free again once the Alloc is gone.
	GPU *GPUAlloc
	// CPUs are the cores the job holds on the host, on a host that lists
	// them (Host.CPUs); nil otherwise. Kept with the job and given back
	// in later snapshots' Running, as GPU is.
	CPUs []int
	// Instances are the named instances the job holds on the host, by
	// resource (instances.go); nil: none. Kept with the job and given
	// back in later snapshots' Running, as GPU is.
	Instances map[string][]string
}

// Alloc is a running (or suspended) job holding resources.
type Alloc struct {
	Job                  JobKey
	User, Queue, Project string
	App, LicProject      string
	Account              string // fairshare account; "" means User
	Start                time.Time
	RunLimit             time.Duration // 0: unknown end
	Exclusive            bool
	Hosts                []HostAlloc
	// CUExcl is the compute unit type whose units the job uses
	// exclusively (cu[excl]); "" none.
	CUExcl   string
	Rsv      string       // the advance reservation it runs in; "" none
	Preempt  AllocPreempt // preemption state (preempt.go)
	JobGroup string       // bsub -g: counts against its groups' limits
	Claim    string       // the claim whose holdings it uses (claim.go); "" none
}

// Snapshot is everything one scheduling cycle reads.
type Snapshot struct {
	Now    time.Time
	Schema *resreq.Schema // nil: the built-in resources only
	Hosts  []Host
	// HostGroups maps a group name to its members (hosts or groups).
	HostGroups map[string][]string
	// UserGroups maps a user group's name to its members (users or
	// groups, "all"), for Limit's user lists.
	UserGroups map[string][]string
	Queues     []Queue
	Limits     []Limit
	// Shared holds the totals of cluster-wide resources, such as license
	// tokens: rusage[lic_x=2] reserves from these.
	Shared  map[string]float64
	Jobs    []Job // pending, in submission order
	Running []Alloc
	// NoReasons: the caller reads only the placements and reservations
	// (a simulator): Decision.Pending stays empty and no reason is
	// worked out. The placements and reservations are the same.
	NoReasons bool
	// OnlyPlacements: the caller reads only Decision.Placements (a
	// simulator; set NoReasons too). A job that cannot fit in the slots
	// still free is not tried unless its failure would hold slots for a
	// reservation, and the cycle stops once no slot is free: the
	// placements are the same, the reservations not all made.
	OnlyPlacements bool
	// Scratch, when set, is memory that Schedule reuses from one cycle to
	// the next instead of allocating it again (a simulator runs a cycle
	// per event); nil: none. The decision is the same with it or without
	// it. One Scratch serves one cycle at a time; with one, a host's
	// Values are not changed in place from one cycle to the next (give a
	// new one instead).
	Scratch *Scratch
	// CU is the cluster's compute units (cu[] placement, cu.go); nil:
	// none.
	CU *ComputeUnits
	// AdvRsvs are the advance reservations (resv.go).
	AdvRsvs []AdvRsv
	// Preempt holds the cluster's preemption parameters (preempt.go).
	Preempt PreemptParams
	// Ledger, when set, keeps the running jobs' charges on hosts and
	// queues from one cycle to the next (ledger.go): the caller tells it
	// which jobs joined and left Running since the last cycle. nil:
	// every running job is charged afresh. The decision is the same.
	Ledger *Ledger
	// JobGroupLimits are the job groups' -L limits (jobgroup.go).
	JobGroupLimits []JobGroupLimit
	// Claims are the standalone claims, held and pending, the pending
	// ones in the order they are allocated (claim.go).
	Claims []Claim
	// GangGroups are the job groups whose jobs start together (gang.go).
	GangGroups []GangGroup
}

// Scratch is the memory successive cycles reuse (Snapshot.Scratch). The
// zero value is ready.
type Scratch struct {
	hosts []hostState
	nums  []float64     // the hosts' values as select and order read them
	vals  []resreq.Host // their headers
	// byName indexes the hosts of names, reused while the next cycle's
	// hosts have the same names in the same order.
	byName map[string]int
	names  []string
	// kept is each host's copy of its values as select and order read
	// them, reused while its Values pointer is the same; dirty the
	// indices the last cycle wrote in them.
	kept       []keptVals
	keptSchema *resreq.Schema
	dirty      []int
	// gen counts the changes of kept's sources; orders are the host
	// orders of order[] sections whose keys the cycles do not write,
	// sorted at generation gen.
	gen    uint64
	orders map[string]keptOrder
	maps   *cycleMaps // the last cycle's maps, for the next (cyclemaps.go)
	open   openBits   // the last cycle's open hosts' set (open.go)

	allocs *hostAllocPool // placements' Hosts handed back (recycle.go)
	cyc    *cycle         // the last cycle's struct, for the next (cyclemaps.go)
}

type keptVals struct {
	src         *resreq.Host
	vals        resreq.Host
	free, total int // the slots written in vals; -1: none yet
}

type keptOrder struct {
	gen uint64
	idx []int
}

// Placement starts one job.
type Placement struct {
	Job   JobKey
	Hosts []HostAlloc
	Slots int
	// Alternative is the index of the alternative requirement
	// ({..} || {..}) used; 0 otherwise. The rusage alternative chosen
	// (rusage[a || b]) is the Rusage of the hosts.
	Alternative int
	// Victims are the running jobs to preempt (suspend, or end where
	// their queue says so) before the job starts (preempt.go).
	Victims []JobKey
	// Backfill: the job starts in slots a reservation holds for another
	// job, ending before it needs them (kept in Alloc.Preempt.Backfill).
	Backfill bool
	// Gang numbers the gang (gang.go) the job starts with, from 1; 0:
	// none. The placements with the same Gang start all or none: a
	// caller that drops one drops the others.
	Gang int
}

// Reservation is a job that did not fit now, holding the slots it will
// start on (queues with SlotReserve).
type Reservation struct {
	Job   JobKey
	Start time.Time // estimated start; zero when running jobs have no run limit
	Hosts []HostAlloc
}

// Decision is the result of one cycle.
type Decision struct {
	Placements   []Placement
	Reservations []Reservation
	// Pending holds, for every job of the snapshot that was not placed,
	// the reasons, one line each, as bjobs -p prints them (without ";").
	Pending map[JobKey][]string
	// Buckets is how many groups of jobs with identical requirements the
	// cycle placed together (metrics).
	Buckets int
	// Resumes are the jobs suspended by preemption that have their slots
	// back and resume now (preempt.go).
	Resumes []JobKey
	// Claims are the pending claims allocated this cycle, and
	// ClaimPending, by name, the reasons of those that still pend
	// (claim.go).
	Claims       []ClaimPlacement
	ClaimPending map[string][]string
}
