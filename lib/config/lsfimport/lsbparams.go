package lsfimport

// What the importer takes from lsb.params.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"xce/lib/config"
)

var paramsReasons = map[string]string{
	"JOB_TERMINATE_INTERVAL":  "use xced --terminate-interval",
	"MBD_SLEEP_TIME":          "xce schedules when something changes, not on a timer",
	"SBD_SLEEP_TIME":          "xce workers report continuously",
	"JOB_SCHEDULING_INTERVAL": "xce schedules when something changes, not on a timer",
	"MAX_JOBID":               "xce job IDs do not wrap",
	"MAX_JOB_NUM":             "xce keeps finished jobs for clean_period",
	"DEFAULT_HOST_SPEC":       "xce has no CPU factors; run limits are wall-clock",
	"ABS_RUNLIMIT":            "xce run limits are always wall-clock",
	"ACCT_ARCHIVE_SIZE":       "xce keeps accounting records for acct_retention, not in files",
	"ACCT_ARCHIVE_TIME":       "xce keeps accounting records for acct_retention, not in files",
}

func (im *importer) lsbParams(f *File) {
	if f == nil {
		return
	}
	var archiveAge, archiveFiles *Param
	cleanPeriod := int64(3600)
	for _, s := range f.Sections {
		if !strings.EqualFold(s.Name, "Parameters") {
			im.sectionNote(s, "xce.toml has no equivalent")
			continue
		}
		for _, p := range s.Params {
			switch strings.ToUpper(p.Key) {
			case "ACCT_ARCHIVE_AGE":
				archiveAge = &p
			case "MAX_ACCT_ARCHIVE_FILE":
				archiveFiles = &p
			case "DEFAULT_QUEUE":
				im.defaultQueue = &p
			case "DEFAULT_APPLICATION":
				im.defaultApp = &p
			case "DEFAULT_PROJECT":
				im.cluster.set("default_project", config.TOMLString(p.Value), "", psrc(p))
			case "CLEAN_PERIOD":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n <= 0 {
					im.note(psrc(p), "not translated: %q is not a positive number of seconds", p.Value)
					continue
				}
				cleanPeriod = n
				im.cluster.set("clean_period", config.TOMLString(config.Duration(n).String()), fmt.Sprintf("CLEAN_PERIOD %d s", n), psrc(p))
			case "GPU_REQ_MERGE":
				switch strings.ToUpper(strings.Trim(p.Value, `"' `)) {
				case "Y", "YES":
					im.cluster.set("gpu_req_merge", "true", "", psrc(p))
				case "N", "NO", "":
				default:
					im.note(psrc(p), "not translated: %q is neither Y nor N", p.Value)
				}
			case "ORPHAN_JOB_TERM_GRACE_PERIOD":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n < 0 {
					im.note(psrc(p), "not translated: %q is not a number of seconds", p.Value)
					continue
				}
				im.cluster.set("orphan_job_term_grace_period", config.TOMLString(config.Duration(n).String()), fmt.Sprintf("ORPHAN_JOB_TERM_GRACE_PERIOD %d s", n), psrc(p))
			case "EADMIN_TRIGGER_DURATION":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n <= 0 {
					im.note(psrc(p), "not translated: %q is not a positive number of minutes", p.Value)
					continue
				}
				im.cluster.set("eadmin_trigger_duration", config.TOMLString(config.Duration(n*60).String()), fmt.Sprintf("EADMIN_TRIGGER_DURATION %d min", n), psrc(p))
			case "MAX_JOB_ARRAY_SIZE":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n < 1 || n > 2147483646 {
					im.note(psrc(p), "not translated: %q is not a number from 1 to 2147483646", p.Value)
					continue
				}
				im.cluster.set("max_array_size", tomlInt(n), "", psrc(p))
			case "LOCAL_MAX_PREEXEC_RETRY":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n < 1 || n > 2147483647 {
					im.note(psrc(p), "not translated: %q is not a number from 1 to 2147483647", p.Value)
					continue
				}
				if n == 2147483647 {
					n = 0 // LSF's "unlimited"
				}
				im.cluster.set("local_max_preexec_retry", tomlInt(n), "", psrc(p))
			case "LOCAL_MAX_PREEXEC_RETRY_ACTION":
				switch a := strings.ToLower(p.Value); a {
				case "suspend", "exit":
					im.cluster.set("local_max_preexec_retry_action", config.TOMLString(a), "", psrc(p))
				default:
					im.note(psrc(p), "not translated: %q is neither SUSPEND nor EXIT", p.Value)
				}
			case "MAX_USER_PRIORITY":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n < 1 || n > maxInt32 {
					im.loss(psrc(p), "not translated: %q is not a number from 1 to %d; bsub -sp stays off", p.Value, maxInt32)
					continue
				}
				im.cluster.set("max_user_priority", tomlInt(n), "", psrc(p))
			case "COMPUTE_UNIT_TYPES":
				im.computeUnitTypes(p)
			case "MAX_PEND_JOBS":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n < 1 || n > 2147483647 {
					im.note(psrc(p), "not translated: %q is not a number from 1 to 2147483647", p.Value)
					continue
				}
				if n < 2147483647 { // LSF's "unlimited"
					im.cluster.set("max_pend_jobs", tomlInt(n), "", psrc(p))
				}
			case "PREEMPT_FOR", "PREEMPT_JOBTYPE", "PREEMPTABLE_RESOURCES", "PREEMPTION_WAIT_TIME",
				"MAX_JOB_PREEMPT", "NO_PREEMPT_RUN_TIME", "NO_PREEMPT_FINISH_TIME":
				im.preemptKey(im.cluster, p)
			case "PREEMPT_DELAY":
				if _, ok := preemptSeconds(p); !ok {
					im.note(psrc(p), "not translated: %q is not a number of seconds", p.Value)
					continue
				}
				im.preemptDelay = &p
			default:
				if !im.rcConf(p) {
					im.notTranslated(p, paramsReasons)
				}
			}
		}
	}
	im.acctArchive(archiveAge, archiveFiles, cleanPeriod)
}

