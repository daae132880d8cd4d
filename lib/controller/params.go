package controller

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/config"
)

// parameters are the lsb.params values XCE has, by LSF's names, for
// bparams -a and -l and badmin showconf mbd. XCE schedules when something
// changes (after each change, at least every second) rather than on
// mbatchd's timer, so MBD_SLEEP_TIME and SBD_SLEEP_TIME say 1 second;
// rusage is reserved per host, as LSF 10.1 with RESOURCE_RESERVE_PER_TASK
// (formerly RESOURCE_RESERVE_PER_SLOT) = N; run limits are wall-clock.
func (c *Controller) parameters(conf *config.Config) []*api.Parameter {
	cl := conf.Cluster
	var out []*api.Parameter
	add := func(name, value string) {
		if value != "" {
			out = append(out, &api.Parameter{Name: name, Value: value})
		}
	}
	seconds := func(d config.Duration) string { return strconv.FormatInt(int64(d), 10) }
	add("DEFAULT_QUEUE", cl.DefaultQueue)
	add("DEFAULT_APPLICATION", cl.DefaultApp)
	add("DEFAULT_PROJECT", cl.DefaultProject)
	add("MBD_SLEEP_TIME", "1")
	add("SBD_SLEEP_TIME", "1")
	add("JOB_ACCEPT_INTERVAL", "0")
	add("CLEAN_PERIOD", seconds(cl.CleanPeriod))
	add("MAX_JOB_ARRAY_SIZE", strconv.Itoa(cl.MaxArraySize))
	add("JOB_TERMINATE_INTERVAL", strconv.FormatInt(int64(c.terminateInterval()/time.Second), 10))
	if cl.EadminTriggerDuration > 0 {
		add("EADMIN_TRIGGER_DURATION", strconv.FormatInt(int64(cl.EadminTriggerDuration)/60, 10))
	}
	if cl.OrphanJobTermGracePeriod > 0 {
		add("ORPHAN_JOB_TERM_GRACE_PERIOD", seconds(cl.OrphanJobTermGracePeriod))
	}
	if cl.MaxPendJobs > 0 {
		add("MAX_PEND_JOBS", strconv.Itoa(cl.MaxPendJobs))
	}
	retry := "2147483647" // LSF's "no limit"
	if cl.LocalMaxPreexecRetry > 0 {
		retry = strconv.Itoa(cl.LocalMaxPreexecRetry)
	}
	add("LOCAL_MAX_PREEXEC_RETRY", retry)
	add("LOCAL_MAX_PREEXEC_RETRY_ACTION", strings.ToUpper(cl.LocalMaxPreexecRetryAction))
	add("RESOURCE_RESERVE_PER_TASK", "N")
	add("RESOURCE_RESERVE_PER_SLOT", "N")
	add("ABS_RUNLIMIT", "Y")
	add("COMPUTE_UNIT_TYPES", strings.Join(cl.ComputeUnitTypes, " "))
	return out
}

// resources are the configured (site-defined) resources, for lsinfo.
func resources(conf *config.Config) []*api.ResourceInfo {
	names := make([]string, 0, len(conf.Resources))
	for n := range conf.Resources {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]*api.ResourceInfo, 0, len(names))
	for _, n := range names {
		r := conf.Resources[n]
		kind := "Numeric"
		switch strings.ToLower(r.Type) {
		case "string":
			kind = "String"
		case "boolean":
			kind = "Boolean"
		}
		out = append(out, &api.ResourceInfo{Name: n, Kind: kind, Increasing: r.Increasing, Description: r.Description})
	}
	return out
}

// terminateInterval is the time between bkill's signals
// (JOB_TERMINATE_INTERVAL).
func (c *Controller) terminateInterval() time.Duration {
	if c.cfg.TerminateInterval <= 0 {
		return 10 * time.Second
	}
	return c.cfg.TerminateInterval
}
