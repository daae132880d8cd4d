package lsfimport

// What the importer takes from lsb.queues.

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"xce/lib/config"
	"xce/lib/gpu"
	"xce/lib/requeue"
)

// withJobLimits adds to a section's reasons those of the resource limits
// xce takes from the job only (bsub -c -v -F -D -S -C -p -T): a queue or
// profile cannot set them.
func withJobLimits(m map[string]string) map[string]string {
	for _, k := range []string{"CPULIMIT", "SWAPLIMIT", "FILELIMIT", "DATALIMIT", "STACKLIMIT", "CORELIMIT", "PROCESSLIMIT", "THREADLIMIT"} {
		m[k] = "xce takes this limit from the job only (bsub -c, -v, -F, -D, -S, -C, -p, -T), not from a queue or profile"
	}
	return m
}

var queueReasons = withJobLimits(map[string]string{
	"JOB_STARTER":       "a job starter belongs to an application profile in xce (apps.NAME.job_starter)",
	"HOST_PRE_EXEC":     "xce has no per-host pre/post-exec",
	"HOST_POST_EXEC":    "xce has no per-host pre/post-exec",
	"DEFAULT_HOST_SPEC": "xce has no CPU factors; run limits are wall-clock",
	"FAIRSHARE_QUEUES":  "xce has no cross-queue fair share",
	"SLOT_POOL":         "xce has no slot pools",
	"SLOT_SHARE":        "xce has no slot pools",
})

func (im *importer) lsbQueues(f *File) {
	if f == nil {
		return
	}
	for _, s := range f.Sections {
		if !strings.EqualFold(s.Name, "Queue") {
			im.sectionNote(s, "xce.toml has no equivalent")
			continue
		}
		im.queue(s)
	}
}