// preemptWords are the keywords each preemption list key takes.
var preemptWords = map[string][]string{
	"PREEMPT_FOR":     {"GROUP_JLP", "GROUP_MAX", "HOST_JLU", "LEAST_RUN_TIME", "MINI_JOB", "OPTIMAL_MINI_JOB", "USER_JLP"},
	"PREEMPT_JOBTYPE": {"EXCLUSIVE", "BACKFILL", "AFFINITY"},
}

// preemptKey translates a preemption key of lsb.params (into t, the
// cluster) or of a queue (MAX_JOB_PREEMPT, NO_PREEMPT_RUN_TIME,
// NO_PREEMPT_FINISH_TIME, PREEMPT_DELAY).
func (im *importer) preemptKey(t *table, p Param) {
	at := psrc(p)
	k := strings.ToUpper(p.Key)
	key := strings.ToLower(k)
	switch k {
	case "PREEMPT_FOR", "PREEMPT_JOBTYPE":
		var out []string
		for _, w := range strings.Fields(strings.ToUpper(p.Value)) {
			if !slices.Contains(preemptWords[k], w) {
				im.note(at, "not translated: %s: use %s", w, strings.Join(preemptWords[k], ", "))
				continue
			}
			out = append(out, strings.ToLower(w))
		}
		t.set(key, tomlList(out), "", at)
	case "PREEMPTABLE_RESOURCES":
		var out []string
		for _, r := range strings.Fields(p.Value) {
			if !config.ValidName(r) {
				im.note(at, "not translated: %q is not a resource name", r)
				continue
			}
			out = append(out, r)
		}
		t.set(key, tomlList(out), "", at)
	case "PREEMPTION_WAIT_TIME", "PREEMPT_DELAY":
		n, ok := preemptSeconds(p)
		if !ok {
			im.note(at, "not translated: %q is not a number of seconds", p.Value)
			return
		}
		t.set(key, config.TOMLString(config.Duration(n).String()), fmt.Sprintf("%s %d s", k, n), at)
	case "MAX_JOB_PREEMPT":
		n, err := strconv.ParseInt(strings.TrimSpace(p.Value), 10, 64)
		if err != nil || n < 1 || n > maxInt32 {
			im.note(at, "not translated: %q is not a number from 1 to %d", p.Value, maxInt32)
			return
		}
		t.set(key, tomlInt(n), "", at)
	case "NO_PREEMPT_RUN_TIME", "NO_PREEMPT_FINISH_TIME":
		// Minutes, or a percentage of the run limit.
		v := strings.TrimSpace(p.Value)
		if pct, ok := strings.CutSuffix(v, "%"); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
			if err != nil || f < 0 || f > 100 {
				im.note(at, "not translated: %q is not a percentage from 0 to 100", p.Value)
				return
			}
			t.set(key, config.TOMLString(strconv.FormatFloat(f, 'f', -1, 64)+"%"), "", at)
			return
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > maxInt32 {
			im.note(at, "not translated: %q is not a number of minutes or a percentage", p.Value)
			return
		}
		t.set(key, config.TOMLString(config.Duration(n*60).String()), fmt.Sprintf("%s %d min", k, n), at)
	}
}

