package lsfout

// The job report: the text LSF appends to a job's -o file (or mails) when
// the job ends (output-formats.md section 11). lib/exec appends it after
// the job's output, as LSF does with LSB_STDOUT_DIRECT=Y.

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"xce/lib/api"
)

// reportRule is the line of 60 dashes around "Your job looked like:" and
// before a report appended to an output file.
const reportRule = "------------------------------------------------------------"

// reportValueColumn is where the values of the resource usage summary start.
const reportValueColumn = 49

// reportHostIndent is the width of "Job was executed on host(s) ": the
// column of the second and later hosts of a parallel job.
const reportHostIndent = 28

// JobReport is LSF's job report for a job that has ended: the text that
// starts with "Sender: LSF System <lsfadmin@HOST>" and ends with the note on
// where the job's output is.
//
// job is the job as dispatched (specs, submit and start times, execution
// hosts); end is its FINISH event (time, state, exit status, exit reason,
// resource usage). cluster is the cluster's name and host the execution
// host, which also names the sender.
//
// Choices where LSF's documentation is silent, checked against real reports:
//
//   - The report is the LSB_STDOUT_DIRECT=Y variant: the job wrote its output
//     straight into the file, so the report ends with "The output (if any)
//     is above this job summary." rather than "The output (if any)
//     follows:" and the output. A caller appending the report to a file
//     puts "\n" and a rule of 60 dashes before it, as LSF does; JobReport
//     itself starts at "Sender:".
//   - "PS: Read file <ERR> for stderr output of this job." is added when the
//     job had an -e file other than its -o file. ERR is the -e path as given,
//     with %J and %I expanded and, for a directory (a path ending in "/"),
//     the file name in it (<jobid>.err, or <jobid>_<index>.err for an
//     array element), as lib/exec names it.
//   - The sender is "lsfadmin@HOST"; "Results reported at" is the end time.
//   - Memory figures are in MB (LSF_UNIT_FOR_LIMITS=MB): Max Memory rounded
//     to whole MB (at least 1 when anything was measured), the others with
//     two decimals; a figure that was not measured prints "-".
//   - Total Requested Memory is the mem= value of the first rusage[...] of
//     the effective resource requirement (MB unless a unit is written), as
//     written, not multiplied by slots; Delta Memory is that less Max Memory.
//   - Run time is end minus start, Turnaround time end minus submission, in
//     whole seconds of the printed times.
func JobReport(job *api.Job, end *api.Event, cluster, admin, host string) string {
	sub := job.GetSpec()
	if sub == nil {
		sub = &api.JobSpec{}
	}
	eff := job.GetEffective()
	if eff == nil {
		eff = sub
	}
	var b strings.Builder
	name := reportJobName(job)
	state := end.GetState()
	if state != api.JobState_DONE && state != api.JobState_EXIT {
		state = api.JobState_EXIT
		if end.GetExitStatus() == 0 && end.GetTermReason() == api.TermReason_TERM_UNKNOWN {
			state = api.JobState_DONE
		}
	}
	outcome := "Done"
	if state == api.JobState_EXIT {
		outcome = "Exited"
	}
	user := reportFirst(sub.GetUser(), eff.GetUser())
	home := reportFirst(end.GetExecHome(), job.GetExecHome(), sub.GetHome())
	cwd := reportFirst(end.GetExecCwd(), job.GetExecCwd())
	queue := reportFirst(eff.GetQueue(), sub.GetQueue())
	start := job.GetStartTime()
	if start == 0 {
		start = end.GetTime()
	}

	fmt.Fprintf(&b, "Sender: LSF System <%s@%s>\n", ReportAdmin(admin), host)
	fmt.Fprintf(&b, "Subject: Job %s: <%s> in cluster <%s> %s\n\n", JobIDString(job), name, cluster, outcome)
	fmt.Fprintf(&b, "Job <%s> was submitted from host <%s> by user <%s> in cluster <%s> at %s\n",
		name, sub.GetSubmitHost(), user, cluster, reportTime(job.GetSubmitTime()))
	hosts := reportHosts(job, end, host)
	b.WriteString("Job was executed on host(s) ")
	for i, h := range hosts {
		if i > 0 {
			b.WriteString("\n" + strings.Repeat(" ", reportHostIndent))
		}
		b.WriteString("<" + h + ">")
	}
	fmt.Fprintf(&b, ", in queue <%s>, as user <%s> in cluster <%s> at %s\n", queue, user, cluster, reportTime(start))
	fmt.Fprintf(&b, "<%s> was used as the home directory.\n", home)
	fmt.Fprintf(&b, "<%s> was used as the working directory.\n", cwd)
	fmt.Fprintf(&b, "Started at %s\n", reportTime(start))
	fmt.Fprintf(&b, "Terminated at %s\n", reportTime(end.GetTime()))
	fmt.Fprintf(&b, "Results reported at %s\n", reportTime(end.GetTime()))

	b.WriteString("\nYour job looked like:\n\n" + reportRule + "\n# LSBATCH: User input\n")
	command := sub.GetCommand()
	b.WriteString(command)
	if !strings.HasSuffix(command, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(reportRule + "\n\n")

	if state == api.JobState_DONE {
		b.WriteString("Successfully completed.\n")
	} else {
		if r := end.GetTermReason(); r != api.TermReason_TERM_UNKNOWN {
			b.WriteString(TermReasonText(r) + ".\n")
		}
		fmt.Fprintf(&b, "Exited with exit code %d.\n", end.GetExitStatus())
	}

	b.WriteString("\nResource usage summary:\n\n")
	u := end.GetUsage()
	cpuMs := end.GetCpuTimeMs()
	if cpuMs == 0 {
		cpuMs = u.GetCpuTimeMs()
	}
	maxMB := int64(-1)
	if kb := u.GetMaxMemKb(); kb > 0 {
		maxMB = max((kb+512)/1024, 1)
	}
	reqMB, haveReq := reportRequestedMB(eff.GetResReq())
	if !haveReq {
		reqMB, haveReq = reportRequestedMB(sub.GetResReq())
	}
	reportLine(&b, "CPU time", fmt.Sprintf("%.2f sec.", float64(cpuMs)/1000))
	reportLine(&b, "Max Memory", reportIf(maxMB >= 0, func() string { return strconv.FormatInt(maxMB, 10) + " MB" }))
	reportLine(&b, "Average Memory", reportIf(u.GetAvgMemKb() > 0, func() string { return fmt.Sprintf("%.2f MB", float64(u.GetAvgMemKb())/1024) }))
	reportLine(&b, "Total Requested Memory", reportIf(haveReq, func() string { return fmt.Sprintf("%.2f MB", reqMB) }))
	reportLine(&b, "Delta Memory", reportIf(haveReq && maxMB >= 0, func() string { return fmt.Sprintf("%.2f MB", reqMB-float64(maxMB)) }))
	reportLine(&b, "Max Swap", reportIf(u.GetSwapKb() > 0, func() string { return strconv.FormatInt(max((u.GetSwapKb()+512)/1024, 1), 10) + " MB" }))
	reportLine(&b, "Max Processes", reportIf(u.GetNprocs() > 0, func() string { return strconv.Itoa(int(u.GetNprocs())) }))
	reportLine(&b, "Max Threads", reportIf(u.GetNthreads() > 0, func() string { return strconv.Itoa(int(u.GetNthreads())) }))
	reportLine(&b, "Run time", fmt.Sprintf("%d sec.", reportSeconds(end.GetTime())-reportSeconds(start)))
	reportLine(&b, "Turnaround time", fmt.Sprintf("%d sec.", reportSeconds(end.GetTime())-reportSeconds(job.GetSubmitTime())))

	b.WriteString("\nThe output (if any) is above this job summary.\n\n")
	if errFile := reportErrorFile(job); errFile != "" {
		fmt.Fprintf(&b, "\n\nPS:\n\nRead file <%s> for stderr output of this job.\n\n", errFile)
	}
	return b.String()
}

// reportJobName is the job name the report shows: the -J name with the
// array part ("name[1-5]%2") for every element of an array, else the name
// bjobs shows.
func reportJobName(job *api.Job) string {
	sub := job.GetSpec()
	if sub == nil {
		sub = job.GetEffective()
	}
	name := sub.GetJobName()
	if name == "" {
		name = DisplayName(&api.Job{Spec: sub})
	}
	if a := sub.GetArraySpec(); a != "" {
		name += a
		if l := sub.GetArrayLimit(); l > 0 {
			name += "%" + strconv.Itoa(int(l))
		}
	}
	return name
}

// reportHosts lists the execution hosts, "N*host" for N slots.
func reportHosts(job *api.Job, end *api.Event, host string) []string {
	hs := end.GetHosts()
	if len(hs) == 0 {
		hs = job.GetExecHosts()
	}
	if len(hs) == 0 {
		return []string{host}
	}
	return hostSlotNames(hs)
}

// reportErrorFile is the -e file the PS note names, "" when stderr went to
// the output file.
func reportErrorFile(job *api.Job) string {
	spec := job.GetEffective()
	if spec.GetErrorFile() == "" {
		spec = job.GetSpec()
	}
	e := reportFileName(spec.GetErrorFile(), ".err", job)
	if e == "" {
		return ""
	}
	if o := reportFileName(spec.GetOutputFile(), ".out", job); o != "" && path.Clean(o) == path.Clean(e) {
		return ""
	}
	return e
}

// reportFileName is an -o or -e path with %J and %I expanded and, for a
// directory, the file name in it added.
func reportFileName(p, ext string, job *api.Job) string {
	if p == "" {
		return ""
	}
	p = reportExpand(p, job)
	if strings.HasSuffix(p, "/") {
		p += strconv.FormatInt(job.GetJobId(), 10)
		if job.GetArrayIndex() > 0 {
			p += "_" + strconv.Itoa(int(job.GetArrayIndex()))
		}
		p += ext
	}
	return p
}

// reportExpand replaces %J with the job ID and %I with the array index.
func reportExpand(s string, job *api.Job) string {
	if !strings.Contains(s, "%") {
		return s
	}
	return strings.NewReplacer("%J", strconv.FormatInt(job.GetJobId(), 10),
		"%I", strconv.Itoa(int(job.GetArrayIndex()))).Replace(s)
}

// reportRequestedMB finds mem=N in the first rusage[...] section of the
// resource requirements: N in MB, or converted from the unit written after
// it.
func reportRequestedMB(reqs []string) (float64, bool) {
	for _, r := range reqs {
		i := strings.Index(r, "rusage[")
		if i < 0 {
			continue
		}
		sec := r[i+len("rusage["):]
		if j := strings.IndexByte(sec, ']'); j >= 0 {
			sec = sec[:j]
		}
		for k := 0; k+4 <= len(sec); k++ {
			if sec[k:k+4] != "mem=" || (k > 0 && strings.IndexByte(" ,:[(", sec[k-1]) < 0) {
				continue
			}
			return reportParseMB(strings.TrimLeft(sec[k+4:], "( "))
		}
	}
	return 0, false
}

// reportParseMB parses "4000", "4G", "512KB", ... into MB.
func reportParseMB(s string) (float64, bool) {
	n := 0
	for n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] == '.') {
		n++
	}
	v, err := strconv.ParseFloat(s[:n], 64)
	if err != nil {
		return 0, false
	}
	unit := strings.ToUpper(s[n:])
	if k := strings.IndexAny(unit, " ,:)/"); k >= 0 {
		unit = unit[:k]
	}
	switch strings.TrimSuffix(unit, "B") {
	case "K":
		v /= 1024
	case "", "M":
	case "G":
		v *= 1024
	case "T":
		v *= 1024 * 1024
	case "P":
		v *= 1024 * 1024 * 1024
	default:
		return 0, false
	}
	return v, true
}

func reportLine(b *strings.Builder, label, value string) {
	fmt.Fprintf(b, "%-*s%s\n", reportValueColumn, "    "+label+" :", value)
}

// reportIf is f() when ok, else "-".
func reportIf(ok bool, f func() string) string {
	if !ok {
		return "-"
	}
	return f()
}

// reportFirst is the first non-empty string.
func reportFirst(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// reportTime is LSF's ctime-style date, "%a %b %e %H:%M:%S %Y", local time.
func reportTime(ns int64) string {
	return time.Unix(0, ns).Format("Mon Jan _2 15:04:05 2006")
}

func reportSeconds(ns int64) int64 {
	if ns <= 0 {
		return 0
	}
	return ns / 1e9
}

// ReportAdmin is the user the job report and the job's mail come from:
// the primary cluster administrator, "lsfadmin" when none was given.
func ReportAdmin(admin string) string {
	if admin == "" {
		return "lsfadmin"
	}
	return admin
}