func (im *importer) queue(s *Section) {
	np, ok := s.Param("QUEUE_NAME")
	if !ok || np.Value == "" {
		im.note(src{s.File, s.Line, "Begin Queue"}, "not translated: the queue has no QUEUE_NAME")
		return
	}
	name := np.Value
	if im.badName(psrc(np), name, false) {
		return
	}
	for _, q := range im.queues {
		if q.name == name {
			im.note(psrc(np), "not translated: queue %s is defined twice; the first is kept", name)
			return
		}
	}
	q := &queueInfo{name: name, prio: 1}
	q.t = im.d.table(fileLine(s.File, s.Line), psrc(np), "queues", name)
	im.queues = append(im.queues, q)
	t := q.t
	const deprecated = "deprecated: queue-level %s is honoured for compatibility; move it to an application profile"
	ownDelay := false
	defer func() {
		if d := im.preemptDelay; d != nil && !ownDelay {
			n, _ := preemptSeconds(*d)
			t.set("preempt_delay", config.TOMLString(config.Duration(n).String()), fmt.Sprintf("lsb.params PREEMPT_DELAY %d s", n), psrc(*d))
		}
	}()
	for _, p := range s.Params {
		at := psrc(p)
		k := strings.ToUpper(p.Key)
		switch k {
		case "QUEUE_NAME":
		case "DESCRIPTION":
			t.set("description", config.TOMLString(strings.Join(strings.Fields(p.Value), " ")), "", at)
		case "PRIORITY", "QJOB_LIMIT", "UJOB_LIMIT", "HJOB_LIMIT":
			n, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil || n <= 0 || n > maxInt32 {
				if k == "PRIORITY" {
					im.note(at, "not translated: %q is not an integer from 1 to %d", p.Value, maxInt32)
				} else {
					im.loss(at, "not translated: %q is not an integer from 1 to %d", p.Value, maxInt32)
				}
				continue
			}
			key := map[string]string{"PRIORITY": "priority", "QJOB_LIMIT": "max_slots", "UJOB_LIMIT": "max_slots_per_user", "HJOB_LIMIT": "max_slots_per_host"}[k]
			t.set(key, tomlInt(n), "", at)
			if k == "PRIORITY" {
				q.prio = int(n)
			}
		case "NICE":
			n, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil {
				im.note(at, "not translated: %q is not an integer", p.Value)
				continue
			}
			t.set("nice", tomlInt(n), "", at)
		case "JOB_OVERRUN", "JOB_UNDERRUN":
			n, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil || n <= 0 {
				im.note(at, "not translated: %q is not a positive number of minutes", p.Value)
				continue
			}
			t.set(strings.ToLower(k), config.TOMLString(config.Duration(n*60).String()), fmt.Sprintf("%s %d min", k, n), at)
		case "JOB_IDLE":
			f, err := strconv.ParseFloat(p.Value, 64)
			if err != nil || f <= 0 || f > 1 {
				im.note(at, "not translated: %q is not a number from 0 to 1", p.Value)
				continue
			}
			t.set("job_idle", strconv.FormatFloat(f, 'f', -1, 64), "", at)
		case "USERS", "ADMINISTRATORS":
			t.set(strings.ToLower(k), tomlList(List(p.Value)), "", at)
		case "HOSTS":
			list := List(p.Value)
			hosts := im.hostRefs(list, true, at, name)
			if len(hosts) == 0 && len(list) > 0 {
				im.loss(at, "not translated: none of the hosts is known; the queue would get xce's default, all hosts")
			}
			t.set("hosts", tomlList(hosts), "", at)
		case "TASKLIMIT", "PROCLIMIT":
			im.tasks(t, p)
		case "MEMLIMIT":
			vals := strings.Fields(p.Value)
			if len(vals) > 2 {
				im.note(at, "not translated: expected [default] max")
				continue
			}
			keys := []string{"max_mem"}
			if len(vals) == 2 {
				keys = []string{"default_mem", "max_mem"}
			}
			for i, v := range vals {
				m, ok := im.memory(v)
				if !ok {
					im.note(at, "not translated: %q is not an amount of memory", v)
					continue
				}
				t.set(keys[i], config.TOMLString(m.String()), fmt.Sprintf("MEMLIMIT %s in %s", v, im.unitName), at)
			}
		case "RUNLIMIT":
			vals := strings.Fields(p.Value)
			if len(vals) > 2 {
				im.note(at, "not translated: expected [default] max")
				continue
			}
			keys := []string{"max_run_limit"}
			if len(vals) == 2 {
				keys = []string{"default_run_limit", "max_run_limit"}
			}
			for i, v := range vals {
				if d, ok := im.runLimit(at, v); ok {
					t.set(keys[i], config.TOMLString(d.String()), "RUNLIMIT "+v, at)
				}
			}
		case "RUNTIME":
			im.runtime(t, p)
		case "RUN_WINDOW", "DISPATCH_WINDOW":
			var ws []string
			for _, v := range strings.Fields(p.Value) {
				var w config.Window
				if err := w.UnmarshalText([]byte(v)); err != nil {
					im.note(at, "not translated: %v", err)
					continue
				}
				ws = append(ws, w.String())
			}
			t.set(strings.ToLower(k)+"s", tomlList(ws), "", at)
		case "RERUNNABLE":
			im.rerunnable(t, p)
		case "EXCLUSIVE":
			v := strings.ToUpper(p.Value)
			switch {
			case v == "Y" || v == "YES":
				t.set("exclusive", "true", "", at)
			case v == "N" || v == "NO":
			case v == "CU" || strings.HasPrefix(v, "CU["):
				// EXCLUSIVE=CU[type]: cu[excl] jobs of that type (CU or
				// CU[]: the default type).
				typ := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(p.Value)[2:], "["), "]")
				if typ == "" {
					typ = im.defaultCUType()
				}
				if !slices.Contains(im.cuTypeNames(), typ) {
					im.note(at, "not translated: %s: %q is not one of COMPUTE_UNIT_TYPES", p.Value, typ)
					continue
				}
				t.set("exclusive_cu", config.TOMLString(typ), "", at)
			default:
				im.note(at, "not translated: %s: only Y, N or CU[type] translate", p.Value)
			}
		case "FAIRSHARE":
			im.fairshare(t, p)
		case "PREEMPTION":
			q.preempt = &p
		case "MAX_JOB_PREEMPT", "NO_PREEMPT_RUN_TIME", "NO_PREEMPT_FINISH_TIME", "PREEMPT_DELAY":
			im.preemptKey(t, p)
			if k == "PREEMPT_DELAY" {
				ownDelay = true
			}
		case "TERMINATE_WHEN":
			im.terminateWhen(t, p)
		case "REQUEUE_EXIT_VALUES":
			im.requeue(t, p)
		case "GPU_REQ":
			im.gpuReq(t, p)
		case "INTERACTIVE":
			switch v := strings.ToUpper(strings.TrimSpace(p.Value)); v {
			case "YES", "Y":
			case "NO", "ONLY":
				t.set("interactive", config.TOMLString(strings.ToLower(v)), "", at)
			default:
				im.loss(at, "not translated: %q is not YES, NO or ONLY", p.Value)
			}
		case "PJOB_LIMIT":
			f, err := strconv.ParseFloat(p.Value, 64)
			if err != nil || f <= 0 || f > maxInt32 {
				im.loss(at, "not translated: %q is not a positive number of slots per processor", p.Value)
				continue
			}
			im.addLimit(at, "pjob_"+name, [2]string{"queues", tomlList([]string{name})},
				[2]string{"per_host", tomlList([]string{"all"})}, [2]string{"slots_per_processor", strconv.FormatFloat(f, 'f', -1, 64)})
		case "RC_HOSTS", "RC_ACCOUNT", "RC_DEMAND_POLICY":
			im.rcQueue(t, p)
		case "RES_REQ", "PRE_EXEC", "POST_EXEC":
			t.set(strings.ToLower(k), config.TOMLString(p.Value), "deprecated: imported from LSF; move it to an application profile", at)
			im.note(at, deprecated, k)
			if k == "RES_REQ" {
				im.resreqs++
			}
		default:
			im.notTranslated(p, queueReasons)
		}
	}
}

