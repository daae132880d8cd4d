package config

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"xce/lib/gpu"
	"xce/lib/requeue"
	"xce/lib/resreq"
)

// checker collects the mistakes of one configuration.
type checker struct {
	errs Errors
}

func (k *checker) add(key, format string, a ...any) {
	k.errs = append(k.errs, &Error{Key: key, Msg: fmt.Sprintf(format, a...)})
}

func (k *checker) nonNegative(key string, v int) {
	if v < 0 {
		k.add(key, "%d: must not be negative (0 means no limit)", v)
	}
}

// finish fills in defaults and checks the configuration; its error is an
// Errors without file and line (Parse adds them).
func (c *Config) finish() error {
	k := &checker{}
	c.defaults()
	c.checkNames(k)
	c.checkResources(k)
	c.checkHosts(k)
	c.checkElims(k)
	c.checkUserGroups(k)
	c.checkQueues(k)
	c.checkPreemptParams(k)
	c.checkApps(k)
	c.checkContainers()
	c.checkProjects(k)
	c.checkLimits(k)
	c.checkComputeUnits(k)
	c.checkRsvPolicies(k)
	c.checkCluster(k)
	c.checkContainment(k)
	c.checkRanges(k)
	c.checkElastic(k)
	if len(k.errs) > 0 {
		return k.errs
	}
	return nil
}

func (c *Config) defaults() {
	if c.Cluster.Name == "" {
		c.Cluster.Name = "xce"
	}
	if c.Cluster.DefaultProject == "" {
		c.Cluster.DefaultProject = "default"
	}
	if c.Cluster.CleanPeriod == 0 {
		c.Cluster.CleanPeriod = 3600
	}
	if c.Cluster.AcctRetention == 0 {
		c.Cluster.AcctRetention = DefaultAcctRetention
	}
	if c.Cluster.MaxArraySize == 0 {
		c.Cluster.MaxArraySize = 1000
	}
	if c.Cluster.EadminTriggerDuration == 0 {
		c.Cluster.EadminTriggerDuration = 60
	}
	if c.Cluster.LocalMaxPreexecRetryAction == "" {
		c.Cluster.LocalMaxPreexecRetryAction = "suspend"
	}
	if c.Cluster.PreexecRetryInterval == 0 {
		c.Cluster.PreexecRetryInterval = 10
	}
	if c.Cluster.HostUnavailGrace == 0 {
		c.Cluster.HostUnavailGrace = 60
	}
	if c.Cluster.HostFailureTimeout == 0 && !c.hostFailureTimeoutSet {
		c.Cluster.HostFailureTimeout = 600
	}
	if len(c.Queues) == 0 {
		c.Queues = Default("localhost", 1).Queues
	}
	if c.Cluster.DefaultQueue == "" && len(c.Queues) == 1 {
		for name := range c.Queues {
			c.Cluster.DefaultQueue = name
		}
	}
	for name, r := range c.Resources {
		r.Name = name
		if r.Type == "" {
			r.Type = "numeric"
		}
		if r.Total > 0 || r.Instances {
			r.Consumable = true
		}
	}
	for name, h := range c.Hosts {
		h.Name = name
	}
	for name, g := range c.HostGroups {
		g.Name = name
	}
	for name, g := range c.UserGroups {
		g.Name = name
	}
	for name, q := range c.Queues {
		q.Name = name
		if q.Priority == 0 {
			q.Priority = 1
		}
		if len(q.Hosts) == 0 {
			q.Hosts = []string{"all"}
		}
		if len(q.Users) == 0 {
			q.Users = []string{"all"}
		}
	}
	for name, a := range c.Apps {
		a.Name = name
	}
	for name, p := range c.Projects {
		p.Name = name
	}
	for name, u := range c.Users {
		u.Name = name
	}
}

// ValidName reports what a queue, host, group, profile, project or
// user-facing name may be (lsfimport notes a name it would refuse where it
// reads it).
func ValidName(s string) bool {
	if s == "" || strings.HasPrefix(s, "~") || strings.HasPrefix(s, "-") {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`"'\#:=[](){}+,;*?~`, r) {
			return false
		}
	}
	return true
}

var reservedNames = map[string]bool{"all": true, "others": true, "none": true, "default": true, "lower": true, "higher": true}

// ReservedName reports whether s is one of the words a host, queue or
// group may not be named: all, others, none, default, lower, higher.
func ReservedName(s string) bool { return reservedNames[s] }

