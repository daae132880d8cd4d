package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"xce/lib/api"
)

// The -o machinery is shared by bjobs, bqueues and bhosts: a field table
// per record type (fieldDef), one parser for "field[:[-][width][:unit]]
// ... [delimiter='c']" (parseColumns), and one writer for the table and
// for -json (table.write, table.writeJSON). Format is bjobs's; Custom is
// the others'.

// Format is a parsed bjobs -o specification (or LSB_BJOBS_FORMAT): the
// columns to print, their widths, justification and memory units, and the
// delimiter. Set Now, Location and HMS before writing.
type Format struct {
	table[*api.Job]

	// Now is the current time, for RUN_TIME, TIME_LEFT and the like.
	Now time.Time
	// Location is the zone times are printed in; nil means time.Local.
	Location *time.Location
	// HMS prints durations as hh:mm:ss (bjobs -hms).
	HMS bool
}

// table is parsed -o columns of one record type.
type table[T any] struct {
	cols  []column[T]
	delim string // "" = columns separated by one space and padded
}

type column[T any] struct {
	f     *fieldDef[T]
	width int    // 0 = unlimited
	right bool   // name:-N
	unit  string // "" (automatic, with "bytes"), "S", or K M G T P E Z
}

// fieldDef is one name an -o specification accepts.
type fieldDef[T any] struct {
	name    string
	aliases []string
	width   int // recommended width (name:)
	// text is the value for a record, "" when there is none; kb is the
	// value of a memory field, in KB, and whether there is one.
	text func(c *fieldCtx, r T) string
	kb   func(r T) (int64, bool)
	// cutFront: a value wider than its column loses its front, replaced
	// by "*" (bjobs's JOB_NAME); other fields lose their end.
	cutFront bool
	// record: the value reads the job's record alone, not its specs,
	// pending reasons or usage (Format.RecordsOnly).
	record bool
}

// field is a bjobs field.
type field = fieldDef[*api.Job]

// fieldCtx is what a field value may depend on besides the record.
type fieldCtx struct {
	now int64 // unix nanoseconds; 0 when the caller gave no time
	loc *time.Location
	hms bool
}

// header is the column title: the field's name in upper case.
func (f *fieldDef[T]) header() string { return strings.ToUpper(f.name) }

// none is the value of a field XCE has no data for.
func none(*fieldCtx, *api.Job) string { return "" }

func str[T any](get func(r T) string) func(*fieldCtx, T) string {
	return func(_ *fieldCtx, r T) string { return get(r) }
}