// terminateWhen translates TERMINATE_WHEN: PREEMPT ends preempted jobs
// (terminate_when = ["preempt"]); LOAD and WINDOW are noted.
func (im *importer) terminateWhen(t *table, p Param) {
	var out []string
	for _, w := range strings.Fields(strings.ToUpper(p.Value)) {
		switch w {
		case "PREEMPT":
			out = append(out, "preempt")
		case "LOAD", "WINDOW":
			im.note(psrc(p), "not translated: %s: xce ends jobs this way only on preemption", w)
		default:
			im.note(psrc(p), "not translated: %s: use PREEMPT, LOAD or WINDOW", w)
		}
	}
	t.set("terminate_when", tomlList(out), "", psrc(p))
}

// tasks translates TASKLIMIT = [min [default]] max.
// gpuReq translates LSB_GPU_REQ and GPU_REQ (bsub -gpu syntax),
// checked as xce checks it.
func (im *importer) gpuReq(t *table, p Param) {
	v := strings.Trim(strings.TrimSpace(p.Value), `"'`)
	if _, err := gpu.Parse(v); err != nil {
		im.note(psrc(p), "not translated: %v", err)
		return
	}
	t.set("gpu_req", config.TOMLString(v), "", psrc(p))
}

// rerunnable translates RERUNNABLE (a queue's or a profile's).
func (im *importer) rerunnable(t *table, p Param) {
	switch strings.ToUpper(strings.TrimSpace(p.Value)) {
	case "Y", "YES":
		t.set("rerunnable", "true", "", psrc(p))
	case "N", "NO":
	default:
		im.note(psrc(p), "not translated: RERUNNABLE = %s: use yes or no", p.Value)
	}
}

// requeue translates REQUEUE_EXIT_VALUES, checked as xce checks it.
func (im *importer) requeue(t *table, p Param) {
	at := psrc(p)
	v := strings.Join(strings.Fields(p.Value), " ")
	if _, err := requeue.Parse(v); err != nil {
		im.note(at, "not translated: %v", err)
		return
	}
	t.set("requeue_exit_values", config.TOMLString(v), "", at)
}

func (im *importer) tasks(t *table, p Param) {
	vals := strings.Fields(p.Value)
	var ns []int64
	for _, v := range vals {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			im.note(psrc(p), "not translated: %q is not a positive number of tasks", v)
			return
		}
		ns = append(ns, n)
	}
	var keys []string
	switch len(ns) {
	case 1:
		keys = []string{"max_tasks"}
	case 2:
		keys = []string{"min_tasks", "max_tasks"}
	case 3:
		keys = []string{"min_tasks", "default_tasks", "max_tasks"}
	default:
		im.note(psrc(p), "not translated: expected [min [default]] max")
		return
	}
	for i, k := range keys {
		t.set(k, tomlInt(ns[i]), "", psrc(p))
	}
}

var runRE = regexp.MustCompile(`^(?:(\d+):)?(\d+)(?:/(\S+))?$`)

