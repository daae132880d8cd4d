package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Effective returns the effective configuration as xce.toml text: every
// default filled in, values in canonical form ("64GB", "1h30m"), sections
// in a fixed order (queues by priority, everything else by name), values
// that are unset or zero (no limit) left out, and comments where a value
// needs explaining (the hosts a list expands to, deprecated settings).
// Parsing the text gives the same configuration back. It is what
// "xced config check FILE" prints.
func (c *Config) Effective() string {
	w := &printer{}
	from := c.File
	if from == "" {
		from = "the built-in default"
	}
	w.line("# Effective configuration of cluster %s (from %s).", c.Cluster.Name, from)

	w.table("cluster")
	cl := &c.Cluster
	w.kv("name", cl.Name)
	w.kv("administrators", cl.Administrators)
	w.kv("default_queue", cl.DefaultQueue)
	w.kv("default_project", cl.DefaultProject)
	w.kv("default_app", cl.DefaultApp)
	w.kv("clean_period", cl.CleanPeriod)
	w.kv("acct_retention", cl.AcctRetention)
	w.kv("max_array_size", cl.MaxArraySize)
	w.kv("max_pend_jobs", cl.MaxPendJobs)
	w.kv("eadmin_trigger_duration", cl.EadminTriggerDuration)
	w.kv("orphan_job_term_grace_period", cl.OrphanJobTermGracePeriod)
	w.kv("local_max_preexec_retry", cl.LocalMaxPreexecRetry)
	w.kv("local_max_preexec_retry_action", cl.LocalMaxPreexecRetryAction)
	w.kv("preexec_retry_interval", cl.PreexecRetryInterval)
	w.kv("memlimit_enforce", cl.MemlimitEnforce)
	w.kv("job_memlimit", cl.JobMemlimit)
	w.kv("stdout_direct", cl.StdoutDirect)
	w.kv("host_unavail_grace", cl.HostUnavailGrace)
	w.kv("host_failure_timeout", cl.HostFailureTimeout)
	w.kv("tls_cert_file", cl.TLSCertFile)
	w.kv("tls_key_file", cl.TLSKeyFile)
	w.kv("gpu_req", cl.GpuReq)
	w.kv("gpu_req_merge", cl.GpuReqMerge)
	w.kv("controllers", cl.Controllers)
	w.kv("max_user_priority", cl.MaxUserPriority)
	w.kv("unit_for_limits", cl.UnitForLimits)
	w.kv("compute_unit_types", cl.ComputeUnitTypes)
	w.printPreemptParams(&cl.Preemption)
	cc := c.Containment(clusterOnly) // defaults filled in
	w.line("process_tracking = %t", cc.ProcessTracking)
	w.line("cgroup_acct = %t", cc.CgroupAcct)
	w.kv("resource_enforce", cc.ResourceEnforce)
	w.kv("metrics_listen", cl.MetricsListen)
	w.kv("elim_dir", cl.ElimDir)
	if cl.ElimDir != "" || cl.ElimStaleAfter != DefaultElimStaleAfter {
		w.kv("elim_stale_after", cl.ElimStaleAfter)
	}

	for _, name := range slices.Sorted(maps.Keys(c.Resources)) {
		r := c.Resources[name]
		w.table("resources." + TOMLKey(name))
		w.kv("description", r.Description)
		w.kv("type", r.Type)
		w.kv("units", r.Units)
		w.kv("consumable", r.Consumable && !r.Shared())
		w.kv("increasing", r.Increasing)
		w.kv("total", r.Total)
		w.kv("instances", r.Instances)
		w.kv("provider", r.Provider)
		w.kv("borrow_max", r.BorrowMax)
		if r.Provider != "" {
			w.kv("idle_time", r.IdleTime)
			if r.SimLendDelay != 0 {
				w.kv("sim_lend_delay", r.SimLendDelay)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Hosts)) {
		h := c.Hosts[name]
		w.table("hosts." + TOMLKey(name))
		w.kv("description", h.Description)
		if h.Slots == 0 {
			w.line("# slots: one per CPU")
		}
		w.kv("slots", h.Slots)
		if !h.IsServer() {
			w.line("server = false")
		}
		w.kv("type", h.Type)
		w.kv("model", h.Model)
		if h.CPUFactor > 0 {
			w.kv("cpu_factor", h.CPUFactor)
		}
		w.kv("attributes", h.Attributes)
		w.kv("resources", h.Resources)
		if h.ProcessTracking != nil {
			w.line("process_tracking = %t", *h.ProcessTracking)
		}
		if h.CgroupAcct != nil {
			w.line("cgroup_acct = %t", *h.CgroupAcct)
		}
		if h.ResourceEnforce != nil {
			v := value(*h.ResourceEnforce)
			if v == "" {
				v = "[]  # none on this host"
			}
			w.line("resource_enforce = %s", v)
		}
		w.kv("elim_dir", h.ElimDir)
		w.kv("instances", h.Instances)
	}
	for _, name := range slices.Sorted(maps.Keys(c.HostGroups)) {
		g := c.HostGroups[name]
		w.table("host_groups." + TOMLKey(name))
		w.kv("description", g.Description)
		w.kvNote("members", g.Members, hostsNote(c.ExpandHosts(g.Members)))
	}
	for _, name := range slices.Sorted(maps.Keys(c.UserGroups)) {
		g := c.UserGroups[name]
		w.table("user_groups." + TOMLKey(name))
		w.kv("description", g.Description)
		w.kv("members", g.Members)
	}
	for _, name := range c.QueueNames() {
		q := c.Queues[name]
		w.table("queues." + TOMLKey(name))
		if name == cl.DefaultQueue {
			w.line("# the default queue")
		}
		w.kv("description", q.Description)
		w.kv("priority", q.Priority)
		w.kv("nice", q.Nice)
		w.kvNote("hosts", q.Hosts, hostsNote(c.ExpandHosts(q.Hosts)))
		w.kv("users", q.Users)
		w.kv("administrators", q.Administrators)
		w.kv("max_slots", q.MaxSlots)
		w.kv("max_slots_per_user", q.MaxSlotsPerUser)
		w.kv("max_slots_per_host", q.MaxSlotsPerHost)
		w.kv("min_tasks", q.MinTasks)
		w.kv("default_tasks", q.DefaultTasks)
		w.kv("max_tasks", q.MaxTasks)
		w.kv("max_mem", q.MaxMem)
		w.kv("default_mem", q.DefaultMem)
		w.kv("max_run_limit", q.MaxRunLimit)
		w.kv("default_run_limit", q.DefaultRunLimit)
		w.kv("runtime", q.Runtime)
		w.kv("interactive", q.Interactive)
		w.kv("run_windows", q.RunWindows)
		w.kv("dispatch_windows", q.DispatchWindows)
		w.kv("exclusive", q.Exclusive)
		w.kv("exclusive_cu", q.ExclusiveCU)
		w.kv("rerunnable", q.Rerunnable)
		w.kv("job_overrun", q.JobOverrun)
		w.kv("job_underrun", q.JobUnderrun)
		if q.JobIdle > 0 {
			w.kv("job_idle", q.JobIdle)
		}
		w.kv("slot_reserve", q.SlotReserve)
		w.kv("fairshare", q.Fairshare)
		w.kv("preemptive", q.Preemptive)
		w.kv("preemptable", q.Preemptable)
		w.printQueuePreempt(&q.QueuePreemption)
		const dep = "deprecated: imported from LSF; move it to an application profile"
		if q.resReq != nil {
			w.kvNote("res_req", q.resReq.String(), dep)
		}
		w.kv("requeue_exit_values", q.RequeueExitValues)
		w.kv("gpu_req", q.GpuReq)
		w.kvNote("pre_exec", q.PreExec, dep)
		w.kvNote("post_exec", q.PostExec, dep)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Apps)) {
		a := c.Apps[name]
		w.table("apps." + TOMLKey(name))
		w.kv("description", a.Description)
		if a.resReq != nil {
			w.kv("res_req", a.resReq.String())
		}
		w.kv("min_tasks", a.MinTasks)
		w.kv("default_tasks", a.DefaultTasks)
		w.kv("max_tasks", a.MaxTasks)
		w.kv("run_limit", a.RunLimit)
		w.kv("mem_limit", a.MemLimit)
		w.kv("runtime", a.Runtime)
		w.kv("fixed", a.Fixed)
		w.kv("pre_exec", a.PreExec)
		w.kv("post_exec", a.PostExec)
		if !a.JobExecAllowed() {
			w.line("allow_job_exec = false")
		}
		w.kv("job_starter", a.JobStarter)
		w.kv("rerunnable", a.Rerunnable)
		w.kv("requeue_exit_values", a.RequeueExitValues)
		w.kv("gpu_req", a.GpuReq)
		w.kv("container", a.Container)
		w.kv("exec_driver", a.ExecDriver)
		w.kv("env", a.Env)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Projects)) {
		p := c.Projects[name]
		w.table("projects." + TOMLKey(name))
		w.kv("description", p.Description)
		w.kv("max_slots", p.MaxSlots)
		w.kv("max_mem", p.MaxMem)
		w.kv("max_gpus", p.MaxGPUs)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Users)) {
		w.table("users." + TOMLKey(name))
		w.kv("max_slots", c.Users[name].MaxSlots)
		w.kv("max_pend_jobs", c.Users[name].MaxPendJobs)
	}
	for _, u := range c.ComputeUnits {
		w.line("\n[[compute_units]]")
		w.kv("name", u.Name)
		w.kv("type", u.Type)
		w.kv("description", u.Description)
		w.kvNote("members", u.Members, hostsNote(c.CUHosts(u.Name)))
		w.kv("condense", u.Condense)
	}
	for _, l := range c.Limits {
		w.line("\n[[limits]]")
		w.kv("name", l.Name)
		for _, kl := range []struct {
			k string
			v []string
		}{{"users", l.Users}, {"per_user", l.PerUser}, {"queues", l.Queues}, {"per_queue", l.PerQueue},
			{"hosts", l.Hosts}, {"per_host", l.PerHost}, {"projects", l.Projects}, {"per_project", l.PerProject},
			{"apps", l.Apps}, {"per_app", l.PerApp}, {"lic_projects", l.LicProjects}, {"per_lic_project", l.PerLicProject}} {
			w.kv(kl.k, kl.v)
		}
		if l.Slots != nil {
			w.line("slots = %d", *l.Slots)
		}
		if l.SlotsPerProcessor != 0 {
			w.kv("slots_per_processor", l.SlotsPerProcessor)
		}
		for _, r := range []string{"mem", "swp", "tmp"} {
			if a, ok := l.Amounts[r]; ok {
				w.kv(r, a.String())
			}
		}
		if l.Jobs != nil {
			w.line("jobs = %d", *l.Jobs)
		}
		if len(l.Resources) > 0 {
			parts := make([]string, 0, len(l.Resources))
			for _, r := range sortedKeys(l.Resources) {
				parts = append(parts, TOMLKey(r)+" = "+strconv.FormatFloat(l.Resources[r], 'f', -1, 64))
			}
			w.line("resources = { %s }", strings.Join(parts, ", "))
		}
	}
	return w.b.String()
}

