// Package lsfout owns every text format XCE prints the way LSF does: the
// bjobs table (default, -w, -noheader, -p), bjobs -l and -UF, bjobs -o with
// its -json form, bjobs -sum, -A and -W, bqueues, bhosts, bhist, busers,
// bacct, bparams, lsadmin/badmin showconf, lsid, lshosts, lsinfo, lsload,
// and the job report (report.go). It is
// pure: it turns lib/api messages into text, writes only to the io.Writer it
// is given, and never reads the clock or the environment — the current time
// and the time zone come in JobsOptions (or the Format's fields). The formats
// follow IBM Spectrum LSF 10.1's (and OpenLava's, where LSF's pages are
// silent); the golden files in testdata pin them down.
//
// The API: WriteJobs, WriteJobsLong, ParseFormat with (*Format).Write and
// (*Format).WriteJSON, WriteQueues, WriteQueuesWide, WriteQueuesLong, WriteApps, WriteAppsLong,
// WriteHosts, WriteJobsSum, CountArrays
// with WriteArrays, WriteJobsStats, CountUserSlots with WriteUsers,
// WriteAcct, WriteClusterID, WriteLSHosts, WriteLSLoad; the helpers the commands
// share: JobIDString, DisplayName, CommandString, StateName, ExecHosts,
// DisplayCWD, FormatSubmitTime, FormatEventTime, QueueStatus, HostStatus,
// TermReasonText and Wrap (the bjobs -l line folding, which bhist -l reuses).
//
// # Where the spec was silent or unconfirmed
//
// Job names and commands:
//   - A job without -J is named after its command line; for a script read
//     from stdin, after the script's first line that is neither blank nor a
//     comment ("#!" and "#BSUB" lines are comments).
//   - bjobs -l "Command <...>" and the COMMAND field show such a script as
//     its non-blank lines joined by "; ".
//   - Several -R strings are shown joined by a space (Requested Resources,
//     Combined, EFFECTIVE_RESREQ).
//
// bjobs and bjobs -w:
//   - Execution hosts are always compressed to "N*host" (LSF does so only
//     with LSB_SHORT_HOSTLIST=1), in the default table, in -w, in bjobs -l
//     and in the EXEC_HOST and ALLOC_SLOT fields of -o. The further hosts of
//     the default table are not cut (OpenLava's "%45s%-s").
//   - Jobs are printed in the order given; sorting is the caller's.
//   - -p prints reasons only under PEND and PSUSP jobs; Job.pend_reason holds
//     one reason per line, a trailing ";" of its own is not doubled.
//   - A job whose state is unset shows STAT "-".
//
// bjobs -l and -UF:
//   - Wrap counts runes, not bytes. A "\n" never triggers a break (OpenLava
//     would print an extra line of 21 spaces when a line of exactly 79
//     characters is followed by a newline), and a space dropped at the very
//     end of the text leaves no empty continuation.
//   - Event times print as "%a %b %e %H:%M:%S", the day padded with a space
//     ("Tue May  6 15:45:10") as LSF and OpenLava print it and as the job
//     report does: a parser that cuts the text at column 21 works on every
//     day of the month.
//   - The submission items follow the order of output-formats.md (Output,
//     Error, Input File, Specified Start/Termination Time, Notify, Exclusive,
//     Re-runnable, Task(s), Requested Resources, Dependency Condition, Login
//     Shell, Pre-/Post-execute Command, Specified Hosts, User Priority); -oo
//     and -eo show as "Output File (overwrite) <f>" and "Error File
//     (overwrite) <f>". Specified times use the event time format.
//   - "Job Priority <n>" in the header is the effective -sp priority; "User
//     Priority <n>" in the Submitted paragraph is the submitted one.
//   - XCE addition: a job that has no -o file but a spool file shows it as
//     the last item of its Started paragraph, ", Output spooled to <path>;".
//     The spool exists only once the job runs, so that is where it belongs.
//   - The limit tables (OpenLava's prtResourceLimit, placed after the
//     Submitted paragraph): CPULIMIT and RUNLIMIT side by side in 25-column
//     cells as "N.N min" (no "of <host>": XCE does not normalize by CPU
//     factor); MEMLIMIT as " %6s U" with the largest unit K, M, G, T or P
//     that keeps the number at least 1 ("      4 G").
//   - Resource usage lines are indented 21 spaces (OpenLava); the MEM line
//     always carries SWAP and NTHREAD as in the spec's example; amounts are
//     whole Mbytes above 1024 KB, else Kbytes (OpenLava). The PIDs start a
//     new indented line before passing column 79. The usage paragraph is
//     shown for RUN, UNKWN, SSUSP and USUSP jobs and is dated with the
//     sample's time (the current time if the sample has none). With -UF its
//     lines are joined on the event line, each ending in "." or ";".
//   - A finished job prints "Done successfully." or "Exited with exit code
//     N." ("Exited." for an exit status of 0), followed by "The CPU time used
//     is X seconds." once it has run ("unknown" without usage data). The 10.1
//     line "Completed <exit>; TERM_xxx: message." follows only for EXIT jobs
//     whose term reason is set; DONE jobs get no "Completed <done>." line.
//   - SUSPENDING REASONS come from Job.pend_reason; without one a USUSP job
//     shows "The job was suspended by user" or, when an administrator held
//     it, "The job was suspended by the LSF admin or root".
//   - PENDING REASONS follow the events directly, with no blank line
//     (OpenLava); a pending job without reasons shows the title alone.
//   - SCHEDULING PARAMETERS always shows "-" thresholds (XCE has no per-job
//     load thresholds), keeping OpenLava's trailing blanks.
//   - RESOURCE REQUIREMENT DETAILS: Combined is the effective -R strings
//     joined, with LSF's defaults filled in (select[type == local] or
//     [type == any], order[r15s:pg]) and rusage amounts with two decimals
//     (rusage[mem=100.00]), so a job without -R shows
//     "select[type == local] order[r15s:pg]"; Effective repeats it once the
//     job has started, "-" before (output-formats.md §3).
//   - The project shows as "default" when the job has none.
//   - XCE addition: a job whose effective spec records where its values
//     came from (JobSpec.origin, set by the configuration layering) ends
//     its record with an EFFECTIVE SETTINGS section; LSF has none. One row
//     per layered value, in this order: queue, application, project, tasks
//     (min_tasks/max_tasks, "4" or "2-8"), res_req, run limit ("60.0
//     min"), mem limit ("4 G"), pre-exec, post-exec, job starter, env; then
//     any other recorded field under its own name with "-" as its value.
//     The label takes 15 columns after one space, the value 29, the origin
//     ("job", "default", "profile fluent", "job + profile fluent", "queue
//     night (deprecated)") follows. A value of 29 characters or more is
//     folded at spaces within 79 columns under itself and its origin goes
//     on the next line in the origin column. The pre- and post-exec chains
//     and the environment print one command or variable a line; when the
//     origin has one part per command, each command gets its own (the
//     pre-exec chain in the order it runs, outermost first). The section
//     keeps its layout with -UF. The Submitted paragraph shows only the
//     job's own -E and -Ep, as LSF does, not the profile's or the queue's.
//
// bjobs -o and -json:
//   - The recommended widths of the 10.1 fields missing from the table are
//     the length of the field name, at least 10; MEM uses 15.
//   - "all" alone gives every field at unlimited width, "all:" their
//     recommended widths, "all:N" width N; a unit given with "all" applies to
//     the memory fields only. A unit with any other non-memory field is an
//     error.
//   - The header is cut and justified like the values of its column; the
//     last column is padded too. With a delimiter nothing is padded but
//     explicit and recommended widths still cut.
//   - Memory without a unit: the largest of Mbytes, Gbytes, Tbytes, Pbytes
//     that keeps the number at least 1, one decimal unless whole ("5.2
//     Gbytes", "0 Mbytes"); with "S": the same with a one-letter unit and
//     always one decimal ("5.2G"); with a unit: two decimals, the third
//     rounded up ("0.01G"), as the LSB_UNIT_FOR_JOBS_DISPLAY documentation
//     describes.
//   - RUN_TIME counts from the start to the end (or now), suspended time
//     included. CPU_USED prints "12.3 second(s)". PEND_TIME prints whole
//     seconds. With -hms (Format.HMS) RUN_TIME and CPU_USED print hh:mm:ss
//     and TIME_LEFT hh:mm:ss.
//   - For a running job with a run limit, FINISH_TIME is the time the limit
//     is reached followed by " L", TIME_LEFT is "H:MM L" and %COMPLETE "N%
//     L"; with only an estimated run time (-We) the suffix is " E".
//   - EXIT_CODE is the exit status of EXIT jobs only; EXIT_REASON is
//     TermReasonText of finished jobs whose reason is set; PEND_REASON joins
//     the reasons of a pending job with "; ".
//   - SLOTS is the allocated slots, or the requested minimum before
//     dispatch; JOBID never carries the array index (JOBINDEX does);
//     EXCLUSIVE is Y or N; RUNTIMELIMIT and ESTIMATED_RUN_TIME are minutes
//     with one decimal; CPU_EFFICIENCY is CPU time over run time times
//     slots, as a percentage with two decimals.
//   - Fields XCE has no data for (ESTIMATED_START_TIME, SWAPLIMIT, the file,
//     core, stack and process limits, SERVICE_CLASS, INTERACTIVE, the GPU and
//     forwarding fields, ...) print "-" ("" in JSON).
//   - JSON: a job ID asked for but not found is a record of JOBID and ERROR
//     ("Job <123> is not found") after the jobs; JOBS counts every record;
//     no records print as "RECORDS":[] on one line. Values are never cut.
//   - Errors other than the unknown field one (OpenLava's wording) are XCE's.
//
// bqueues and bhosts:
//   - A queue priority or a count wider than its column pushes the row
//     right, as printf does.
//   - bhosts JL/U is always "-" (XCE has no per-user host limit); MAX is "-"
//     for a host without slots. With -w a closed host shows the detail the
//     controller gave (closed_Adm, closed_Full, ...) or "closed" without
//     one; the -w header is widened to match.
//
// bqueues -o and bhosts -o (and -json) share bjobs's machinery: the same
// syntax, widths, truncation, delimiter, "all", errors and JSON shape, with
// "COMMAND":"bqueues" / "bhosts" and "QUEUES" / "HOSTS" counting the
// records. The fields are LSF 10.1.0.2's names and aliases; their
// recommended widths are as remembered from IBM's tables (unconfirmed).
// Queue limits XCE does not have and host fields it has no data for are
// empty ("-", "" in JSON); memory limits print as bjobs's memory fields,
// run limits in minutes with one decimal; a host's STATUS is the -w one.
//
// bqueues -r is -l with, for a queue that carries its share accounts, the
// SHARE_INFO_FOR table after the policies: " USER/GROUP   SHARES
// PRIORITY  STARTED  RESERVED  CPU_TIME  RUN_TIME   ADJUST", each value
// right-aligned under its title (" %-10s%9d%10.3f%9d%10d%10.1f%10.0f%9.3f",
// XCE's reading of IBM's example), groups as "name/".
//
// bhosts -l (OpenLava's prtHostsLong with LSF 10.1's slots column, IBM's
// host_status example for the spacing): "HOST  name", the STATUS row
// ("%-14s %6.2f %5s %6s %6d ..." with the -w status), a blank line, then
// for a host in contact " CURRENT LOAD USED FOR SCHEDULING:" with the
// titles after 12 blanks (r15s r1m r15m ut pg io in 6 columns, ls in 5,
// it tmp swp mem in 6, slots in 7), " Total" and " Reserved" rows and a
// blank line; then the shared resources on the host in the same shape
// (each column one wider than its widest cell); " LOAD THRESHOLD USED FOR
// SCHEDULING:" (no thresholds: "-"); for a host closed by badmin hclose
// -C, "ADMIN ACTION COMMENT:  text" (volclava's wording) and a blank line.
// Total is the load plus the reservations for indices that grow with load
// and what is left after them for the others; slots' Total is the free
// slots, its Reserved "-". tmp, swp and mem print in whole Mbytes while
// that takes at most 5 characters ("4231M"), else whole Gbytes (OpenLava);
// indices the host does not report print "-". One blank line separates the
// sections and the records (OpenLava prints two after the load table).
//
// bhosts -s: "%-20s%10s%15s%15s" RESOURCE TOTAL RESERVED LOCATION; TOTAL
// is what is left for scheduling ("17", "2.5"), RESERVED "%.1f"; LOCATION
// the hosts, each followed by a blank, wrapped at column 80 under column
// 52 (OpenLava). lshosts -s and lsload -s: "%-25s%20s%15s" RESOURCE VALUE
// LOCATION, the same LOCATION; VALUE the configured total (lshosts) or
// what is left after running jobs' reservations (lsload).
//
// bqueues -w: the default table with QUEUE_NAME as wide as the longest
// name (at least 15) and never cut; the further 10.1 columns are left out
// (the spec does not confirm them).
//
// bqueues -l (OpenLava's layout with LSF 10.1's section names; the spec
// leaves the details unconfirmed):
//   - "QUEUE: name", then "  -- description" ("No description provided."
//     without one) followed by "  This is the default queue." for the
//     default queue (OpenLava), unless the description already ends so. The lost_and_found queue shows LSF's own
//     description of it (it holds the jobs of queues removed from the
//     configuration; they start only once switched to another queue).
//   - The PARAMETERS/STATISTICS row: PRIO "%3d", NICE "%4d", two spaces,
//     STATUS in 14 columns, MAX JL/U JL/P JL/H "%4s", NJOBS PEND RUN SSUSP
//     USUSP "%5d", RSV "%4d", lined up under the spec's header, then
//     "Interval for a host to accept two jobs is 0 seconds" (XCE has no
//     JOB_ACCEPT_INTERVAL: a host takes the next job at once). No PJOBS
//     column.
//   - Limits use bjobs -l's tables (" RUNLIMIT" / " 60.0 min", " MEMLIMIT"
//     / "      4 G") plus " TASKLIMIT" with the values as configured: "max",
//     "min max" or "min default max" ("-" for no maximum). When the queue
//     has a default run limit or memory limit, the defaults come under
//     "DEFAULT LIMITS:" and the ceilings and TASKLIMIT under "MAXIMUM
//     LIMITS:" (LSF 10.1); otherwise the ceilings alone, untitled
//     (OpenLava). The run limit is wall-clock and never "of <host>".
//   - SCHEDULING PARAMETERS always shows "-" thresholds.
//   - "SCHEDULING POLICIES:" lists FAIRSHARE, PREEMPTIVE, PREEMPTABLE and
//     EXCLUSIVE, two spaces apart, only when there is one; then
//     "USER_SHARES:  [name, shares] ..." by name with default last, and
//     the preemption lists in lsb.queues syntax: "PREEMPTION =
//     PREEMPTIVE[q1 q2] PREEMPTABLE[q3]". A queue is PREEMPTIVE only with a
//     list (the API carries no "all lower queues").
//   - "RUN_WINDOW:  w1 w2" and "DISPATCH_WINDOW:  w1" as configured, after
//     a blank line, then "USERS: " and "HOSTS:  " ("all" when empty) and
//     "ADMINISTRATORS:  a b". The queue-level RES_REQ, PRE_EXEC and
//     POST_EXEC an LSF import may carry print as "PRE_EXEC:  cmd
//     (deprecated)".
//   - Records end with a blank line; the next record starts after a line
//     of 79 "-" and a blank line.
//
// bapp (the spec gives the column names only):
//   - APPLICATION_NAME takes 20 columns and is cut (with -w it grows to the
//     longest name, uncut); NJOBS PEND RUN SUSP are "%5d" one space apart,
//     SUSP being SSUSP plus USUSP. Counts are slots, as in bqueues.
//   - bapp -l: "APPLICATION NAME: name", "  -- description" ("No
//     description provided." without one), a blank line, "STATISTICS:" with
//     NJOBS PEND RUN SSUSP USUSP RSV right-aligned in 8-column cells one
//     space apart, a blank line, "PARAMETERS:", the RUNLIMIT, MEMLIMIT and
//     TASKLIMIT tables as in bqueues -l, a blank line, and one "KEY: value"
//     line each for what is set: RES_REQ, FIXED (the attributes a job
//     cannot override, by their xce.toml names), PRE_EXEC, POST_EXEC,
//     JOB_EXEC ("allowed" or "not allowed": whether a job may bring its own
//     -E and -Ep, always shown), JOB_STARTER, ENV_VARS (NAME=value by name,
//     a value with blanks or quotes in Go's quoting). Records are separated
//     like bqueues -l's.
//
// bjobs -sum, -A and -W:
//   - -sum counts slots (allocated, or the -n minimum before dispatch) in
//     the 11/12/11/11/11/10/9-column layout of the IBM example, values
//     padded like the titles; FWD_PEND is always 0 (XCE forwards no jobs).
//   - -A lists only job arrays, in the order their elements come; UNKWN
//     elements count as RUN. ARRAY_SPEC is the -J name with its index list,
//     cut to 8 columns (not cut with -w).
//   - -W is the -w row with SUBMIT_TIME as MM/DD-HH:MM:SS, then PROJ_NAME
//     "%-10s", CPU_USED "HHH:MM:SS.cc", MEM and SWAP in Kbytes "%-6d" (the
//     current sample), PIDS joined by "," and START_TIME and FINISH_TIME as
//     MM/DD-HH:MM:SS, as seen in real LSF output; anything a job does not
//     have yet is "-" (a job without usage data shows "-" for CPU_USED,
//     MEM, SWAP and PIDS).
//
// busers:
//   - Counts are slots of unfinished jobs by the submitting user, PSUSP
//     counted as PEND and UNKWN as RUN; NJOBS is their sum. JL/P and MAX
//     are "-" (XCE has no per-user slot limits) and RSV is 0. Rows have no
//     trailing blank, the header keeps LSF's.
//   - busers -w adds MPEND PJOBS MPJOBS ("-", the number of pending jobs,
//     "-"); the PRIO column some LSF fix packs print after them is left out.
//
// bacct (the spec has no layout; this one is real LSF 10.1 output as
// found in public scripts that parse it):
//   - The header block lists the filters: "submitted by users u1 u2, " or
//     "submitted by all users.", likewise projects, hosts and queues, each
//     list line ending in ", " (with LSF's trailing blank); then a line of 78
//     "-". Each SUMMARY line is one or two 34-column cells (label, value
//     right-aligned), the first after one space, the second six further.
//   - Wait time is start minus submission; for a job that never started
//     (killed while pending) it is end minus submission, its run time 0.
//     Turnaround is end minus submission, hog factor CPU time over
//     turnaround. The expansion factor (turnaround over run time) is taken
//     over jobs that ran at least a second; with none it prints 0.00.
//     Averages of whole-second values are truncated.
//   - Throughput is jobs per hour, T = N/(ET-BT) as LSF's bacct documents
//     it, between the earliest start (submission for jobs that never
//     started) and the latest end in whole seconds, or over the -C
//     time0,time1 period when both ends are given; BT and ET are the
//     Beginning and Ending times. When they are the same second it is 0.00.
//   - bacct -l records: bjobs -l's header and Submitted paragraph, then
//     "Dispatched N Task(s) on Host(s) <h>, Allocated N Slot(s) on Host(s)
//     <h>[, Effective RES_REQ <r >];" and "Completed <done>." or "Completed
//     <exit>[; TERM_xxx: message]." and the job's CPU_T WAIT TURNAROUND
//     STATUS HOG_FACTOR MEM SWAP line; MEM is the peak resident memory, both
//     in whole Mbytes. XCE has no fairshare, so no "Share group charged".
//
// lsid, lshosts and lsload:
//   - lsid prints the banner the commands' -V prints, a blank line, "My
//     cluster name is c" and "My master name is h".
//   - lshosts: unknown values ("" type or model, zero CPU factor, CPU count
//     or memory) print "-"; server is always "Yes"; RESOURCES is "()" for a
//     host without boolean resources. maxmem and maxswp are whole Mbytes
//     ("64000M") while they fit "%5dM", else Gbytes or Tbytes with one
//     decimal ("255.8G", LSF 10.1's adaptive form). -w takes 25, 10 and 11
//     columns for the name, type and model and cuts nothing.
//   - lsload: hosts in the controller's order (LSF sorts by load). pg, ls
//     and it are "-" (XCE's hosts do not report them); tmp, swp and mem are
//     "900M" below 1 Gbyte, "3.4G" below 10G, "43G" below 1T, then "1.2T".
//     Status: ok, lockU (closed_Excl), lockW (closed_Wind), unavail (the
//     controller has no contact: unavail or unreach in bhosts), ok for other
//     batch closures. An unavailable host shows only its name and status.
//     -w gives the name 25 columns and does not cut it; -l 23 columns,
//     not cut, and every index with io ("-": not measured) after pg; -I
//     the indices named, in that order, in either layout.
//   - lshosts -l (OpenLava's print_long with LSF 10.1's nprocs ncores
//     nthreads, in 6, 6 and 8 columns): a blank line, "HOST_NAME:  name",
//     the "%-10.10s %11.11s %5.5s %5.5s %6.6s ..." title row and the
//     host's row (ndisks "-", rexpri 0, memory sizes as lshosts prints
//     them), a blank line, "RESOURCES: (...)" or "RESOURCES: Not
//     defined", "RUN_WINDOWS:  (always open)", a blank line and
//     LOAD_THRESHOLDS with "-" under each index.
//
// bparams, the configuration views and lsinfo:
//   - bparams -l: each parameter's description line, then "    NAME =
//     value (unit)", blocks separated by blank lines (OpenLava's texts;
//     XCE's own for the parameters OpenLava does not print). bparams -a:
//     "lsb.params configuration at <date>", then "    NAME = value".
//   - lsadmin showconf lim, badmin showconf mbd|sbd: "LIM configuration at
//     <date>" (or "... for host <h> at ..."), then "    NAME=value" lines.
//     Dates as "Fri Jun  8 10:27:52 CST 2012" (ConfigTime).
//   - lsinfo: "%-13s %7s    %-3s   %s" rows under "RESOURCE_NAME   TYPE
//     ORDER  DESCRIPTION", TYPE_NAME, then "%-16s%10.2f      %s" rows
//     under "MODEL_NAME      CPU_FACTOR      ARCHITECTURE", parts separated
//     by a blank line; -l one block per resource (the LSF 4 guide's shape).
//
// TermReasonText returns "TERM_NAME: message" without a final period. The
// message of TERM_OTHER ("job killed for another reason") and of XCE's
// TERM_ORPHAN ("job status lost when the controller restarted") are XCE's.
package lsfout