// runLimit reads "[hour:]minute[/host]".
func (im *importer) runLimit(at src, v string) (config.Duration, bool) {
	m := runRE.FindStringSubmatch(v)
	if m == nil {
		im.note(at, "not translated: %q is not [hour:]minute", v)
		return 0, false
	}
	h, err1 := strconv.ParseInt(cmp.Or(m[1], "0"), 10, 64)
	mins, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil || h > 1e6 || mins > 1e8 {
		im.note(at, "not translated: %q is out of range", v)
		return 0, false
	}
	d := config.Duration((h*60 + mins) * 60)
	if d == 0 {
		im.note(at, "not translated: a run limit of 0")
		return 0, false
	}
	if m[3] != "" {
		im.note(at, "translated without its normalization host %s: xce has no CPU factors; run limits are wall-clock", m[3])
	}
	return d, true
}

// runtime translates RUNTIME, a run time estimate in [hour:]minute[/host].
func (im *importer) runtime(t *table, p Param) {
	vals := strings.Fields(p.Value)
	if len(vals) != 1 {
		im.note(psrc(p), "not translated: expected one [hour:]minute value")
		return
	}
	if d, ok := im.runLimit(psrc(p), vals[0]); ok {
		t.set("runtime", config.TOMLString(d.String()), "RUNTIME "+vals[0], psrc(p))
	}
}

var sharesRE = regexp.MustCompile(`\[\s*([^,\[\]\s]+)\s*,\s*(\d+)\s*\]`)

func (im *importer) fairshare(t *table, p Param) {
	v := strings.TrimSpace(p.Value)
	inner, ok := strings.CutPrefix(v, "USER_SHARES")
	inner = strings.TrimSpace(inner)
	if !ok || !strings.HasPrefix(inner, "[") || !strings.HasSuffix(inner, "]") {
		im.note(psrc(p), "not translated: only FAIRSHARE = USER_SHARES[[name, shares] ...] translates")
		return
	}
	var keys, vals []string
	for _, m := range sharesRE.FindAllStringSubmatch(inner[1:len(inner)-1], -1) {
		who, n := m[1], m[2]
		if strings.HasSuffix(who, "@") {
			im.note(psrc(p), "not translated: [%s, %s]: xce has no per-member shares of a group", who, n)
			continue
		}
		if sh, _ := strconv.Atoi(n); sh <= 0 {
			im.note(psrc(p), "not translated: [%s, %s]: shares must be positive", who, n)
			continue
		}
		if slices.Contains(keys, who) {
			continue
		}
		keys, vals = append(keys, who), append(vals, n)
	}
	t.set("fairshare", tomlInline(keys, vals), "", psrc(p))
}

var preemptRE = regexp.MustCompile(`(?i)(PREEMPTIVE|PREEMPTABLE)\s*\[([^\]]*)\]`)

// preemption translates PREEMPTION once every queue's priority is known.
func (im *importer) preemption(q *queueInfo) {
	p := *q.preempt
	at := psrc(p)
	rest := strings.TrimSpace(preemptRE.ReplaceAllString(p.Value, ""))
	if rest != "" {
		im.note(at, "not translated: %q: only PREEMPTIVE[...] and PREEMPTABLE[...] translate", rest)
	}
	for _, m := range preemptRE.FindAllStringSubmatch(p.Value, -1) {
		kind := strings.ToUpper(m[1])
		key, all := "preemptive", "lower"
		if kind == "PREEMPTABLE" {
			key, all = "preemptable", "higher"
		}
		names := strings.Fields(m[2])
		if len(names) == 0 {
			q.t.set(key, tomlList([]string{all}), "", at)
			continue
		}
		var keep []string
		for _, n := range names {
			full := n
			if pm := prefRE.FindStringSubmatch(n); pm != nil {
				n = pm[1]
				if kind == "PREEMPTABLE" {
					im.note(at, "translated without the preference: %s: preference levels belong to PREEMPTIVE", full)
					full = n
				}
			}
			var o *queueInfo
			for _, x := range im.queues {
				if x.name == n {
					o = x
				}
			}
			switch {
			case o == nil:
				im.note(at, "not translated: %s: no such queue", n)
			case kind == "PREEMPTIVE" && o.prio >= q.prio:
				im.note(at, "not translated: %s: its priority %d is not lower than %s's %d", n, o.prio, q.name, q.prio)
			case kind == "PREEMPTABLE" && o.prio <= q.prio:
				im.note(at, "not translated: %s: its priority %d is not higher than %s's %d", n, o.prio, q.name, q.prio)
			default:
				keep = append(keep, full) // "q+N" keeps LSF's preference level
			}
		}
		q.t.set(key, tomlList(keep), "", at)
	}
}