// preemptSeconds reads PREEMPTION_WAIT_TIME or PREEMPT_DELAY (seconds).
func preemptSeconds(p Param) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(p.Value), 10, 64)
	return n, err == nil && n >= 0 && n <= maxInt32
}

// acctArchive translates LSF's accounting archive settings: lsb.acct is
// archived every ACCT_ARCHIVE_AGE days and MAX_ACCT_ARCHIVE_FILE archives
// are kept, so a record is gone after age x (files + 1) days at most; that
// is acct_retention. Either alone bounds nothing and is noted.
func (im *importer) acctArchive(age, files *Param, cleanPeriod int64) {
	const why = "acct_retention needs both ACCT_ARCHIVE_AGE and MAX_ACCT_ARCHIVE_FILE (records are gone after age x (files + 1) days)"
	switch {
	case age == nil && files == nil:
		return
	case age == nil:
		im.note(psrc(*files), "not translated: %s", why)
		return
	case files == nil:
		im.note(psrc(*age), "not translated: %s", why)
		return
	}
	days, err1 := strconv.ParseInt(age.Value, 10, 64)
	n, err2 := strconv.ParseInt(files.Value, 10, 64)
	switch {
	case err1 != nil || days <= 0 || days > 36500:
		im.note(psrc(*age), "not translated: %q is not a number of days from 1 to 36500", age.Value)
		return
	case err2 != nil || n <= 0 || n > 10000:
		im.note(psrc(*files), "not translated: %q is not a number of files from 1 to 10000", files.Value)
		return
	}
	keep := days * (n + 1) * 24 * 3600
	if keep < cleanPeriod {
		im.note(psrc(*age), "not translated: %d days x (%d + 1) is shorter than the clean period", days, n)
		return
	}
	im.cluster.set("acct_retention", config.TOMLString(config.Duration(keep).String()),
		fmt.Sprintf("ACCT_ARCHIVE_AGE %d days x (MAX_ACCT_ARCHIVE_FILE %d + 1)", days, n), psrc(*age))
}

// computeUnitTypes translates COMPUTE_UNIT_TYPES (finest first, "!"
// after the default type) into compute_unit_types.
func (im *importer) computeUnitTypes(p Param) {
	var out []string
	for _, t := range strings.Fields(p.Value) {
		name := strings.TrimSuffix(t, "!")
		if !config.ValidName(name) || strings.Contains(name, "!") {
			im.note(psrc(p), "not translated: %q is not a valid compute unit type", t)
			return
		}
		out = append(out, t)
	}
	im.cuTypes = out
	im.cluster.set("compute_unit_types", tomlList(out), "", psrc(p))
}

// cuTypeNames are the compute unit types without their "!".
func (im *importer) cuTypeNames() []string {
	var out []string
	for _, t := range im.cuTypes {
		out = append(out, strings.TrimSuffix(t, "!"))
	}
	return out
}

// defaultCUType is the type a cu[] or CU[] without one means.
func (im *importer) defaultCUType() string {
	for _, t := range im.cuTypes {
		if name, ok := strings.CutSuffix(t, "!"); ok {
			return name
		}
	}
	if len(im.cuTypes) > 0 {
		return im.cuTypes[0]
	}
	return ""
}