func num(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// usageKB reads a memory figure of a job that has usage data.
func usageKB(get func(u *api.ResourceUsage) int64) func(j *api.Job) (int64, bool) {
	return func(j *api.Job) (int64, bool) {
		u := j.GetUsage()
		if u == nil {
			return 0, false
		}
		return get(u), true
	}
}

func noKB(*api.Job) (int64, bool) { return 0, false }

// limitKB reads a limit of the job's effective spec; unset is "-".
func limitKB(get func(*api.JobSpec) int64) func(*api.Job) (int64, bool) {
	return func(j *api.Job) (int64, bool) {
		kb := get(effective(j))
		return kb, kb > 0
	}
}

// fields lists every field name in the order "all" prints them: the LSF
// 9.1/10.1 table of output-formats.md section 4, then the 10.1 additions.
var fields = sync.OnceValue(func() []*field {
	return []*field{
		{name: "jobid", record: true, aliases: []string{"id"}, width: 7, text: str(func(j *api.Job) string { return strconv.FormatInt(j.GetJobId(), 10) })},
		{name: "stat", record: true, width: 5, text: str(func(j *api.Job) string { return StateName(j.GetState()) })},
		{name: "user", width: 7, text: str(func(j *api.Job) string { return submitted(j).GetUser() })},
		{name: "user_group", aliases: []string{"ugroup"}, width: 15, text: str(func(j *api.Job) string { return effective(j).GetUserGroup() })},
		{name: "queue", width: 10, text: str(func(j *api.Job) string { return effective(j).GetQueue() })},
		{name: "job_name", aliases: []string{"name"}, width: 10, text: str(DisplayName), cutFront: true},
		{name: "job_description", aliases: []string{"description"}, width: 17, text: str(func(j *api.Job) string { return submitted(j).GetDescription() })},
		{name: "proj_name", aliases: []string{"proj", "project"}, width: 11, text: str(projectName)},
		{name: "job_group", aliases: []string{"group"}, width: 10, text: str(func(j *api.Job) string { return api.JobGroupPath(effective(j).GetJobGroup()) })},
		{name: "dependency", width: 15, text: str(func(j *api.Job) string { return submitted(j).GetDependency() })},
		{name: "command", aliases: []string{"cmd"}, width: 15, text: str(CommandString)},
		{name: "pre_exec_command", aliases: []string{"pre_cmd"}, width: 16, text: str(func(j *api.Job) string { return effective(j).GetPreExec() })},
		{name: "pids", width: 20, text: str(pidList)},
		{name: "exit_code", record: true, width: 10, text: str(exitCode)},
		{name: "from_host", width: 11, text: str(func(j *api.Job) string { return submitted(j).GetSubmitHost() })},
		{name: "first_host", record: true, width: 11, text: str(func(j *api.Job) string {
			if hs := j.GetExecHosts(); len(hs) > 0 {
				return hs[0].GetHost()
			}
			return ""
		})},
		{name: "exec_host", record: true, width: 11, text: str(func(j *api.Job) string { return strings.Join(ExecHosts(j), ":") })},
		{name: "nexec_host", record: true, width: 10, text: str(func(j *api.Job) string { return num(int64(len(j.GetExecHosts()))) })},
		{name: "submit_time", record: true, width: 15, text: func(c *fieldCtx, j *api.Job) string { return FormatSubmitTime(j.GetSubmitTime(), c.loc) }},
		{name: "start_time", record: true, width: 15, text: func(c *fieldCtx, j *api.Job) string { return FormatSubmitTime(j.GetStartTime(), c.loc) }},
		{name: "estimated_start_time", aliases: []string{"estart_time"}, width: 20, text: none},
		{name: "specified_start_time", aliases: []string{"sstart_time"}, width: 20, text: func(c *fieldCtx, j *api.Job) string {
			return FormatSubmitTime(submitted(j).GetBeginTime()*int64(time.Second), c.loc)
		}},
		{name: "specified_terminate_time", aliases: []string{"sterminate_time"}, width: 24, text: func(c *fieldCtx, j *api.Job) string {
			return FormatSubmitTime(submitted(j).GetTermTime()*int64(time.Second), c.loc)
		}},
		{name: "time_left", width: 11, text: timeLeft},
		{name: "finish_time", width: 16, text: finishTime},
		{name: "%complete", width: 11, text: percentComplete},
		{name: "cpu_used", width: 10, text: cpuUsed},
		{name: "slots", width: 5, text: str(func(j *api.Job) string {
			if n := allocSlots(j); n > 0 {
				return strconv.Itoa(n)
			}
			lo, _ := taskRange(submitted(j))
			return strconv.Itoa(lo)
		})},
		{name: "run_time", width: 15, text: func(c *fieldCtx, j *api.Job) string { return c.seconds(runSeconds(c, j)) }},
		{name: "idle_factor", width: 11, text: func(c *fieldCtx, j *api.Job) string {
			run := runSeconds(c, j)
			if run <= 0 || j.GetUsage() == nil {
				return ""
			}
			return fmt.Sprintf("%.2f", float64(j.GetUsage().GetCpuTimeMs())/1000/float64(run))
		}},
		{name: "mem", width: 10, kb: usageKB((*api.ResourceUsage).GetMemKb)},
		{name: "memlimit", width: 10, kb: limitKB((*api.JobSpec).GetMemLimitKb)},
		{name: "swap", width: 10, kb: usageKB((*api.ResourceUsage).GetSwapKb)},
		{name: "swaplimit", width: 10, kb: limitKB((*api.JobSpec).GetSwapLimitKb)},
		{name: "min_req_proc", width: 12, text: str(func(j *api.Job) string {
			lo, _ := taskRange(submitted(j))
			return strconv.Itoa(lo)
		})},
		{name: "max_req_proc", width: 12, text: str(func(j *api.Job) string {
			_, hi := taskRange(submitted(j))
			return strconv.Itoa(hi)
		})},
		{name: "filelimit", width: 10, kb: limitKB((*api.JobSpec).GetFileLimitKb)},
		{name: "corelimit", width: 10, kb: limitKB((*api.JobSpec).GetCoreLimitKb)},
		{name: "stacklimit", width: 10, kb: limitKB((*api.JobSpec).GetStackLimitKb)},
		{name: "processlimit", width: 12, text: str(func(j *api.Job) string {
			if n := effective(j).GetProcessLimit(); n > 0 {
				return strconv.Itoa(int(n))
			}
			return ""
		})},
		{name: "input_file", width: 10, text: str(func(j *api.Job) string { return submitted(j).GetInputFile() })},
		{name: "output_file", width: 11, text: str(func(j *api.Job) string { return submitted(j).GetOutputFile() })},
		{name: "error_file", width: 10, text: str(func(j *api.Job) string { return submitted(j).GetErrorFile() })},
		{name: "sub_cwd", width: 10, text: str(submitCWD)},
		{name: "exec_home", record: true, width: 10, text: str((*api.Job).GetExecHome)},
		{name: "exec_cwd", record: true, width: 10, text: str((*api.Job).GetExecCwd)},
		{name: "effective_resreq", aliases: []string{"eresreq"}, width: 17, text: str(func(j *api.Job) string {
			// As bjobs -l's Effective, with LSF's trailing blank.
			if j.GetStartTime() == 0 || isPending(j.GetState()) {
				return ""
			}
			return combinedResReq(effective(j).GetResReq()) + " "
		})},

		// LSF 10.1 additions, with the recommended widths of the 10.1 Fix Pack
		// 14 table. Fields XCE has no data for (reservations, esub, SAAP,
		// MultiCluster forwarding, license projects, GPUs, pending time
		// limits, energy and GPFS accounting) are accepted and always empty:
		// "-" in a table, "" in -json.
		{name: "jobindex", record: true, width: 8, text: str(func(j *api.Job) string { return strconv.Itoa(int(j.GetArrayIndex())) })},
		{name: "application", aliases: []string{"app"}, width: 13, text: str(func(j *api.Job) string { return effective(j).GetApp() })},
		{name: "service_class", aliases: []string{"sla"}, width: 13, text: none},
		{name: "job_priority", aliases: []string{"priority"}, width: 12, text: str(func(j *api.Job) string { return num(int64(effective(j).GetUserPriority())) })},
		{name: "post_exec_command", aliases: []string{"post_cmd"}, width: 17, text: str(func(j *api.Job) string { return effective(j).GetPostExec() })},
		{name: "resize_notification_command", aliases: []string{"resize_cmd"}, width: 27, text: none},
		{name: "exit_reason", record: true, width: 50, text: str(func(j *api.Job) string {
			if !isFinished(j.GetState()) || !j.GetTermReasonSet() {
				return ""
			}
			return TermReasonText(j.GetTermReason())
		})},
		{name: "pend_reason", width: 11, text: str(func(j *api.Job) string {
			if !isPending(j.GetState()) {
				return ""
			}
			return strings.Join(pendReasons(j), "; ")
		})},
		{name: "kill_reason", record: true, width: 50, text: str((*api.Job).GetKillReason)},
		{name: "interactive", width: 11, text: none},
		{name: "ask_hosts", width: 30, text: str(func(j *api.Job) string { return strings.Join(submitted(j).GetHosts(), " ") })},
		{name: "alloc_slot", width: 20, text: str(func(j *api.Job) string { return strings.Join(ExecHosts(j), ":") })},
		{name: "nalloc_slot", width: 10, text: str(func(j *api.Job) string { return num(int64(allocSlots(j))) })},
		{name: "nreq_slot", width: 10, text: str(func(j *api.Job) string {
			lo, _ := taskRange(submitted(j))
			return strconv.Itoa(lo)
		})},
		{name: "host_file", width: 10, text: none},
		{name: "exclusive", width: 13, text: str(func(j *api.Job) string {
			if effective(j).GetExclusive() {
				return "Y"
			}
			return "N"
		})},
		{name: "max_mem", width: 10, kb: usageKB((*api.ResourceUsage).GetMaxMemKb)},
		{name: "avg_mem", width: 10, kb: usageKB((*api.ResourceUsage).GetAvgMemKb)},
		{name: "runtimelimit", width: 12, text: str(func(j *api.Job) string { return minutes(effective(j).GetRunLimitSec()) })},
		{name: "plimit", width: 10, text: none},
		{name: "eplimit", width: 10, text: none},
		{name: "pend_time", width: 12, text: func(c *fieldCtx, j *api.Job) string {
			end := j.GetStartTime()
			switch {
			case isPending(j.GetState()):
				end = c.now
			case end == 0 && isFinished(j.GetState()):
				end = j.GetEndTime()
			case end == 0:
				end = c.now
			}
			if j.GetSubmitTime() == 0 || end < j.GetSubmitTime() {
				return ""
			}
			return strconv.FormatInt((end-j.GetSubmitTime())/int64(time.Second), 10)
		}},
		{name: "ependtime", width: 12, text: none},
		{name: "ipendtime", width: 12, text: none},
		{name: "estimated_run_time", aliases: []string{"ertime"}, width: 20, text: str(func(j *api.Job) string { return minutes(effective(j).GetEstimatedRunSec()) })},
		{name: "ru_utime", width: 12, text: none},
		{name: "ru_stime", width: 12, text: none},
		{name: "warning_action", aliases: []string{"warn_act"}, width: 15, text: str(func(j *api.Job) string { return effective(j).GetWarningAction() })},
		{name: "action_warning_time", aliases: []string{"warn_time"}, width: 19, text: str(func(j *api.Job) string { return minutes(effective(j).GetWarningTimeSec()) })},
		{name: "exception_status", aliases: []string{"except_stat"}, width: 16, text: str(func(j *api.Job) string { return strings.Join(api.ExceptionNames(j.GetExceptions()), " ") })},
		{name: "output_dir", width: 15, text: str(func(j *api.Job) string { return submitted(j).GetOutdir() })},
		{name: "licproject", width: 20, text: none},
		{name: "forward_cluster", aliases: []string{"fwd_cluster"}, width: 15, text: none},
		{name: "forward_time", aliases: []string{"fwd_time"}, width: 15, text: none},
		{name: "srcjobid", width: 8, text: none},
		{name: "dstjobid", width: 8, text: none},
		{name: "source_cluster", aliases: []string{"srcluster"}, width: 15, text: none},
		{name: "nthreads", width: 10, text: str(func(j *api.Job) string {
			if u := j.GetUsage(); u != nil {
				return strconv.Itoa(int(u.GetNthreads()))
			}
			return ""
		})},
		{name: "hrusage", width: 50, kb: noKB},
		{name: "gpu_num", aliases: []string{"gnum"}, width: 10, text: str(func(j *api.Job) string {
			if g := jobGPU(j); g != nil {
				n := strconv.Itoa(g.Num)
				if g.PerTask {
					n += "/task"
				}
				return n
			}
			return ""
		})},
		{name: "gpu_mode", aliases: []string{"gmode"}, width: 20, text: str(func(j *api.Job) string {
			if g := jobGPU(j); g != nil {
				return g.Mode
			}
			return ""
		})},
		{name: "j_exclusive", aliases: []string{"j_excl"}, width: 15, text: str(func(j *api.Job) string {
			if g := jobGPU(j); g != nil {
				return map[bool]string{true: "yes", false: "no"}[g.Exclusive()]
			}
			return ""
		})},
		{name: "gpu_alloc", aliases: []string{"galloc"}, width: 30, text: str(gpuAlloc)},
		{name: "cpu_peak", width: 10, text: none},
		{name: "cpu_efficiency", width: 10, text: averageCPUEfficiency},
		{name: "mem_efficiency", width: 10, text: none},

		// The rest of the 10.1 Fix Pack 14 table.
		{name: "rsvid", width: 40, text: none},
		{name: "esub", width: 20, text: none},
		{name: "suspend_reason", width: 50, text: str(func(j *api.Job) string {
			if s := j.GetState(); s != api.JobState_USUSP && s != api.JobState_SSUSP {
				return ""
			}
			return strings.Join(suspendReasons(j), "; ")
		})},
		{name: "resume_reason", width: 50, text: none},
		{name: "kill_issue_host", width: 50, text: none},
		{name: "suspend_issue_host", width: 50, text: none},
		{name: "resume_issue_host", width: 50, text: none},
		{name: "charged_saap", aliases: []string{"saap"}, width: 50, text: none},
		{name: "pendstate", width: 9, text: pendState},
		{name: "estimated_sim_start_time", aliases: []string{"esstart_time"}, width: 24, text: none},
		{name: "effective_plimit", width: 18, text: none},
		{name: "plimit_remain", width: 15, text: none},
		{name: "effective_eplimit", width: 19, text: none},
		{name: "eplimit_remain", width: 16, text: none},
		{name: "combined_resreq", aliases: []string{"cresreq"}, width: 20, text: str(func(j *api.Job) string { return combinedResReq(effective(j).GetResReq()) })},
		{name: "network_req", width: 15, text: none},
		{name: "energy", text: none},
		{name: "gpfsio", text: none},
		{name: "cpu_peak_efficiency", width: 10, text: none},
		{name: "average_cpu_efficiency", width: 10, text: averageCPUEfficiency},
		{name: "cpu_peak_reached_duration", width: 10, text: none},
	}
})

// averageCPUEfficiency is CPU time over run time and slots, in percent.
func averageCPUEfficiency(c *fieldCtx, j *api.Job) string {
	run, n := runSeconds(c, j), allocSlots(j)
	if run <= 0 || n == 0 || j.GetUsage() == nil {
		return ""
	}
	return fmt.Sprintf("%.2f%%", float64(j.GetUsage().GetCpuTimeMs())/10/float64(run)/float64(n))
}

// pendState is LSF's PENDSTATE: IPEND for a pending job that is not
// eligible to be scheduled (held, a start time or dependency to wait for),
// EPEND for one that is, NOTPEND for a job that is not pending.
func pendState(c *fieldCtx, j *api.Job) string {
	switch j.GetState() {
	case api.JobState_PSUSP:
		return "IPEND"
	case api.JobState_PEND:
	default:
		return "NOTPEND"
	}
	if bt := submitted(j).GetBeginTime(); bt > 0 && (c.now == 0 || bt*int64(time.Second) > c.now) {
		return "IPEND"
	}
	for _, r := range pendReasons(j) {
		if strings.HasPrefix(r, "Job dependency condition") || strings.HasPrefix(r, "Dependency condition") ||
			strings.HasPrefix(r, "The queue is inactivated") {
			return "IPEND"
		}
	}
	return "EPEND"
}

// fieldByName indexes fields by name and alias.
var fieldByName = sync.OnceValue(func() map[string]*field { return indexFields(fields()) })

// indexFields indexes a field table by name and alias, giving the fields
// without a recommended width that of their name, at least 10.
func indexFields[T any](list []*fieldDef[T]) map[string]*fieldDef[T] {
	m := make(map[string]*fieldDef[T])
	for _, f := range list {
		if f.width == 0 {
			f.width = max(len(f.name), 10)
		}
		m[f.name] = f
		for _, a := range f.aliases {
			m[a] = f
		}
	}
	return m
}

// memUnits are the unit prefixes name:width:unit accepts, by what a user
// may write.
var memUnits = map[string]string{
	"KB": "K", "K": "K", "MB": "M", "M": "M", "GB": "G", "G": "G",
	"TB": "T", "T": "T", "PB": "P", "P": "P", "EB": "E", "E": "E",
	"ZB": "Z", "Z": "Z", "S": "S",
}

// ParseFormat parses a bjobs -o specification:
//
//	"field[:[-][width][:unit]] ... [delimiter='c']"
//
// Field names and aliases are case-insensitive; "all" stands for every field.
// A field alone has unlimited width; "name:" the recommended width; "name:N"
// at most N characters (JOB_NAME loses its front, replaced by "*", other
// fields their end); "name:-N" right-justifies. The unit (KB/K, MB/M, GB/G,
// TB/T, PB/P, EB/E, ZB/Z, or S for automatic without "bytes") applies to the
// memory fields only. An unknown field gives LSF's error
// "<foo> in the format string is not a valid field name.".
func ParseFormat(spec string) (*Format, error) {
	t, err := parseColumns(spec, fields(), fieldByName())
	if err != nil {
		return nil, err
	}
	return &Format{table: t}, nil
}

// MaxWidth is the widest column -o may ask for: each row pads its columns
// to their widths, so "jobid:99999999999" would make every line gigabytes.
const MaxWidth = 4096

// parseColumns parses an -o specification against a field table (list in
// the order "all" prints them, byName its index).
func parseColumns[T any](spec string, list []*fieldDef[T], byName map[string]*fieldDef[T]) (table[T], error) {
	rest, delim, err := cutDelimiter(spec)
	if err != nil {
		return table[T]{}, err
	}
	t := table[T]{delim: delim}
	for _, tok := range strings.Fields(rest) {
		given, opts, hasOpts := strings.Cut(tok, ":")
		name := strings.ToLower(given)
		var defs []*fieldDef[T]
		if name == "all" {
			defs = list
		} else if d := byName[name]; d != nil {
			defs = []*fieldDef[T]{d}
		} else {
			return table[T]{}, formatError(given + " in the format string is not a valid field name.")
		}
		widthPart, unitPart, hasUnit := strings.Cut(opts, ":")
		right := strings.HasPrefix(widthPart, "-")
		widthPart = strings.TrimPrefix(widthPart, "-")
		width := -1 // recommended
		if widthPart != "" {
			n, err := strconv.Atoi(widthPart)
			if err != nil || n <= 0 {
				return table[T]{}, formatError(tok + ": the output width must be a positive number.")
			}
			if n > MaxWidth {
				return table[T]{}, formatError(fmt.Sprintf("%s: the output width must be at most %d.", tok, MaxWidth))
			}
			width = n
		}
		unit := ""
		if hasUnit {
			unit = memUnits[strings.ToUpper(unitPart)]
			if unit == "" {
				return table[T]{}, formatError(tok + ": <" + unitPart + "> is not a valid unit prefix (KB, MB, GB, TB, PB, EB, ZB or S).")
			}
		}
		for _, d := range defs {
			c := column[T]{f: d, right: right, unit: unit}
			switch {
			case !hasOpts: // unlimited
			case width < 0:
				c.width = d.width
			default:
				c.width = width
			}
			if unit != "" && d.kb == nil {
				if name == "all" {
					c.unit = ""
				} else {
					return table[T]{}, formatError(tok + ": a unit prefix applies only to the memory fields.")
				}
			}
			t.cols = append(t.cols, c)
		}
	}
	if len(t.cols) == 0 {
		return table[T]{}, formatError("The format string names no field.")
	}
	return t, nil
}

// formatError is an error in a format string, worded as bjobs prints it
// (a sentence, with its period).
type formatError string

func (e formatError) Error() string { return string(e) }

// cutDelimiter removes delimiter='c' (or "c") from spec and returns the
// delimiter.
func cutDelimiter(spec string) (rest, delim string, err error) {
	// Lower-case ASCII only: strings.ToLower changes the length of
	// invalid UTF-8, and i must index spec.
	lower := []byte(spec)
	for j, c := range lower {
		if c >= 'A' && c <= 'Z' {
			lower[j] = c + 'a' - 'A'
		}
	}
	i := strings.Index(string(lower), "delimiter=")
	if i < 0 {
		return spec, "", nil
	}
	after := spec[i+len("delimiter="):]
	q := after[:min(1, len(after))]
	if q != "'" && q != `"` {
		return "", "", formatError("delimiter= must be followed by a quoted character, as in delimiter=','.")
	}
	r, size := utf8.DecodeRuneInString(after[1:])
	if size == 0 || !strings.HasPrefix(after[1+size:], q) {
		return "", "", formatError("The delimiter must be a single character.")
	}
	return spec[:i] + " " + after[1+size+1:], string(r), nil
}

// RecordsOnly says whether every column reads the job records alone, so
// that a query may leave out the specs, pending reasons and usage
// (api.QueryRequest.RecordsOnly).
func (f *Format) RecordsOnly() bool {
	for _, c := range f.cols {
		if !c.f.record {
			return false
		}
	}
	return true
}

func (f *Format) ctx() *fieldCtx {
	return &fieldCtx{now: unixNano(f.Now), loc: locOrLocal(f.Location), hms: f.HMS}
}

// Write prints the jobs as a table: a header of upper-case field names
// (unless noheader), then one line per job; an empty value prints "-".
func (f *Format) Write(w io.Writer, jobs []*api.Job, noheader bool) error {
	return f.write(w, f.ctx(), jobs, noheader)
}

// WriteJSON prints bjobs -o ... -json: every value a string, never cut or
// padded, "" when empty; "/" written as "\/". notFound are the job IDs asked
// for that do not exist, each printed after the jobs as a record with JOBID
// and ERROR.
func (f *Format) WriteJSON(w io.Writer, jobs []*api.Job, notFound []string) error {
	records := f.records(f.ctx(), jobs)
	for _, id := range notFound {
		records = append(records, [][2]string{{"JOBID", id}, {"ERROR", "Job <" + id + "> is not found"}})
	}
	return writeJSON(w, "bjobs", "JOBS", records)
}

// value is a column's untruncated value for a record, "" for none.
func (c column[T]) value(ctx *fieldCtx, r T) string {
	if c.f.kb != nil {
		kb, ok := c.f.kb(r)
		if !ok {
			return ""
		}
		return formatMem(kb, c.unit)
	}
	return c.f.text(ctx, r)
}

func (t *table[T]) sep() string {
	if t.delim == "" {
		return " "
	}
	return t.delim
}

// write prints records as a table: a header of upper-case field names
// (unless noheader), then one line per record; an empty value prints "-".
// Cells are written straight into the output, not joined from strings.
func (t *table[T]) write(w io.Writer, ctx *fieldCtx, recs []T, noheader bool) error {
	var b bytes.Buffer
	sep := t.sep()
	if !noheader {
		for i, c := range t.cols {
			if i > 0 {
				b.WriteString(sep)
			}
			t.writeFit(&b, c, c.f.header(), false)
		}
		b.WriteByte('\n')
	}
	for _, r := range recs {
		for i, c := range t.cols {
			if i > 0 {
				b.WriteString(sep)
			}
			v := c.value(ctx, r)
			if v == "" {
				v = "-"
			}
			t.writeFit(&b, c, v, c.f.cutFront)
		}
		b.WriteByte('\n')
	}
	return flush(w, &b)
}

// writeFit writes a cell cut to the column width (its front cut off when
// cutFront) and, without a delimiter, padded to it.
func (t *table[T]) writeFit(b *bytes.Buffer, c column[T], s string, cutFront bool) {
	if c.width <= 0 {
		b.WriteString(s)
		return
	}
	if cutFront {
		s = tailName(s, c.width)
	} else {
		s = cut(s, c.width)
	}
	if t.delim != "" {
		b.WriteString(s)
		return
	}
	pad := c.width - utf8.RuneCountInString(s)
	if c.right {
		writeSpaces(b, pad)
		b.WriteString(s)
		return
	}
	b.WriteString(s)
	writeSpaces(b, pad)
}

// records are the JSON records of recs: each column's header and value,
// never cut or padded.
func (t *table[T]) records(ctx *fieldCtx, recs []T) [][][2]string {
	headers := make([]string, len(t.cols))
	for i, c := range t.cols {
		headers[i] = c.f.header()
	}
	out := make([][][2]string, len(recs))
	// One block for every record's pairs: a poll of 1000 jobs is one
	// allocation, not 1000.
	pairs := make([][2]string, len(recs)*len(t.cols))
	for n, r := range recs {
		rec := pairs[n*len(t.cols) : (n+1)*len(t.cols) : (n+1)*len(t.cols)]
		for i, c := range t.cols {
			rec[i] = [2]string{headers[i], c.value(ctx, r)}
		}
		out[n] = rec
	}
	return out
}

// writeJSON prints the -json form LSF's commands share: "COMMAND", the
// record count under countKey ("JOBS", "QUEUES", "HOSTS") as a number,
// then "RECORDS", every value a string; 2-space indentation.
func writeJSON(w io.Writer, command, countKey string, records [][][2]string) error {
	var b bytes.Buffer
	// Its size without escapes, so that 1,000 records are written into
	// one allocation rather than a doubling series of them.
	size := 64 + len(command) + len(countKey)
	for _, rec := range records {
		size += 12
		for _, kv := range rec {
			size += 12 + len(kv[0]) + len(kv[1])
		}
	}
	b.Grow(size)
	b.WriteString("{\n  \"COMMAND\":")
	writeJSONString(&b, command)
	b.WriteString(",\n  ")
	writeJSONString(&b, countKey)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(len(records)))
	b.WriteString(",\n")
	if len(records) == 0 {
		b.WriteString("  \"RECORDS\":[]\n}\n")
		return flush(w, &b)
	}
	b.WriteString("  \"RECORDS\":[\n")
	for i, rec := range records {
		b.WriteString("    {\n")
		for k, kv := range rec {
			b.WriteString("      ")
			writeJSONString(&b, kv[0])
			b.WriteByte(':')
			writeJSONString(&b, kv[1])
			if k < len(rec)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("    }")
		if i < len(records)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("  ]\n}\n")
	return flush(w, &b)
}

// jsonString quotes s as LSF's JSON does: "/" is escaped as "\/".
func jsonString(s string) string {
	var b bytes.Buffer
	writeJSONString(&b, s)
	return b.String()
}

// writeJSONString writes jsonString(s) into b.
func writeJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		// The run of bytes that need no escape, in one write.
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' && s[j] != '/' {
			j++
		}
		if j > i {
			b.WriteString(s[i:j])
			if i = j; i == len(s) {
				break
			}
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			// Invalid UTF-8 comes out as U+FFFD, byte by byte, as ranging
			// over the string gives it.
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size
			continue
		}
		i++
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// formatMem prints a KB amount for a memory field. Without a unit it picks
// the largest of Mbytes, Gbytes, Tbytes, Pbytes that keeps the number at
// least 1 and prints one decimal unless whole ("5.2 Gbytes", "0 Mbytes");
// "S" does the same with a one-letter unit and one decimal ("5.2G"); an
// explicit unit prints two decimals, the third rounded up ("0.01G").
func formatMem(kb int64, unit string) string {
	const letters = "KMGTPEZ"
	switch unit {
	case "":
		v, i := float64(kb)/1024, 1
		for i < 4 && v >= 1024 {
			v /= 1024
			i++
		}
		return trimZero(fmt.Sprintf("%.1f", v)) + " " + letters[i:i+1] + "bytes"
	case "S":
		v, i := float64(kb)/1024, 1
		for i < len(letters)-1 && v >= 1024 {
			v /= 1024
			i++
		}
		return fmt.Sprintf("%.1f%s", v, letters[i:i+1])
	}
	v := float64(kb) / math.Pow(1024, float64(strings.Index(letters, unit)))
	v = math.Ceil(v*100-1e-9) / 100
	return fmt.Sprintf("%.2f%s", v, unit)
}

// minutes is a limit in seconds as LSF prints RUNTIMELIMIT: minutes with
// one decimal ("1440.0"); "" for none.
func minutes(sec int64) string {
	if sec <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", float64(sec)/60)
}

// seconds prints a duration in seconds as RUN_TIME does: "16038 second(s)",
// or with -hms "04:27:18".
func (c *fieldCtx) seconds(sec int64) string {
	if c.hms {
		return hms(sec)
	}
	return strconv.FormatInt(sec, 10) + " second(s)"
}

func hms(sec int64) string {
	if sec < 0 {
		sec = 0
	}
	return fmt.Sprintf("%02d:%02d:%02d", sec/3600, sec/60%60, sec%60)
}

// runSeconds is how long the job has run: until it ended, or until now.
func runSeconds(c *fieldCtx, j *api.Job) int64 {
	start := j.GetStartTime()
	if start == 0 || isPending(j.GetState()) {
		return 0
	}
	end := j.GetEndTime()
	if end == 0 {
		end = c.now
	}
	if end < start {
		return 0
	}
	return (end - start) / int64(time.Second)
}

// runLimitEnd is when a running job's run limit (suffix "L") or, without
// one, its estimated run time (-We, suffix "E") is reached.
func runLimitEnd(j *api.Job) (end int64, limit int64, suffix string, ok bool) {
	if isPending(j.GetState()) || isFinished(j.GetState()) || j.GetStartTime() == 0 {
		return 0, 0, "", false
	}
	e := effective(j)
	switch {
	case e.GetRunLimitSec() > 0:
		limit, suffix = e.GetRunLimitSec(), "L"
	case e.GetEstimatedRunSec() > 0:
		limit, suffix = e.GetEstimatedRunSec(), "E"
	default:
		return 0, 0, "", false
	}
	return j.GetStartTime() + limit*int64(time.Second), limit, suffix, true
}

// finishTime is when the job finished or, for a running job with a run
// limit or estimate, when it will: "Dec 28 19:56 L".
func finishTime(c *fieldCtx, j *api.Job) string {
	if isFinished(j.GetState()) {
		return FormatSubmitTime(j.GetEndTime(), c.loc)
	}
	if end, _, suffix, ok := runLimitEnd(j); ok {
		return FormatSubmitTime(end, c.loc) + " " + suffix
	}
	return ""
}

// timeLeft is the time until the run limit (or estimate): "H:MM L", with
// -hms "hh:mm:ss L".
func timeLeft(c *fieldCtx, j *api.Job) string {
	end, _, suffix, ok := runLimitEnd(j)
	if !ok || c.now == 0 {
		return ""
	}
	left := (end - c.now) / int64(time.Second)
	if left < 0 {
		left = 0
	}
	if c.hms {
		return hms(left) + " " + suffix
	}
	return fmt.Sprintf("%d:%02d %s", left/3600, left/60%60, suffix)
}

// percentComplete is the share of the run limit (or estimate) used: "25% L".
func percentComplete(c *fieldCtx, j *api.Job) string {
	_, limit, suffix, ok := runLimitEnd(j)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%.0f%% %s", 100*float64(runSeconds(c, j))/float64(limit), suffix)
}

// cpuUsed is the CPU time of a job that has usage data: "12.3 second(s)",
// with -hms "00:00:12".
func cpuUsed(c *fieldCtx, j *api.Job) string {
	u := j.GetUsage()
	if u == nil {
		return ""
	}
	if c.hms {
		return hms(u.GetCpuTimeMs() / 1000)
	}
	return fmt.Sprintf("%.1f second(s)", float64(u.GetCpuTimeMs())/1000)
}

// pidList is PIDS: the job's processes, comma-separated.
func pidList(j *api.Job) string {
	var ps []string
	for _, p := range j.GetUsage().GetPids() {
		ps = append(ps, strconv.Itoa(int(p)))
	}
	return strings.Join(ps, ",")
}

// exitCode is EXIT_CODE: the exit status of an EXIT job, empty otherwise.
func exitCode(j *api.Job) string {
	if j.GetState() != api.JobState_EXIT {
		return ""
	}
	return strconv.Itoa(int(j.GetExitStatus()))
}