// String returns Effective().
func (c *Config) String() string { return c.Effective() }

func hostsNote(hosts []string) string {
	if len(hosts) == 0 {
		return "no configured host"
	}
	return strings.Join(hosts, " ")
}

type printer struct {
	b strings.Builder
}

func (w *printer) line(format string, a ...any) {
	fmt.Fprintf(&w.b, format, a...)
	w.b.WriteByte('\n')
}

func (w *printer) table(name string) {
	w.line("\n[%s]", name)
}

func (w *printer) kv(k string, v any) { w.kvNote(k, v, "") }

// kvNote writes k = v with a trailing comment; nothing when v is zero.
func (w *printer) kvNote(k string, v any, note string) {
	s := value(v)
	if s == "" {
		return
	}
	if note != "" {
		s += "  # " + note
	}
	w.line("%s = %s", TOMLKey(k), s)
}

// value returns the TOML text of v, or "" for a zero value.
func value(v any) string {
	switch v := v.(type) {
	case string:
		if v == "" {
			return ""
		}
		return TOMLString(v)
	case bool:
		if !v {
			return ""
		}
		return "true"
	case int:
		if v == 0 {
			return ""
		}
		return strconv.Itoa(v)
	case int64:
		if v == 0 {
			return ""
		}
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case Memory:
		if v == 0 {
			return ""
		}
		return TOMLString(v.String())
	case Duration:
		if v == 0 {
			return ""
		}
		return TOMLString(v.String())
	case []string:
		if len(v) == 0 {
			return ""
		}
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = TOMLString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case []Window:
		if len(v) == 0 {
			return ""
		}
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = TOMLString(s.String())
		}
		return "[" + strings.Join(q, ", ") + "]"
	case map[string]int:
		return inline(v, func(n int) string { return strconv.Itoa(n) })
	case map[string]string:
		return inline(v, TOMLString)
	case map[string][]string:
		return inline(v, func(l []string) string {
			if len(l) == 0 {
				return "[]"
			}
			return value(l)
		})
	case map[string]any:
		return inline(v, func(x any) string {
			if s := value(x); s != "" {
				return s
			}
			return "0"
		})
	}
	panic(fmt.Sprintf("config: cannot print %T", v))
}

func inline[V any](m map[string]V, f func(V) string) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, TOMLKey(k)+" = "+f(m[k]))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// TOMLKey returns k bare when TOML allows it, else quoted (the LSF
// importer writes TOML the same way).
func TOMLKey(k string) string {
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return TOMLString(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// TOMLString returns s as a TOML basic string.
func TOMLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
