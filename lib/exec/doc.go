// Package exec owns the shepherd: the process that runs one batch job to
// its end on an execution host and records how it ended. The worker
// (lib/worker) starts it as `xced shepherd LAUNCHFILE`, in its own session
// and already as the job's user, so the shepherd never changes credentials.
// ShepherdMain is that process; Run does the work; ExpandPattern is the %J/%I
// expansion bjobs and bpeek share.
//
// # Files and the started pipe
//
// The shepherd runs as the job's user, so everything it writes in the
// user's directory is the user's to forge; the worker trusts none of it
// beyond the job's own record (docs/security.md). What the worker believes
// of the job's end and usage comes through root's records (record.go):
// files in root's directory the worker hands over open on descriptors 4
// (ResultFD, the FINISH or PEND_AGAIN event) and 5 (UsageFD, the latest
// sample), which the shepherd makes close-on-exec. The shepherd makes
// itself non-dumpable first (PR_SET_DUMPABLE 0), so that the job, running
// as the same user, can neither ptrace it nor open its descriptors
// through /proc; a job that kills it leaves no record, whatever it writes. It writes to no pipe of xced except the
// started pipe, so it and the job survive a `kill -9` of xced, which then
// finds the job again through these files:
//
//	LAUNCHFILE                 api.Launch, binary protobuf: root's, mode 0600, in the
//	                           job's root-owned directory; the worker hands it over
//	                           open as standard input (see ShepherdMain)
//	LimitsFile(LAUNCHFILE)     api.JobSpec of new limits, root's, read on SIGUSR1
//	Launch.job_file            the job script, mode 0700
//	<job_file>.hostfile        one execution host per slot, one a line (LSB_DJOB_HOSTFILE)
//	<job_file>.affinity        a bound job's slots and their cores (LSB_AFFINITY_HOSTFILE)
//	Launch.start_file          api.Event{type START, state RUN, pid, hosts, exec_home,
//	                           exec_cwd, time}, written once the job's process runs
//	<status_file>.usage        api.ResourceUsage, rewritten every 5 s while the job runs
//	Launch.status_file         api.Event{type FINISH, ...} once the job has ended
//	job.spool_output           stdout and stderr of a job without -o, and its report
//	                           (<job_file>.out when the launch names none); of a job
//	                           with -o, its spooled output (see Standard files)
//	<spool_output>.err         a spooled job's separate -e output
//
// The job file, start, status, usage and spool files are in the user's
// own directory. Every protobuf file is written to a temporary file in the
// same directory and renamed into place, so a reader sees all of it or
// none; the status file is synced first where the worker gave no
// record of the end (ResultFD, which is synced). The shepherd removes
// none of them but the spool files of -o and -e once they are copied
// (or dropped, for /dev/null). When the process has a pipe or socket open for writing on
// file descriptor 3, the job's pid is written to it in decimal with a
// newline right after the start file is written (nothing when the job
// could not start): the worker's "started" signal, and the only pid the
// worker takes (never the start file's). A pipe is closed then. The
// worker passes a socket, on which the shepherd first waits for its go
// (GoByte, or GoKernelMemByte), sent once the worker has recorded the
// shepherd's pid; without it the shepherd exits, code 3, having started
// nothing. Once the job's end is recorded the shepherd writes IdleWord on
// the socket and takes the next job the worker hands it there, or exits
// when the socket closes (reuse.go). Diagnostics go
// to stderr through log/slog.
//
// # The job's process
//
// A job given as a command line gets a job file holding "# LSBATCH: User
// input" and the command, run as `/bin/sh JOBFILE`, as LSF runs command lines
// through /bin/sh. A script read from stdin (command_is_script) is written as
// given: one starting with "#!" is executed directly, so the kernel runs its
// interpreter, any other is run by /bin/sh. Either way the process is started
// with os/exec in a process group of its own (its pgid is its pid, which the
// start file reports), so the worker signals the whole job with kill(-pgid).
// The umask is spec.umask when non-zero, else the shepherd's.
//
// Settings come from the effective spec where it sets a field and from the
// submission otherwise (the environment from the submission).
//
// # Working directory
//
// -cwd, with %J %I %JG %EJ %EI %U %G %H %P expanded and relative to the
// submission directory, created when it contains a pattern; else the
// submission directory. When that is not an accessible directory the job
// runs in /tmp (LSF's UNIX fallback; LSF's $PWD, /tmp_mnt and automount
// rewrites and the home mapping are not tried: the shepherd runs on a host
// where the submission path means the same thing or nothing) and the FINISH
// event's detail says so. Only if /tmp is unusable too does the job end
// unstarted with exit code 2 and TERM_CWD_NOTEXIST, what LSF does with
// LSB_EXIT_IF_CWD_NOTEXIST=Y.
//
// # Standard files
//
//   - stdin is -i (%J/%I expanded, relative to the working directory), else
//     /dev/null.
//   - stdout is -o (%J/%I expanded, relative to the working directory, or to
//     -outdir when that is given; the output directory is created), opened
//     for appending, or truncated for -oo. A path that ends in "/" or names an
//     existing directory is a directory, created if needed, holding
//     <jobid>.out; for an array element it holds <jobid>_<index>.out, since
//     LSF's plain <jobid>.out would make all elements share one file.
//   - stderr is -e (-eo truncates) resolved the same way with ".err"; without
//     -e, or when -e resolves to the -o file, stderr shares stdout's file.
//   - Without -o both go to the spool file, truncated at the start.
//
// Unless Launch.stdout_direct (LSB_STDOUT_DIRECT=Y), -o and -e are not
// opened when the job starts (spool.go): stdout goes to the spool file
// (stderr too, unless -e names another file, which gets <spool>.err), and
// when the job has ended the shepherd, as the job's user, resolves -o and
// -e again (the job may have created their directory), creates the
// directory of the directory form, and writes the job report, "The output
// (if any) follows:", the spooled output and the report's PS part into the
// -o file (appended, or replacing it for -oo), and the spooled stderr into
// the -e file; then it removes the spool files. A file that resolves to
// /dev/null gets nothing: its spool file is removed uncopied, and the
// report is not made unless it is mailed. With -N the report is
// mailed and the file gets the output alone. When a file cannot be
// written, what was meant for it goes to $HOME/.lsbatch/<job file
// name>.out (or .err), LSF's default job spool directory, with a line in
// the report saying so, and the FINISH event's detail names the file; when
// that fails too the spool file stays. LSB_OUTPUTFILE and LSB_ERRORFILE
// name the final files. A job whose pre-exec fails leaves its spooled
// output behind (it is not copied).
//
// The spool files live in the worker's state directory, on the disk of
// the controller's store on a single host, so a spooled job writes to a
// pipe and the shepherd copies to the spool file only while that disk
// keeps the spool's reserve free (XCE_SPOOL_RESERVE_MB in the shepherd's
// environment, which the worker sets to twice the store's floor); the
// rest is read and dropped, and the FINISH event and the report say where
// the output was cut (spoolcap.go says why this and not LSF's
// ~/.lsbatch). One user's output so cannot take the controller's disk
// below the floor at which it refuses everyone's submissions.
//
// A job whose output, error or input file cannot be opened, or whose job
// file cannot be written, does not run: it ends EXIT with exit code 2 (the
// code a shell gives a failed redirection), no exit reason, and the cause in
// the event's detail and on its stderr when that is open. When -o cannot be
// opened the message and the report go to the spool file instead. A job file
// whose interpreter is missing ends with 127, one that cannot be executed
// with 126, as in a shell.
//
// # Environment
//
// The submission environment (already filtered by -env), less HOME, USER,
// LOGNAME, PWD and every LSB_*/LS_* variable that LSF never propagates or
// sets per job (a job submitted from inside another job does not inherit
// its parent's), then LSF's variables: LSB_JOBID, LSB_BATCH_JID,
// LSB_JOBINDEX (0 outside arrays), LSB_JOBINDEX_END and LSB_JOBINDEX_STEP
// (arrays: the job's array_end and array_step, else read from the -J array
// part), LSB_JOBNAME, LSB_QUEUE, LSB_HOSTS (one entry per slot),
// LSB_MCPU_HOSTS, LSB_DJOB_HOSTFILE, LSB_DJOB_NUMPROC,
// LSB_MAX_NUM_PROCESSORS, LSB_SUB_HOST, LSB_EXEC_CLUSTER, LSB_OUTPUTFILE and
// LSB_ERRORFILE (when -o/-e are given), LSB_OUTDIR, LS_SUBCWD, LS_EXECCWD,
// LSB_JOBFILENAME, LSB_CHKFILENAME, LSB_JOB_EXECUSER, LSB_UNIXGROUP_INT,
// LSB_PROJECT_NAME, LSB_EFFECTIVE_RSRCREQ (when set), LS_JOBPID,
// LSB_JOBRES_PID, LSB_EXIT_PRE_ABORT=99, LSF_INVOKE_CMD=bsub,
// LS_EXEC_T=START, LSFUSER, and HOME, USER, LOGNAME and PWD of the execution
// user and directory. Choices:
//
//   - LSB_JOBNAME is the -J name (else the command line, or a script's first
//     command), with "[index]" for an array element: "name[7]", the name
//     bjobs shows for the element, not the whole array's "name[1-100]".
//   - LS_JOBPID and LSB_JOBRES_PID are the shepherd's pid. In LSF they name
//     the job's top process, its res; the shepherd plays that part here. The
//     job's own pid is unknown before it starts; it equals its process group
//     id, which a job finds with `ps -o pgid= $$`.
//   - LSB_OUTPUTFILE and LSB_ERRORFILE hold the absolute paths of the files
//     actually opened (patterns expanded, directory form resolved).
//   - LSB_EFFECTIVE_RSRCREQ is the effective -R strings joined by a space.
//   - LSB_CHKFILENAME is the job file's path, as in LSF.
//   - PATH is set to a system default when the submission environment has
//     none (bsub -env none).
//   - A GPU job gets lib/gpu.Env's variables for its devices on the host
//     (CUDA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES<task> for num=N/task,
//     CUDA_DEVICE_ORDER=PCI_BUS_ID), last, over the submission's.
//   - A job bound to cores (resource_enforce cpu: HostSlots.cpus) gets
//     LSB_BIND_CPU_LIST, this host's cores ascending and comma separated,
//     and LSB_AFFINITY_HOSTFILE, <job_file>.affinity: one line per slot,
//     in LSB_HOSTS's order, "HOST CPU[,CPU...]" with the slot's share of
//     its host's cores (bind.go). Neither is set for other jobs.
//   - Not set: LSB_TRAPSIGS, LSB_JOBRES_CALLBACK, LSB_CHKPNT_DIR,
//     LSF_* installation paths.
//
// # Limits
//
//   - Run limit (-W or the queue's, run_limit_sec) and termination deadline
//     (-t, term_time): SIGUSR2 to the group, then SIGKILL kill_grace_ms later
//     (LSF's 10 minutes when the launch gives 0); TERM_RUNLIMIT or
//     TERM_DEADLINE. The run limit counts from the job's start.
//   - Memory limit (-M, mem_limit_kb): as LSF, the job's processes get it
//     as their soft RLIMIT_RSS (which Linux does not enforce), except with
//     Launch.job_memlimit (LSB_JOB_MEMLIMIT). With Launch.job_memlimit or
//     memlimit_enforce (LSB_MEMLIMIT_ENFORCE), or a hard limit (-M N!), the
//     shepherd enforces it: every second it sums the resident memory of the
//     processes in the job's process group (from /proc/<pid>/stat); above
//     the limit it sends SIGINT, SIGTERM and SIGKILL, LSF's
//     JOB_TERMINATE_INTERVAL of 10 s apart or kill_grace_ms apart when that
//     is shorter; a hard limit gets SIGKILL at once. TERM_MEMLIMIT.
//     Otherwise a job over its limit runs on. A new limit from bmod
//     changes what the shepherd enforces, not the RLIMIT_RSS already set.
//     A job whose cgroup holds its memory limit (the worker's go is
//     GoKernelMemByte: resource_enforce "memory", LSF's
//     LSB_RESOURCE_ENFORCE) is left to the kernel: the shepherd does not
//     enforce the limit, whatever the launch or the -M says.
//   - CPU limit (-c, cpu_limit_sec): the same sample sums the group's CPU
//     time; above the limit SIGXCPU, SIGINT, SIGTERM, SIGKILL, spaced as for
//     memory. TERM_CPULIMIT.
//
// The first limit reached is the exit reason; a stopped job is sent SIGCONT
// after the first signal. The FINISH event's detail starts with the reason's
// name ("TERM_RUNLIMIT: ..."). Signals stop once the job's process has been
// reaped. Processes that leave the job's process group are not measured or
// signalled. An end the shepherd did not cause (bkill, a signal from
// elsewhere) carries no exit reason: the controller attributes it.
//
// # Resource usage
//
// The sampler reads /proc/<pid>/stat once a second (the first time 0.1 s
// after the start). Every fifth sample, and while it has found nothing, it
// reads every descendant of the shepherd (from the kernel's children
// lists; every process on the host where the kernel keeps none, or where
// the shepherd is no subreaper) to find the members of the job's process
// group; the samples in between reread only the members it knows, so the
// cost per second is a few reads rather than one per process on the host,
// and a new process is counted within five seconds. For the members it
// records pids, processes, threads, resident memory and CPU time (their
// own plus that of children they have reaped; USER_HZ=100). The usage file
// gets the latest sample with the peak (max_mem_kb) and average
// (avg_mem_kb) so far. In the FINISH event's usage, nprocs and nthreads are
// the peaks over the run, mem_kb the last sample, cpu_time_ms (also the
// event's cpu_time_ms) the larger of the sampled total and the job's
// ru_utime+ru_stime, and max_mem_kb the sampled peak, raised to the job's
// ru_maxrss when that exceeds the shepherd's own peak (below it, ru_maxrss
// measures the shepherd's memory that the child shared between os/exec's
// vfork and its exec, not the job). Swap is not measured.
//
// # End of the job
//
// The job ends when its top process ends (it exits, or a signal from
// anywhere kills it): the shepherd then sends SIGKILL to the job's process
// group before it reaps the top process (so the group's id cannot have
// been reused) and before it records the end. Processes the job left
// running in the background are killed with it: nothing a job started
// runs on untracked once the job is recorded as ended (the LSF behaviour
// this package follows documents nothing about leftovers, so the choice
// is ours). That includes processes that left the job's process group or
// session (setsid, a daemon's double fork): the shepherd is a child
// subreaper (PR_SET_CHILD_SUBREAPER), so they are reparented to it, not
// to init; every descendant of the shepherd is measured as the job's and
// killed when the job ends, and the ones reparented to it are reaped. The FINISH
// event has state DONE for exit status 0, else EXIT; exit_status is the
// shell-style code, 128+N for a process killed by signal N (signal is then
// N): SIGINT 130, SIGKILL 137, SIGUSR2 140, SIGTERM 143.
//
// LSF's job report (lsfout.JobReport) is then appended to the output file
// (with stdout_direct), or to the spool file without -o, after a blank line
// and a rule of 60 dashes, the way LSF does with LSB_STDOUT_DIRECT=Y (the
// job's output is above it); a spooled -o file gets it at the top, as
// described under Standard files. With -N the report is mailed through the local sendmail
// instead (-B mails a note when the job starts; -u names the recipient);
// without a sendmail it goes to the output file after all (mail.go). The
// pre- and post-execution chains (-E, -Ep and the profile's) and the
// profile's job starter run here; login shells (-L) and checkpointing do
// not.
package exec