func (c *Config) checkNames(k *checker) {
	check := func(section string, names []string, reserved bool) {
		for _, n := range names {
			switch {
			case !ValidName(n):
				k.add(section+"."+n, "%q is not a valid name: use letters, digits, '_', '-', '.' and '@' (no blanks)", n)
			case reserved && reservedNames[n]:
				k.add(section+"."+n, "%q is a reserved word here; choose another name", n)
			}
		}
	}
	check("hosts", slices.Sorted(maps.Keys(c.Hosts)), true)
	check("host_groups", slices.Sorted(maps.Keys(c.HostGroups)), true)
	check("user_groups", slices.Sorted(maps.Keys(c.UserGroups)), true)
	check("queues", slices.Sorted(maps.Keys(c.Queues)), false)
	check("apps", slices.Sorted(maps.Keys(c.Apps)), false)
	check("projects", slices.Sorted(maps.Keys(c.Projects)), false)
	check("users", slices.Sorted(maps.Keys(c.Users)), false)
	for _, n := range slices.Sorted(maps.Keys(c.HostGroups)) {
		if c.Hosts[n] != nil {
			k.add("host_groups."+n, "%s is also a host; a host group needs a name of its own", n)
		}
	}
}

func (c *Config) checkResources(k *checker) {
	var site []resreq.Resource
	for _, name := range slices.Sorted(maps.Keys(c.Resources)) {
		r := c.Resources[name]
		key := "resources." + name
		rr := resreq.Resource{Name: name, Units: r.Units, Consumable: r.Consumable, Increasing: r.Increasing}
		switch r.Type {
		case "numeric":
			rr.Kind = resreq.Numeric
		case "string":
			rr.Kind = resreq.String
		case "boolean":
			rr.Kind = resreq.Boolean
		default:
			k.add(key+".type", "%q: expected \"numeric\", \"string\" or \"boolean\"", r.Type)
			continue
		}
		if r.Total < 0 {
			k.add(key+".total", "%d: must not be negative", r.Total)
			continue
		}
		if r.Total > 0 && rr.Kind != resreq.Numeric {
			k.add(key+".total", "only a numeric resource can be a shared pool")
			continue
		}
		if _, err := resreq.NewSchema(rr); err != nil {
			k.add(key, "%v", err)
			continue
		}
		site = append(site, rr)
	}
	// The GPU resources lib/gpu reports, unless the site defines one of
	// the names itself.
	var builtin []resreq.Resource
	for _, r := range gpu.Resources(0) {
		if c.Resources[r.Name] == nil {
			builtin = append(builtin, r)
		}
	}
	s, err := resreq.NewSchema(append(builtin, site...)...)
	if err != nil { // cannot happen: each was checked alone
		k.add("resources", "%v", err)
		s, _ = resreq.NewSchema()
	}
	if u := c.memUnit(k); u != resreq.NoUnit {
		s = s.WithMemUnit(u)
	}
	c.schema = s
}

