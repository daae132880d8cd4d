// Package config owns xce.toml, the cluster's configuration, and the
// layering that turns a submission into an effective job (DESIGN.md,
// "Configuration layering"). It is pure: it reads a file when asked
// (Load) and otherwise only computes; it imports lib/api and lib/resreq
// and nothing else of ours.
//
// # Use
//
//	cfg, err := config.Load("/etc/xce/xce.toml") // or config.Default(host, slots)
//	if err != nil {
//		// err is config.Errors, one "xce.toml:12: queues.short.max_mem: ..." per line
//	}
//	fmt.Print(cfg.Effective()) // every default filled in: for "xced config check"
//	cfg.APIQueues()            // []*api.Queue for bqueues, highest priority first
//	cfg.ExpandHosts(q.Hosts); cfg.UserIn(user, q.Users); cfg.IsAdmin(user)
//
//	res, err := config.Layer(submission, cfg)
//	if err != nil {
//		// *config.Rejection: bsub prints "<text>. Job not submitted."
//	}
//	res.Effective          // the effective api.JobSpec
//	res.Origin["run_limit_sec"].String() // "profile fluent"
//	res.Exec               // pre/post-exec sequence, job starter, environment
//	res.Pend               // limits the scheduler checks; each has its pending reason
//
// testdata/example.toml is a commented configuration an administrator can
// copy; it shows every section and key.
//
// # The file
//
// Sections are tables keyed by name: [cluster], [resources.NAME],
// [hosts.NAME], [host_groups.NAME], [user_groups.NAME], [queues.NAME],
// [apps.NAME] (application profiles) and [projects.NAME]. TOML itself
// refuses a name defined twice within a section; the checks refuse a host
// group named like a host. Unknown keys are errors (go-toml's strict
// mode), with the closest known key suggested. Every mistake found is
// reported, in line order, as "FILE:LINE: KEY: what is wrong".
//
// # Choices where the issue and config.md are silent
//
//   - Memory is a string with a unit ("64GB"; KB, MB, GB, TB or their first
//     letter, any case, 1 GB = 1024 MB) and durations are Go duration
//     strings ("90m", "12h", "1h30m"). A bare number is an error: LSF's
//     unit depends on LSF_UNIT_FOR_LIMITS, and a silent guess is worse
//     than a message. Memory is kept in KB and durations in seconds, the
//     units of api.JobSpec.
//   - A limit or quota of 0 (or left out) means none; a negative one is an
//     error. Queue priority 0 means the default, 1 (LSF's).
//   - cluster.default_queue may be left out when there is one queue; a file
//     without queues gets Default's queue "normal". cluster.name defaults
//     to "xce", default_project to "default", clean_period to 1h and
//     max_array_size to 1000 (LSF's defaults), acct_retention to 30 days
//     (XCE's: LSF keeps lsb.acct until it is archived); acct_retention
//     shorter than clean_period is an error.
//   - A project need not be configured (LSF: -P takes any name); an
//     unconfigured project has no quota. A user group's members and a
//     queue's users cannot be checked against the system's users; only
//     group cycles and malformed names are errors.
//   - Queue and host-group host lists accept host and group names, "all"
//     (every configured host), "~name" exclusions applied in order and
//     "name+N" preferences (kept; ExpandHosts ignores the preference);
//     a queue's list also "others" and "none". Naming an unconfigured host
//     is an error, so a cluster whose hosts only register at run time uses
//     "all". Host ranges (gpu[01-16]) and wildcards are not supported.
//   - Host attributes and static values must be declared under
//     [resources] with their type; a resource with total > 0 is one
//     cluster-wide pool (license tokens), always consumable, and has no
//     per-host values. Resource requirements in the file and in
//     submissions are parsed against these resources, so an unknown
//     resource name is an error at load and at submission (the built-in
//     default declares none).
//   - A queue's task range is min_tasks, default_tasks, max_tasks
//     (TASKLIMIT); its memory and run limits are a ceiling (max_mem,
//     max_run_limit) and a default (default_mem, default_run_limit). A job
//     that sets no limit and gets none from its profile or the queue's
//     default gets the ceiling, as LSF does.
//   - Preemption: preemptive lists queues of lower priority, preemptable
//     queues of higher priority; the words "lower" and "higher" mean all
//     of them (LSF's empty PREEMPTIVE[] and PREEMPTABLE[]). Fairshare is a
//     table of user or group to positive shares. Both, the run and
//     dispatch windows and the per-host slot limit are checked and kept for
//     the scheduler; Window.Contains evaluates a window.
//   - Time windows use LSF's syntax, "[day:]hour[:minute]-[day:]hour[:minute]"
//     with days 0 (Sunday) to 6; a window may span midnight or the week's
//     end; both ends name a day or neither does.
//   - [[limits]] are LSF's lsb.resources Limit sections (limits.go): the
//     consumer lists users, queues, hosts, projects, apps, lic_projects
//     and their per_* forms (not both of a kind), and the resources
//     slots, slots_per_processor (per_host only), mem, swp, tmp (a size,
//     a bare number of MB, or "N%" of each host's maximum, per_host
//     only), jobs and resources (numeric [resources]). Unlike the other
//     limits, slots = 0 or jobs = 0 lets nothing run, as in LSF; a limit
//     must limit something. Errors name the entry as limits.N (from 0).
//
// # Layering choices
//
//   - A profile marks attributes default or fixed with one list:
//     fixed = ["res_req", "tasks", "run_limit", "mem_limit", "env"]; an
//     attribute not listed is a default the job may override. Fixing an
//     attribute the profile does not set is a load error. A fixed
//     res_req still lets the job AND select[] terms and add sections and
//     rusage resources the profile does not set (resreq.MergeProfile); a
//     fixed tasks, run_limit or mem_limit refuses any other -n, -W, -M
//     (repeating the profile's value is accepted).
//   - Precedence of each limit: the job's option, the profile's value, the
//     queue's default, the queue's ceiling. A job's option over the
//     ceiling is refused; a profile's value over it is capped at it (in
//     LSF a profile's limits cannot override the queue's hard limits).
//     Tasks: -n, the profile's
//     default_tasks (else min_tasks), the queue's default_tasks (else
//     min_tasks), 1. The result must lie within both the profile's and the
//     queue's task range.
//   - The queue-level res_req of an imported configuration is merged last
//     with resreq.MergeLSF(merged, nil, queue); queue pre_exec runs before
//     the profile's, queue post_exec after it. Their origin part is marked
//     deprecated and Effective prints them with a comment saying so.
//   - Pre/post-exec: Effective keeps the job's own -E/-Ep in pre_exec and
//     post_exec; Result.Exec has the whole sequence in running order
//     (queue, profile, job before; job, profile, queue after).
//     allow_job_exec = false makes a job's -E or -Ep a rejection naming
//     the profile.
//   - Env: the profile's variables are applied over the job's
//     environment, except those the job sets itself, unless env is fixed.
//     Layer reads them from the submission's env (fill it in before
//     calling). The job starter comes from the profile only.
//   - Ceilings and quotas are checked against the job's minimum: min_tasks
//     slots (a -n min,max job can start with min), its effective memory
//     limit, its GPUs, its rusage of shared resources. A job that could
//     never start is rejected naming the ceiling; otherwise the limit is
//     returned in Result.Pend for the scheduler. The per-host slot limit
//     rejects only a job that must fit on one host (span[hosts=1] or one
//     slot); for others its check needs one slot per host.
//   - What a job holds against a project's memory quota: its effective
//     memory limit, unless that is only the queue's ceiling (nobody set a
//     limit); else its rusage[mem] times its minimum tasks; else nothing.
//     GPUs: bsub -gpu's num= (per host; "-" or no num= is 1). Shared
//     resources: the rusage amount when the job starts, per job. Only a
//     simple requirement whose rusage has no || alternatives is checked
//     against shared totals.
//   - Messages: a rejection is the text bsub prints before ". Job not
//     submitted." (it does not end with a period): "Job requests 512 GB
//     memory; queue short allows at most 64 GB". A value that came from
//     the profile says so: "Job requests a run limit of 24h (from
//     application profile big); queue short allows at most 1h". LSF's own
//     texts are kept where LSF has one ("short: No such queue", "fluent: No
//     such application profile", "short: User cannot use the queue", "Bad
//     resource requirement syntax: column 12: ..."). Pending reasons are
//     LSF's for queue limits and shared resources; for project quotas,
//     which LSF reports as generic resource limits, they name the project
//     and the quota: "Project genome has reached its quota of 200 job
//     slots".
//   - Origins are keyed by api.JobSpec field names; only values that are
//     set have one. An array job is layered once; each element takes the
//     same slots from the pend checks.
package config
