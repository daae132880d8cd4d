// Package lsfimport owns the translation of an LSF configuration directory
// into xce.toml: "xced config import-lsf DIR". It reads LSF's file syntax
// (Parse, ReadFile) and writes the xce.toml that lib/config loads
// (Import), with a Note for every key it did not translate and why. A Note
// marked Loss is policy that changes who may run what (a limit, an access
// list, a resource requirement, a file it could not read): "xced config
// import-lsf" fails on one unless --accept-loss is given. It
// imports lib/config and lib/resreq and nothing else of ours; facts about
// LSF's files are IBM Spectrum LSF 10.1's configuration reference.
//
// # Use
//
//	text, report, err := lsfimport.Import("/opt/lsf/conf")
//	// err: only when the directory cannot be read or holds no LSF file
//	for _, n := range report {
//		fmt.Fprintln(os.Stderr, n) // "lsb.queues:29: CPULIMIT: not translated: ..."
//	}
//
// The text always loads with config.Parse: before returning, Import loads
// it and drops whatever lib/config refuses (a RES_REQ naming an unknown
// resource, a TASKLIMIT whose minimum exceeds its maximum, ...), with a
// note quoting lib/config's message (a loss unless the key is only a
// description, a nice value or the like). The [[limits]] entries come
// last; a lib/config that does not know [[limits]] checks the rest. The text is stable: the same
// directory gives the same bytes. Each section is preceded by a comment
// naming the LSF file and line it came from, and converted values carry
// their LSF original ("# MEMLIMIT 8000 in MB (LSF_UNIT_FOR_LIMITS)").
//
// # The file syntax
//
// Sections are "Begin Name" ... "End Name" (Begin and End in any case). A
// section whose first line is KEY = VALUE is a keyword section (Params);
// otherwise its first line is the column header and each further line a
// row (Columns, Rows), as lsb.hosts Host and HostGroup, lsf.cluster Host,
// lsb.users and lsf.shared Resource are written. A '#' outside double
// quotes starts a comment; a trailing '\' joins the next line (with one
// blank); "#INCLUDE "path"" inserts a file (ReadFile only; relative paths
// from the including file's directory). A row's fields are split at blanks
// outside parentheses, brackets and double quotes, so "(hostA hostB)" and
// "([u1, 5] [default, 1])" are one field each; "()", "-" and a missing
// trailing field are empty (Empty); List splits a field or value into its
// words. A value that is one double-quoted string loses its quotes. KEY =
// VALUE lines outside sections are kept (lsf.conf). Syntax problems (a
// missing End, a row with more fields than columns) are notes, never
// errors.
//
// # Files
//
// Read from DIR: lsf.conf, lsf.shared, lsf.cluster.NAME (the one named by
// lsf.shared's ClusterName, else the first by name), lsb.params, lsb.hosts,
// lsb.users, lsb.queues, lsb.applications and lsb.resources; the lsb.*
// files may also be in LSF's layout, DIR/lsbatch/NAME/configdir. Any other
// lsf.* or lsb.* file is noted as not read; other files are ignored.
// LSF resource connector's resource_connector/hostProviders.json (or a
// hostProviders.json beside lsf.conf) and each provider's templates file
// are read too (hostproviders.go).
//
// # Translations
//
//   - lsf.conf: LSF_UNIT_FOR_LIMITS (the unit of MEMLIMIT and Limit
//     MEM, SWP and TMP; without it KB, LSF's default, is assumed, with a
//     note) -> cluster.unit_for_limits, which governs bare memory amounts
//     in resource requirements as LSF_UNIT_FOR_LIMITS does;
//     LSB_MEMLIMIT_ENFORCE=y -> memlimit_enforce, LSB_JOB_MEMLIMIT=y ->
//     job_memlimit, LSB_STDOUT_DIRECT=y -> stdout_direct, LSB_GPU_REQ ->
//     cluster.gpu_req (lsb.queues and lsb.applications GPU_REQ -> their
//     gpu_req, lsb.params GPU_REQ_MERGE=Y -> cluster.gpu_req_merge; a
//     requirement xce cannot parse is noted); LSF_MASTER_LIST of two hosts
//     or more -> cluster.controllers, each at LSB_MBD_PORT (6881 without
//     it). Nothing else.
//     Resource requirement strings are copied as they are.
//   - lsf.shared: Cluster ClusterName -> cluster.name (the first cluster
//     only). Resource rows -> [resources.NAME] with type written out
//     (LSF's default is Boolean, xce's numeric), description, increasing
//     and consumable (numeric resources only). A resource with INTERVAL
//     is reported by an ELIM: it is kept (a numeric one consumable unless
//     CONSUMABLE is N, as LSF has it), and one note lists these resources
//     with the hosts ResourceMap gives them, for the administrator to
//     install the elims in cluster.elim_dir. RELEASE is noted; built-in
//     names and names xce refuses are noted.
//     HostModel CPUFACTOR -> hosts.NAME.cpu_factor of each host of the
//     model; HostType is noted (xce detects it).
//   - lsf.cluster.NAME: ClusterAdmins Administrators ->
//     cluster.administrators. Host rows -> [hosts.NAME]: model and type
//     unless "!" (detected), RESOURCES: Boolean names -> attributes,
//     name=value -> static resources; server 0 (client-only) hosts and load
//     threshold columns are noted. ResourceMap: "N@[all]" -> the
//     resource's total (a shared pool; one that is not a count is a
//     loss); "value@[h1 h2]" and
//     "value@[default]" -> static per-host values (default: every host
//     without one); an instance without a value ("[hostA]") is where an
//     ELIM reports the resource (one of another resource is noted).
//   - lsb.params: DEFAULT_QUEUE -> cluster.default_queue (the first
//     candidate that is an imported queue; without one, a queue named
//     "default", else the first queue, noted), DEFAULT_PROJECT,
//     DEFAULT_APPLICATION -> default_app, CLEAN_PERIOD (seconds) ->
//     clean_period, MAX_JOB_ARRAY_SIZE -> max_array_size,
//     EADMIN_TRIGGER_DURATION (minutes) -> eadmin_trigger_duration,
//     ACCT_ARCHIVE_AGE (days) x (MAX_ACCT_ARCHIVE_FILE + 1) ->
//     acct_retention (how long lsb.acct records survive archiving; either
//     alone is noted), MAX_USER_PRIORITY -> max_user_priority (bsub -sp).
//     Preemption: PREEMPT_FOR, PREEMPT_JOBTYPE (keywords lowercased,
//     unknown ones noted), PREEMPTABLE_RESOURCES, PREEMPTION_WAIT_TIME
//     (seconds), MAX_JOB_PREEMPT, NO_PREEMPT_RUN_TIME and
//     NO_PREEMPT_FINISH_TIME (minutes, or a percentage kept) -> the
//     [cluster] keys of the same names; PREEMPT_DELAY (seconds) -> every
//     queue's preempt_delay where the queue has none of its own.
//     Everything else
//     is noted, with the xced flag where one exists
//     (JOB_TERMINATE_INTERVAL: --terminate-interval).
//   - lsb.hosts: Host MXJ -> hosts.NAME.slots ("!" = one per CPU, left
//     out); the "default" line's MXJ goes to every host without its own;
//     JL/U -> a [[limits]] entry (hosts, per_user all, slots), the
//     default line's for every host without its own; lines for host
//     types or models are a loss when they set MXJ or JL/U; thresholds
//     and windows are noted. HostGroup -> [host_groups.NAME]; ranges ("gpu[01-16]") are
//     expanded to the hosts lsf.cluster names; wildcards and unknown names
//     are noted and left out; a group left without members is noted and
//     dropped. ComputeUnit -> [[compute_units]] (NAME, MEMBER, TYPE,
//     CONDENSE), finer types first, each type's units in LSF's order;
//     egroup members ("!") are a loss. HostPartition is noted.
//     lsb.params COMPUTE_UNIT_TYPES -> cluster.compute_unit_types.
//   - lsb.users: UserGroup -> [user_groups.NAME] members; USER_SHARES and
//     GROUP_ADMIN are noted. The User section: MAX_JOBS of a user (or of
//     "default") -> users.NAME.max_slots, MAX_PEND_JOBS ->
//     users.NAME.max_pend_jobs; a group's MAX_JOBS -> [[limits]] (users =
//     the group, its total; "group@": per_user); a group's MAX_PEND_JOBS
//     and JL/P are a loss. lsb.params MAX_PEND_JOBS ->
//     cluster.max_pend_jobs.
//   - lsb.queues: PRIORITY, NICE, DESCRIPTION (blanks collapsed), USERS,
//     ADMINISTRATORS, HOSTS (unknown hosts and groups left out, noted;
//     "+N" preferences, "~" exclusions, all, others and none kept),
//     QJOB_LIMIT -> max_slots (the "QUEUE_LIMIT"; LSF's key is
//     QJOB_LIMIT, bqueues MAX), UJOB_LIMIT -> max_slots_per_user,
//     HJOB_LIMIT -> max_slots_per_host, TASKLIMIT or PROCLIMIT "[min
//     [default]] max" -> min_tasks, default_tasks, max_tasks, MEMLIMIT
//     "[default] max" -> default_mem, max_mem, RUNLIMIT "[default] max" in
//     [hour:]minute -> default_run_limit, max_run_limit (a "/host"
//     normalization is dropped, noted: xce limits are wall-clock),
//     RUN_WINDOW and DISPATCH_WINDOW -> run_windows, dispatch_windows,
//     EXCLUSIVE Y -> exclusive, CU[type] -> exclusive_cu, FAIRSHARE
//     USER_SHARES[[name, shares] ...] -> fairshare ("group@" entries
//     noted), PREEMPTION PREEMPTIVE[...] PREEMPTABLE[...] -> preemptive,
//     preemptable (an empty list -> "lower"/"higher"; PREEMPTIVE "+N" levels kept;
//     queues that do not exist or break the priority order noted),
//     TERMINATE_WHEN PREEMPT -> terminate_when = ["preempt"] (LOAD and
//     WINDOW noted), MAX_JOB_PREEMPT, NO_PREEMPT_RUN_TIME,
//     NO_PREEMPT_FINISH_TIME and PREEMPT_DELAY -> the queue's keys of the
//     same names, as lsb.params' are read.
//     JOB_OVERRUN and JOB_UNDERRUN (minutes) -> job_overrun, job_underrun,
//     JOB_IDLE -> job_idle. INTERACTIVE = NO or ONLY -> interactive,
//     RUNTIME -> runtime, PJOB_LIMIT -> a [[limits]] entry (queues,
//     per_host all, slots_per_processor).
//     RES_REQ, PRE_EXEC and POST_EXEC are translated to the queue's
//     deprecated res_req, pre_exec and post_exec, each with a deprecation
//     note. JOB_STARTER is noted (it belongs to a profile in xce), as is
//     every other key, with the reason where there is a specific one.
//   - lsb.applications: NAME, DESCRIPTION, RES_REQ, TASKLIMIT/PROCLIMIT,
//     RUNLIMIT (one value) -> run_limit, RUNTIME -> runtime, MEMLIMIT ->
//     mem_limit, PRE_EXEC,
//     POST_EXEC, JOB_STARTER, ENV_VARS "name='value', ..." -> env,
//     CONTAINER -> container, EXEC_DRIVER -> exec_driver (lib/container
//     parses both; shifter and kubernetes are noted). Nothing
//     is marked fixed: in LSF the job's own -R, -n, -W, -M and environment
//     override the profile's, which is xce's meaning of a profile value
//     that is not fixed. Other keys (CPULIMIT, ...) are noted.
//   - lsb.resources: each Limit (vertical, or each row of a horizontal
//     one) -> a [[limits]] entry: NAME (else "limit_LINE"), the consumers
//     (USERS, PER_USER, QUEUES, PER_QUEUE, HOSTS, PER_HOST, PROJECTS,
//     PER_PROJECT, APPS, PER_APP, LIC_PROJECTS, PER_LIC_PROJECT) as lists,
//     SLOTS, SLOTS_PER_PROCESSOR, JOBS, MEM, SWP and TMP (in
//     LSF_UNIT_FOR_LIMITS, or a percentage) and RESOURCE = [name,count]
//     ... -> resources = { name = count }. A Limit with anything else
//     (ELIGIBLE_PEND_JOBS, a resource not imported, a count beyond int32)
//     is dropped whole, as a loss. Other sections are noted.
//   - LSF resource connector: each provider of hostProviders.json ->
//     [providers.NAME] with kind = "script" and script_dir: scriptPath's
//     "scripts" directory as LSF installs it (scriptPath itself when it
//     holds requestMachines.sh; a relative scriptPath is taken from
//     LSF_SERVERDIR/../.., i.e. LSF_TOP/VERSION). Its templates file,
//     CONFPATH/conf/*_templates.json (the one named after the provider's
//     type when there are several; a relative confPath is under DIR) ->
//     [templates.ID] for each template: maxNumber -> max (at most
//     LSB_RC_MAX_INSTANCES_PER_TEMPLATE, LSF's default 50), attributes
//     ncpus (else ncores) -> slots, mem (MB) -> mem, type, model, ngpus
//     -> gpus, pricing -> price, and the resources of lsf.shared ->
//     resources (Boolean "1", numbers, strings); a template of maxNumber
//     0 is left out; priority and the provider's own keys (imageId,
//     vmType, ...) are noted: the scripts read them from the file.
//     lsf.conf (or lsb.params) LSB_RC_EXTERNAL_HOST_IDLE_TIME (minutes;
//     LSF's default, 60, written out) -> each template's idle_time,
//     LSB_RC_EXTERNAL_HOST_MAX_TTL -> max_ttl, LSB_RC_EXTERNAL_HOST_FLAG
//     -> the Boolean resources every template's hosts carry,
//     LSB_RC_DEFAULT_HOST_TYPE -> the type of templates without one;
//     every other LSB_RC_* key, EBROKERD_* and LSF_MQ_BROKER_HOSTS are
//     noted, and so is policy_config.json. lsb.queues RC_HOSTS ->
//     rc_hosts ("none" -> none), RC_ACCOUNT -> rc_account;
//     RC_DEMAND_POLICY is noted. A hostProviders.json or templates file
//     that cannot be read is a loss.
//
// Units: memory limits are multiplied by LSF_UNIT_FOR_LIMITS and written
// in the largest exact unit ("8000MB", "64GB"); run limits are minutes
// ([hour:]minute) and become Go durations ("12h"); CLEAN_PERIOD is
// seconds.
//
// Where a queue's HOSTS or USERS would be left empty (none of its hosts is
// known, or lib/config refuses the list), xce's default, all, applies: the
// note says so, since the queue's reach widens.
package lsfimport
