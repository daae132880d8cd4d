// Package sched owns scheduling decisions: given a Snapshot of the
// cluster (hosts with their attributes, load and allocations; queues and
// their policy; limits and quotas; cluster-wide shared resources; pending
// jobs) and the clock it contains, Schedule returns the placements, the
// slot reservations made for jobs that must wait, and for every job it did
// not place the reasons, one line each, as bjobs -p prints them. It is
// pure: it imports lib/resreq and the standard library only, reads no
// clock, and the same snapshot always gives the same Decision. It does not
// write anything: the controller persists and launches what it returns
// (DESIGN.md, "The scheduler only decides").
//
// Look runs step 1 below alone and returns what it computed (the values
// select reads, what running jobs reserve of each host and shared
// resource, the fairshare accounts' running slots): bhosts -l and -s,
// bqueues -r and the -R host filters of bhosts, lshosts and lsload show
// the scheduler's own accounting. HostListIncludes reads a queue's host
// list as the scheduler does (bqueues -m).
//
// # Units
//
// Memory (mem, swp, tmp, and site resources defined with units) is in MB,
// LSF's default LSF_UNIT_FOR_LIMITS: the values hosts report, rusage
// amounts (resreq converts 4GB to 4096), limits and usage. Times are
// time.Time and time.Duration; fairshare usage is turned into hours, as
// LSF's formula expects.
//
// # One cycle
//
//  1. Accounting. Every running allocation is charged to its hosts, its
//     queue, the limits it counts against and the shared resources. For a
//     gauge resource (a load index the host reports as currently available:
//     mem, swp, tmp, r15s, ut, ...) the host is charged only the unused part
//     of each reservation, max(0, reserved - used), since the reported figure
//     already excludes what the job uses; limits and quotas count
//     max(reserved, used). Any other host resource (ngpus_physical, site
//     numeric resources) is a counter: the host reports its total and the
//     whole reservation is subtracted. Reservations follow their duration
//     and decay (resreq.Usage.AmountAt of the time the job has run).
//     Cluster-wide resources named in Snapshot.Shared (license tokens) are
//     reserved from those totals. The values select and order read are the
//     host's, net of the running reservations.
//  2. Order. Queues by priority (ties: their order in Snapshot.Queues);
//     within a queue, -sp priority, then the order of Snapshot.Jobs (which
//     is submission order, with btop/bbot applied by the controller moving
//     jobs in it). In a queue with Fairshare, the next job is always the
//     first one of the user with the highest dynamic priority, shares /
//     (cpu*CPU_TIME_FACTOR + run*RUN_TIME_FACTOR + (1+slots)*RUN_JOB_FACTOR),
//     recomputed after each of that user's placements: a user with 10,000
//     pending jobs and one with 10 alternate.
//  3. Buckets. Jobs with identical queue, user, project, requirement, -n,
//     -m, -x and usable alternatives share a bucket. The hosts
//     that pass the checks that do not change during a cycle (state, queue
//     hosts, -m, select) are found once per queue, -m list and requirement,
//     in the requirement's order[] (default r15s:pg), so select runs once per
//     host for them (on two goroutines from 1,000 hosts on, each filling
//     its own half of the result, so the outcome is the same). Each bucket keeps its own list of hosts that may still
//     take one of its jobs, dropping hosts that fill up; once a job of a
//     bucket cannot be placed, the rest of the bucket pends with the same
//     reasons without being tried, except, when slots are held for
//     reservations, jobs with a shorter run limit (they may backfill).
//  4. Placement, for each part of the requirement (the job, or each term
//     of a compound requirement; alternatives {..}||{..} and rusage
//     alternatives are tried in order, the first that fits wins): limits
//     cap the slots (queue QJOB_LIMIT and UJOB_LIMIT, Limit entries); then
//     hosts are taken in order, each offering its free slots less
//     reservations held for other jobs, HJOB_LIMIT and per-host limits, and
//     as many slots as its unreserved rusage amounts allow.
//  5. Reservation. In a queue with SlotReserve, a job that does not fit
//     gets the earliest start its slots allow, computed from the run limits
//     of the jobs holding slots, and holds the hosts and slots it would
//     start on. Later jobs may use held slots only if their run limit ends
//     before that start (backfill), so the start is never delayed by them.
//
// # Choices where the issue and LSF are silent
//
//   - Span: span[hosts=1] takes the first host (in order) with at least
//     the minimum of -n and gives it up to the maximum. span[ptile=N]
//     gives N slots per host and lets the last host take the remainder;
//     ptile='!' uses the host's MaxSlots, and per-type ptile values match
//     the host's type or model. span[block=N] gives whole blocks, as many
//     as fit, host after host. span[stripe] deals slots one at a time over
//     every usable host (at most StripeMax each). Without span, hosts are
//     filled in order.
//   - same[]: hosts are grouped by their values of the named resources;
//     the first group (in host order) that holds the whole job is used.
//   - type==local: applied (resreq.Defaults) only when Job.Local.Type is
//     set; a controller that leaves it empty gets no implicit type term.
//   - rusage amounts are per host (LSF 10.1 with RESOURCE_RESERVE_PER_TASK
//     =N) unless written /task (per slot) or /job (once, on the first host
//     of the part). For a shared resource a per-host amount is taken once
//     per job.
//   - Exclusive: a job with -x, or any job of a queue with Exclusive, needs
//     a host running nothing and no other job is placed there while it
//     runs; it gets the slots it asked for.
//   - Compound requirements: each term is placed after the previous ones,
//     seeing their slots and reservations; terms may share a host.
//     Compound jobs are not planned ahead (no reservation).
//   - Reservations plan slots only; the rusage host amounts of a reserved
//     job are held from now (conservatively) for jobs that would still be
//     running at its start. A job whose start depends on running jobs
//     without a run limit reserves "for when they finish" (Reservation.Start
//     zero): then only jobs with a run limit, or that fit beside it, start
//     on its hosts. At most 256 reservations are made in a cycle. A job
//     blocked by a limit, or by rusage or a shared resource while its
//     slots are free now, reserves nothing.
//   - Backfill needs only a run limit (-W); LSF's queue BACKFILL switch is
//     not modelled, the queue's SlotReserve is what makes jobs wait in
//     order.
//   - Fairshare: users only (no user groups); shares default to the
//     "default" entry, else 1. Past usage decays so that one hour counts
//     0.1 hour after HistHours hours (LSF's HIST_HOURS); the run time of
//     running jobs of the queue is added as it is.
//   - Limits (lsb.resources, limits.go): a limit without hosts caps the
//     job's slots, jobs and reserved amounts before hosts are chosen; a
//     per-host or host-list limit caps each host, and a host list is
//     checked as a whole once the job is placed.
//     A resource quota is checked with the job's minimum slots.
//   - The values select and order see are those at the start of the
//     cycle; within the cycle, capacity is tracked by slots and rusage.
//     They see slots as the host's free job slots and maxslots as its
//     MaxSlots, so order[-slots] packs jobs and order[slots] spreads them.
//   - A compound requirement's slots are the sum of its terms' counts,
//     whatever -n says.
//   - Hosts in -m or queue HOSTS may be host names, group names (nested),
//     "all", and "~name" to leave a host or group out; a "+N" preference
//     suffix is accepted and ignored; "others" is not supported.
//
// # GPUs
//
// A host that lists its devices (Host.GPUs) has them accounted one by
// one, as instances of the resource ngpus_physical (inst.go's pools,
// below): every running allocation holds the devices named in its
// HostAlloc.GPU (an exclusive holder, or a count of sharing jobs, and
// the gmem reserved), and a job with a GPU requirement (Job.GPU, or on
// such hosts rusage[ngpus_physical=N], which LSF treats as -gpu num=N)
// gets specific devices: num per host (or per task, which then bounds
// the host's slots), only devices no job uses when it is exclusive
// (j_exclusive=yes or mode=exclusive_process), never a device an
// exclusive job holds, gmem fitting the device's total less
// max(reserved, reported used), gmodel among the device's names (and
// its -mem within 10% of the device's total). Among the usable devices
// one model is preferred when it has enough, then the lowest indices
// (exclusive) or the fewest jobs (shared; the most with gpack). On such
// hosts the ngpus_physical counter is not charged (the devices replace
// it) and select/order read ngpus_physical as the devices no job uses.
// A host without a device list keeps ngpus_physical as a counter, and a
// job with -gpu cannot run there. Reservations plan slots only, not
// devices. A running job with rusage[ngpus_physical] but no device list
// (dispatched before its host listed devices) is charged the devices a
// shared job would get now.
//
// # Named instances
//
// A host that lists instances of a resource (Host.Instances) hands them
// out by name: the resource is a counter of their number for select,
// order and rusage (held whole until the job ends), and each placement
// gets the instances its rusage reserves there in HostAlloc.Instances,
// none that a running job or an earlier placement holds (instances.go).
//
// Both are one mechanism (inst.go): each instance resource of a host is
// an index space in the host's order with what holds each instance,
// alone or shared, charged from the allocations that name them (so what
// running jobs hold is restored after a restart from the allocations
// the controller keeps); a placement, a claim and a claim's job are
// given the first usable ones, through the filters a resource adds (a
// GPU's model and memory).
//
// # Cores
//
// A host that lists its cores (Host.CPUs: the controller lists them where
// the configuration enforces cpu, resource_enforce) binds every job to
// cores of its own: a job gets one core per slot it has there, and no two
// running jobs ever hold the same core; the worker makes the job's cpuset
// exactly those cores. Every running allocation holds the cores named in
// its HostAlloc.CPUs (kept with the job, so they stay held across a
// controller restart); one without a list, dispatched before the host
// bound cores, is charged the cores a new job would get. A job is given
// the first run of consecutive free core numbers that holds all its
// slots on the host, else the lowest free cores. The host's free slots
// count no more than its free cores, so a host whose MaxSlots exceed its
// cores runs at most one slot per core; one with fewer free cores than a
// job needs there pends it with "Job requirements for reserving resource
// (cores) not satisfied" (LSF's wording for a resource taken now, as for
// GPUs; LSF publishes no affinity-specific reason). An exclusive job
// (-x, or an exclusive queue) gets every core of its hosts: nothing else
// may run there, and LSF's affinity jobs may likewise take whole
// processor units exclusively (exclusive=(core, alljobs)), so leaving
// cores idle inside the job's own host would only slow it down.
// Compound terms placed on the same host get distinct cores.
// Reservations plan slots only, not cores.
//
// # Pending reasons
//
// A job-level reason is one line in LSF's wording where LSF has one ("The
// queue has reached its job slot limit", "User has reached the per-user job
// slot limit of the queue", ...), followed by a line naming the limit and
// the figures. Host-level reasons are aggregated over every host, as
// Kubernetes' FitError does, one line per LSF reason with its host count
// ("Closed by LSF administrator: 2 hosts", "Not enough job slot(s): 3
// hosts"), most hosts first, followed by the terms of the requirement that
// failed: "select[mem > 64000]: no host has that much memory (largest: 23
// GB)", "select[type == X86_64]: not satisfied on 3 hosts", "rusage[mem=
// 8000]: 3 hosts have less than 8000 MB unreserved". When every host could
// take part of the job but not all of it: "Not enough job slot(s): 6 free
// on 2 usable hosts, the job needs 8" (or LSF's "Not enough hosts to meet
// the job's spanning requirement" under span or same). A job holding a
// reservation adds "Slots reserved on N hosts; estimated start ...".
// A GPU job's host reasons use LSF's "Job's resource requirements not
// satisfied" for hosts that can never serve it and "Job requirements for
// reserving resource (ngpus_physical) not satisfied" for those whose
// GPUs are taken now (gpu.md §6: LSF publishes no GPU-specific list),
// followed by one line over all hosts: "-gpu num=2:gmodel=V100: 0/12
// hosts: 4 have fewer than 2 free GPUs, 3 have no GPU of model V100, 5
// have no GPUs".
//
// # Building a Snapshot in the controller
//
//   - Now: the cycle's time.Now(). Schema: the cluster's resreq.Schema
//     (built-ins plus configured site resources).
//   - Hosts: one per configured host (the single-host controller: one, its
//     own name, MaxSlots = cfg.Slots). Values: Schema.NewHost() filled with
//     the static attributes (type, model, ncpus, maxmem, site resources)
//     and the worker's last load report (mem, swp, tmp AVAILABLE in MB,
//     r15s, r1m, ut, pg, ...). Status: HostUnavail while the worker is not
//     connected (and reset Values, DESIGN.md), HostClosed after badmin
//     hclose.
//   - HostGroups: the configuration's host groups.
//   - Queues: from the configured queues: api.Queue.Priority, !Active ->
//     Inactive, MaxSlots -> SlotLimit, UserSlotLimit, HostSlotLimit, Hosts;
//     Exclusive, SlotReserve and Fairshare from the queue configuration
//     (Fairshare.Usage from the accounting of finished jobs).
//   - Limits: xce.toml's [[limits]] (LSF's lsb.resources), project quotas
//     (Per: PerProject, Projects: [name]); UserGroups for their user lists.
//   - Shared: configured totals of cluster-wide resources.
//   - Jobs: c.pending in submission order (btop/bbot reorder it), only
//     records in PEND that are not held, whose begin time has passed,
//     whose dependency is met and whose array limit allows another
//     element: the controller keeps deciding those itself (its reasons for
//     them stay its own). Key {JobId, ArrayIndex}; User, Queue, Project
//     from the effective spec; Req: the merged effective requirement
//     (resreq.Join of the -R strings, merged with the application profile
//     and queue), parsed once per distinct string and shared between jobs
//     (the pointer is the bucket's cache key); MinSlots/MaxSlots from
//     minTasks/maxTasks; Hosts from -m; Exclusive from -x; Priority from
//     -sp; Submit from SubmitTime; RunLimit from run_limit_sec (or the
//     queue's RUNLIMIT).
//   - Running: every RUN, SSUSP and USUSP job (a suspended job keeps its
//     slots, except one suspended by preemption: Alloc.Preempt, with
//     Stopped for one its user stopped since and Backfill from the
//     Placement's): Start from StartTime, its ExecHosts with their slots, the
//     rusage set recorded at dispatch (the Placement's HostAlloc.Rusage)
//     and the usage its worker last reported (Used, MB), and the
//     devices and cores it holds (HostAlloc.GPU and CPUs, kept from its
//     Placement).
//   - GPUs: Host.GPUs from the worker's device report (gpu.SchedGPUs);
//     Job.GPU from the merged -gpu requirement (gpu.Merge, then
//     (*gpu.Req).Sched()).
//   - Cores: Host.CPUs = 0..ncpus-1 (the worker's report) on hosts whose
//     containment enforces cpu, nil elsewhere; a running job's
//     HostAlloc.CPUs from its record (HostSlots.cpus).
//
// Then for each Placement: write the job as RUN on Hosts (ExecHosts,
// AllocSlots = Slots, and keep each HostAlloc's Rusage for the next
// snapshots) before launching it; for each pending job store
// Decision.Pending[key] joined for bjobs -p; Reservations give bjobs -l's
// estimated start.
package sched
