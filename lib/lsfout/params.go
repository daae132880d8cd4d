package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"xce/lib/api"
)

// WriteParams writes bparams's default listing: the default queue and the
// intervals LSF prints, with XCE's values (XCE has no mbatchd sleep: it
// schedules on events, at most every 20 ms, and at least every second).
func WriteParams(w io.Writer, info *api.ClusterInfo) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Default Queues:  %s\n", info.GetDefaultQueue())
	b.WriteString("MBD_SLEEP_TIME used for calculations:  1 seconds\n")
	b.WriteString("Job Checking Interval:  1 seconds\n")
	b.WriteString("Job Accepting Interval:  0 seconds\n")
	fmt.Fprintf(&b, "CLEAN_PERIOD:  %d seconds\n", info.GetCleanPeriodSec())
	fmt.Fprintf(&b, "MAX_JOB_ARRAY_SIZE:  %d\n", info.GetMaxArraySize())
	return flush(w, &b)
}

// WriteGroups writes bugroup's or bmgroup's listing: GROUP_NAME then the
// members (USERS or HOSTS), the name padded to 13 columns as OpenLava
// prints it ("all" stands for every user or host).
func WriteGroups(w io.Writer, groups []*api.Group, membersTitle string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-13s %s\n", "GROUP_NAME", membersTitle)
	for _, g := range groups {
		fmt.Fprintf(&b, "%-13s %s\n", g.GetName(), strings.Join(g.GetMembers(), " "))
	}
	return flush(w, &b)
}

// paramTexts are bparams -l's description line and unit of each
// parameter: OpenLava's texts where it prints the parameter, XCE's own
// wording in LSF's style for the rest.
var paramTexts = map[string]struct{ desc, unit string }{
	"DEFAULT_QUEUE":                  {"System default queues for automatic queue selection:", ""},
	"DEFAULT_APPLICATION":            {"The default application profile assigned to jobs:", ""},
	"DEFAULT_PROJECT":                {"The default project assigned to jobs:", ""},
	"MBD_SLEEP_TIME":                 {"The interval for dispatching jobs by master batch daemon:", " (seconds)"},
	"SBD_SLEEP_TIME":                 {"The interval for checking jobs by slave batch daemon:", " (seconds)"},
	"JOB_ACCEPT_INTERVAL":            {"The interval for a host to accept two batch jobs:", " (* MBD_SLEEP_TIME)"},
	"CLEAN_PERIOD":                   {"The amount of time during which finished jobs are kept in core:", " (seconds)"},
	"MAX_JOB_ARRAY_SIZE":             {"The maximum number of jobs in a job array:", ""},
	"JOB_TERMINATE_INTERVAL":         {"The interval to terminate a job:", " "},
	"EADMIN_TRIGGER_DURATION":        {"The time a job must run before its CPU use can make it an idle job:", " (minutes)"},
	"ORPHAN_JOB_TERM_GRACE_PERIOD":   {"The grace period before an orphan job is terminated:", " (seconds)"},
	"MAX_PEND_JOBS":                  {"The maximum number of pending jobs a user may have:", ""},
	"LOCAL_MAX_PREEXEC_RETRY":        {"The maximum number of times a job's pre-execution command is retried:", ""},
	"LOCAL_MAX_PREEXEC_RETRY_ACTION": {"What a job becomes when its pre-execution retry limit is reached:", ""},
	"RESOURCE_RESERVE_PER_TASK":      {"Resources are reserved per task:", ""},
	"RESOURCE_RESERVE_PER_SLOT":      {"Resources are reserved per slot:", ""},
	"ABS_RUNLIMIT":                   {"Run limits are absolute (wall-clock, not normalized):", ""},
	"COMPUTE_UNIT_TYPES":             {"The compute unit types, finest first ('!' marks the default):", ""},
}

// WriteParamsLong writes bparams -l: for each parameter a description
// line and the indented "NAME = value" line (with its unit), blocks
// separated by blank lines, as OpenLava prints them.
func WriteParamsLong(w io.Writer, info *api.ClusterInfo) error {
	var b bytes.Buffer
	for i, p := range info.GetParameters() {
		if i > 0 {
			b.WriteByte('\n')
		}
		t, ok := paramTexts[p.GetName()]
		if !ok {
			t.desc = p.GetName() + ":"
		}
		fmt.Fprintf(&b, "%s\n    %s = %s%s\n", t.desc, p.GetName(), p.GetValue(), t.unit)
	}
	return flush(w, &b)
}

// WriteParamsAll writes bparams -a: a heading with the time, then every
// parameter in force as "    NAME = value".
func WriteParamsAll(w io.Writer, info *api.ClusterInfo, now time.Time) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "lsb.params configuration at %s\n", ConfigTime(now))
	for _, p := range info.GetParameters() {
		fmt.Fprintf(&b, "    %s = %s\n", p.GetName(), p.GetValue())
	}
	return flush(w, &b)
}

// ConfigTime is a time as the configuration views print it:
// "Fri Jun  8 10:27:52 CST 2012".
func ConfigTime(t time.Time) string { return t.Format("Mon Jan _2 15:04:05 MST 2006") }

// Setting is one configuration parameter and its value.
type Setting struct{ Name, Value string }

// WriteShowConf writes lsadmin showconf lim and badmin showconf mbd: the
// heading ("LIM configuration at <time>", or "... for host <h> at ..."
// when host is given), then "    NAME=value" lines as in lsf.conf.
func WriteShowConf(w io.Writer, daemon, host string, settings []Setting, now time.Time) error {
	var b bytes.Buffer
	if host != "" {
		fmt.Fprintf(&b, "%s configuration for host <%s> at %s\n", daemon, host, ConfigTime(now))
	} else {
		fmt.Fprintf(&b, "%s configuration at %s\n", daemon, ConfigTime(now))
	}
	for _, s := range settings {
		fmt.Fprintf(&b, "    %s=%s\n", s.Name, s.Value)
	}
	return flush(w, &b)
}