func (c *Config) checkHosts(k *checker) {
	for _, name := range slices.Sorted(maps.Keys(c.Hosts)) {
		h := c.Hosts[name]
		key := "hosts." + name
		k.nonNegative(key+".slots", h.Slots)
		if h.CPUFactor < 0 || h.CPUFactor > 1e6 || h.CPUFactor != h.CPUFactor {
			k.add(key+".cpu_factor", "%g: must be a positive number (0 means 1)", h.CPUFactor)
		}
		for _, a := range h.Attributes {
			r := c.Resources[a]
			switch {
			case r == nil:
				k.add(key+".attributes", "unknown resource %s; define it under [resources.%s] with type = \"boolean\"", a, a)
			case r.Type != "boolean":
				k.add(key+".attributes", "%s is a %s resource; give its value under [hosts.%s.resources]", a, r.Type, name)
			}
		}
		for _, rn := range slices.Sorted(maps.Keys(h.Resources)) {
			v := h.Resources[rn]
			rkey := key + ".resources." + rn
			r := c.Resources[rn]
			switch {
			case r == nil:
				k.add(rkey, "unknown resource %s; define it under [resources.%s]", rn, rn)
			case r.Type == "boolean":
				k.add(rkey, "%s is a Boolean resource; list it in attributes", rn)
			case r.Shared():
				k.add(rkey, "%s is a shared resource (total = %d); it has no per-host value", rn, r.Total)
			case r.Type == "numeric":
				switch v := v.(type) {
				case int64:
					if v < 0 {
						k.add(rkey, "%d: must not be negative", v)
					}
				case float64:
					if v < 0 {
						k.add(rkey, "%g: must not be negative", v)
					}
				default:
					k.add(rkey, "%s is numeric; give a number", rn)
				}
			case r.Type == "string":
				if _, ok := v.(string); !ok {
					k.add(rkey, "%s is a string resource; give a string", rn)
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.HostGroups)) {
		g := c.HostGroups[name]
		key := "host_groups." + name + ".members"
		if len(g.Members) == 0 {
			k.add(key, "a host group needs members")
		}
		for _, m := range g.Members {
			if err := c.checkHostRef(m, false); err != "" {
				k.add(key, "%s", err)
			}
		}
		if c.hostGroupCycle(name, nil) {
			k.add(key, "host group %s contains itself", name)
		}
	}
}

// checkHostRef checks one entry of a host list; it returns what is wrong.
func (c *Config) checkHostRef(e string, queue bool) string {
	name := hostRefName(e)
	switch {
	case name == "all":
		return ""
	case queue && (name == "others" || name == "none"):
		return ""
	case c.Hosts[name] != nil || c.HostGroups[name] != nil:
		return ""
	case len(c.Hosts) == 0:
		return fmt.Sprintf("unknown host or host group %s (no [hosts] are configured; use \"all\")", name)
	}
	return fmt.Sprintf("unknown host or host group %s", name)
}

func (c *Config) hostGroupCycle(name string, path []string) bool {
	if slices.Contains(path, name) {
		return true
	}
	g := c.HostGroups[name]
	if g == nil {
		return false
	}
	for _, m := range g.Members {
		if c.HostGroups[hostRefName(m)] != nil && c.hostGroupCycle(hostRefName(m), append(path, name)) {
			return true
		}
	}
	return false
}

func (c *Config) userGroupCycle(name string, path []string) bool {
	if slices.Contains(path, name) {
		return true
	}
	g := c.UserGroups[name]
	if g == nil {
		return false
	}
	for _, m := range g.Members {
		m = strings.TrimPrefix(m, "~")
		if c.UserGroups[m] != nil && c.userGroupCycle(m, append(path, name)) {
			return true
		}
	}
	return false
}

func (c *Config) checkUserGroups(k *checker) {
	for _, name := range slices.Sorted(maps.Keys(c.UserGroups)) {
		g := c.UserGroups[name]
		key := "user_groups." + name + ".members"
		if len(g.Members) == 0 {
			k.add(key, "a user group needs members")
		}
		for _, m := range g.Members {
			if !ValidName(strings.TrimPrefix(m, "~")) {
				k.add(key, "%q is not a user or group name", m)
			}
		}
		if c.userGroupCycle(name, nil) {
			k.add(key, "user group %s contains itself", name)
		}
	}
}

// checkTasks checks a task range (TASKLIMIT).
func checkTasks(k *checker, key string, lo, def, hi int) {
	k.nonNegative(key+".min_tasks", lo)
	k.nonNegative(key+".default_tasks", def)
	k.nonNegative(key+".max_tasks", hi)
	switch {
	case hi > 0 && lo > hi:
		k.add(key+".min_tasks", "%d is more than max_tasks (%d)", lo, hi)
	case def > 0 && lo > def:
		k.add(key+".default_tasks", "%d is less than min_tasks (%d)", def, lo)
	case def > 0 && hi > 0 && def > hi:
		k.add(key+".default_tasks", "%d is more than max_tasks (%d)", def, hi)
	}
}

func (c *Config) parseResReq(k *checker, key, s string) *resreq.ResReq {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	r, err := resreq.Parse(s, resreq.WithSchema(c.schema))
	if err != nil {
		k.add(key, "%q: %v", s, err)
		return nil
	}
	return r
}

func (c *Config) checkQueues(k *checker) {
	for _, name := range slices.Sorted(maps.Keys(c.Queues)) {
		q := c.Queues[name]
		key := "queues." + name
		if q.Priority < 0 {
			k.add(key+".priority", "%d: must be positive (higher is scheduled first)", q.Priority)
		}
		for _, h := range q.Hosts {
			if err := c.checkHostRef(h, true); err != "" {
				k.add(key+".hosts", "%s", err)
			}
		}
		for _, u := range q.Users {
			if !ValidName(strings.TrimPrefix(u, "~")) {
				k.add(key+".users", "%q is not a user or group name", u)
			}
		}
		k.nonNegative(key+".max_slots", q.MaxSlots)
		k.nonNegative(key+".max_slots_per_user", q.MaxSlotsPerUser)
		k.nonNegative(key+".max_slots_per_host", q.MaxSlotsPerHost)
		if q.MaxSlots > 0 && q.MaxSlotsPerUser > q.MaxSlots {
			k.add(key+".max_slots_per_user", "%d is more than max_slots (%d)", q.MaxSlotsPerUser, q.MaxSlots)
		}
		checkTasks(k, key, q.MinTasks, q.DefaultTasks, q.MaxTasks)
		if q.MaxMem > 0 && q.DefaultMem > q.MaxMem {
			k.add(key+".default_mem", "%s is more than max_mem (%s)", q.DefaultMem, q.MaxMem)
		}
		if q.MaxRunLimit > 0 && q.DefaultRunLimit > q.MaxRunLimit {
			k.add(key+".default_run_limit", "%s is more than max_run_limit (%s)", q.DefaultRunLimit, q.MaxRunLimit)
		}
		for _, who := range slices.Sorted(maps.Keys(q.Fairshare)) {
			if s := q.Fairshare[who]; s <= 0 {
				k.add(key+".fairshare."+who, "%d: shares must be positive", s)
			}
		}
		switch q.Interactive {
		case "", "yes", "no", "only":
		default:
			k.add(key+".interactive", "%q: use \"yes\", \"no\" or \"only\"", q.Interactive)
		}
		if q.JobIdle < 0 || q.JobIdle > 1 {
			k.add(key+".job_idle", "%g: must be between 0 and 1 (CPU time / run time)", q.JobIdle)
		}
		c.checkPreemption(k, q)
		checkRequeue(k, key, q.RequeueExitValues)
		q.gpuReq = parseGPUReq(k, key+".gpu_req", q.GpuReq)
		q.resReq = c.parseResReq(k, key+".res_req", q.ResReq)
	}
}

func (c *Config) checkPreemption(k *checker, q *Queue) {
	key := "queues." + q.Name
	for _, p := range q.Preemptive {
		p, prefOK := splitPreemptPref(p)
		o := c.Queues[p]
		switch {
		case !prefOK:
			k.add(key+".preemptive", "%s: the preference level after + is a number", p)
		case p == "lower":
		case o == nil:
			k.add(key+".preemptive", "unknown queue %s", p)
		case p == q.Name:
			k.add(key+".preemptive", "a queue cannot preempt itself")
		case o.Priority >= q.Priority:
			k.add(key+".preemptive", "queue %s has priority %d, not lower than %s's %d; a queue preempts only lower-priority queues", p, o.Priority, q.Name, q.Priority)
		}
	}
	for _, p := range q.Preemptable {
		o := c.Queues[p]
		switch {
		case p == "higher":
		case o == nil:
			k.add(key+".preemptable", "unknown queue %s", p)
		case p == q.Name:
			k.add(key+".preemptable", "a queue cannot preempt itself")
		case o.Priority <= q.Priority:
			k.add(key+".preemptable", "queue %s has priority %d, not higher than %s's %d; a queue is preempted only by higher-priority queues", p, o.Priority, q.Name, q.Priority)
		}
	}
}

func (c *Config) checkApps(k *checker) {
	for _, name := range slices.Sorted(maps.Keys(c.Apps)) {
		a := c.Apps[name]
		key := "apps." + name
		checkTasks(k, key, a.MinTasks, a.DefaultTasks, a.MaxTasks)
		for _, f := range a.Fixed {
			if !slices.Contains(fixable, f) {
				k.add(key+".fixed", "%q cannot be fixed; the attributes a profile can fix are %s", f, strings.Join(fixable, ", "))
			}
		}
		for _, f := range a.Fixed {
			unset := f == "res_req" && a.ResReq == "" || f == "tasks" && a.defaultTasks() == 0 ||
				f == "run_limit" && a.RunLimit == 0 || f == "mem_limit" && a.MemLimit == 0 || f == "env" && len(a.Env) == 0 ||
				f == "gpu_req" && a.GpuReq == ""
			if unset {
				k.add(key+".fixed", "%q is fixed but the profile does not set it", f)
			}
		}
		for _, v := range slices.Sorted(maps.Keys(a.Env)) {
			if v == "" || strings.ContainsAny(v, "= \t\n\x00") {
				k.add(key+".env", "%q is not an environment variable name", v)
			}
		}
		checkRequeue(k, key, a.RequeueExitValues)
		a.resReq = c.parseResReq(k, key+".res_req", a.ResReq)
		a.gpuReq = parseGPUReq(k, key+".gpu_req", a.GpuReq)
	}
}

// parseGPUReq checks a GPU requirement (nil when there is none).
func parseGPUReq(k *checker, key, s string) *gpu.Req {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	r, err := gpu.Parse(s)
	if err == nil && r.Dash {
		err = fmt.Errorf("\"-\" is for bsub -gpu; write the requirement")
	}
	if err != nil {
		k.add(key, "%v", err)
		return nil
	}
	return r
}

// checkRequeue checks a requeue_exit_values list.
func checkRequeue(k *checker, key, v string) {
	if v == "" {
		return
	}
	if _, err := requeue.Parse(v); err != nil {
		k.add(key+".requeue_exit_values", "%v", err)
	}
}

func (c *Config) checkProjects(k *checker) {
	for _, name := range slices.Sorted(maps.Keys(c.Projects)) {
		p := c.Projects[name]
		key := "projects." + name
		k.nonNegative(key+".max_slots", p.MaxSlots)
		k.nonNegative(key+".max_gpus", p.MaxGPUs)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Users)) {
		k.nonNegative("users."+name+".max_slots", c.Users[name].MaxSlots)
		k.nonNegative("users."+name+".max_pend_jobs", c.Users[name].MaxPendJobs)
	}
}

func (c *Config) checkCluster(k *checker) {
	cl := &c.Cluster
	switch {
	case cl.DefaultQueue == "":
		k.add("cluster.default_queue", "not set; with several queues (%s) say which one takes jobs submitted without -q", strings.Join(slices.Sorted(maps.Keys(c.Queues)), ", "))
	case c.Queues[cl.DefaultQueue] == nil:
		k.add("cluster.default_queue", "no queue named %s (queues: %s)", cl.DefaultQueue, strings.Join(slices.Sorted(maps.Keys(c.Queues)), ", "))
	}
	if cl.DefaultApp != "" && c.Apps[cl.DefaultApp] == nil {
		k.add("cluster.default_app", "no application profile named %s", cl.DefaultApp)
	}
	if cl.AcctRetention < cl.CleanPeriod {
		k.add("cluster.acct_retention", "%s is shorter than clean_period (%s): bacct would forget finished jobs that bjobs still shows; make it at least %s", cl.AcctRetention, cl.CleanPeriod, cl.CleanPeriod)
	}
	k.nonNegative("cluster.max_pend_jobs", cl.MaxPendJobs)
	if cl.MaxArraySize < 0 || cl.MaxArraySize > 2147483646 {
		k.add("cluster.max_array_size", "%d: must be between 1 and 2147483646", cl.MaxArraySize)
	}
	if cl.LocalMaxPreexecRetry < 0 || cl.LocalMaxPreexecRetry >= 2147483647 {
		k.add("cluster.local_max_preexec_retry", "%d: must be between 1 and 2147483646, or 0 for no limit", cl.LocalMaxPreexecRetry)
	}
	if a := cl.LocalMaxPreexecRetryAction; a != "suspend" && a != "exit" {
		k.add("cluster.local_max_preexec_retry_action", "%q: use \"suspend\" or \"exit\"", a)
	}
	if (cl.TLSCertFile == "") != (cl.TLSKeyFile == "") {
		k.add("cluster.tls_cert_file", "name both tls_cert_file and tls_key_file, or neither")
	}
	if cl.HostUnavailGrace < 0 {
		k.add("cluster.host_unavail_grace", "%s: must not be negative", cl.HostUnavailGrace)
	}
	if cl.HostFailureTimeout < 0 {
		k.add("cluster.host_failure_timeout", "%s: must not be negative", cl.HostFailureTimeout)
	}
	parseGPUReq(k, "cluster.gpu_req", cl.GpuReq)
	seen := map[string]bool{}
	for _, c := range cl.Controllers {
		host, port, err := net.SplitHostPort(c)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n <= 0 || n > 65535 {
			k.add("cluster.controllers", "%q: name each candidate as HOST:PORT, its xced's --listen address", c)
		}
		if seen[c] {
			k.add("cluster.controllers", "%q is named twice", c)
		}
		seen[c] = true
	}
	if cl.MaxUserPriority < 0 {
		k.add("cluster.max_user_priority", "%d: must be positive, or 0 for bsub -sp off", cl.MaxUserPriority)
	}
	if cl.PreexecRetryInterval < 0 {
		k.add("cluster.preexec_retry_interval", "%s: must not be negative", cl.PreexecRetryInterval)
	}
	for _, a := range cl.Administrators {
		if !ValidName(strings.TrimPrefix(a, "~")) {
			k.add("cluster.administrators", "%q is not a user or group name", a)
		}
	}
}
