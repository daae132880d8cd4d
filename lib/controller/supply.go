package controller

import (
	"cmp"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/provision"
	"xce/lib/resreq"
	"xce/lib/sched"
)

// Supply is the provisioner as the controller sees it (lib/provision):
// the controller computes the demand for templates each cycle against the
// provisioner's counts and hands it over; the provisioner asks the
// providers, and its hosts join as ordinary workers.
type Supply interface {
	// Counts: per template, instances booting and instances that exist,
	// as of version.
	Counts() (version uint64, booting, exists map[string]int)
	// SetDemand hands over a cycle's demand computed against version.
	SetDemand(version uint64, hosts map[string]int)
	// WaitReason is the pending reason of a job waiting for the
	// template's hosts.
	WaitReason(template string, conf *config.Config) string
	// Instance is the instance record of a provisioned host (nil: static).
	Instance(host string) *api.RCInstance
	// View is badmin rc view's answer.
	View() *api.SupplyView
}

// SetSupply attaches a provisioner (before Run).
func (c *Controller) SetSupply(s Supply) {
	c.mu.Lock()
	c.supply = s
	c.mu.Unlock()
}

// supplyDemand computes the demand of the jobs the cycle left pending
// that only templates could take, hands it to the provisioner, and gives
// those jobs their reason (c.mu held).
func (c *Controller) supplyDemand(snap *sched.Snapshot, d *sched.Decision) {
	if c.supply == nil {
		return
	}
	conf := c.config()
	if len(conf.Templates) == 0 {
		return
	}
	version, booting, exists := c.supply.Counts()
	var ts []sched.Template
	for _, name := range slices.Sorted(maps.Keys(conf.Templates)) {
		t := conf.Templates[name]
		st := sched.Template{Name: name, Host: c.templateHost(t, snap.Schema), Booting: booting[name], Free: t.Max - exists[name]}
		for _, qn := range slices.Sorted(maps.Keys(conf.Queues)) {
			if conf.Queues[qn].AllowsTemplate(t) {
				st.Queues = append(st.Queues, qn)
			}
		}
		ts = append(ts, st)
	}
	dm := sched.ComputeDemand(snap, d, ts)
	c.supply.SetDemand(version, dm.Hosts)
	reasons := map[string]string{}
	for k, tn := range dm.Jobs {
		r := c.jobs[key{k.ID, k.Index}]
		if r == nil {
			continue
		}
		why, ok := reasons[tn]
		if !ok {
			why = c.supply.WaitReason(tn, conf)
			reasons[tn] = why
		}
		if why != "" && !strings.HasPrefix(r.why, why) {
			r.why = strings.TrimSuffix(why+"\n"+r.why, "\n")
		}
	}
}

// templateHost is what a template's instance looks like to the
// scheduler: its slots and memory, type, model and resources, as a host
// whose worker registered them would be.
func (c *Controller) templateHost(t *config.Template, schema *resreq.Schema) sched.Host {
	values := schema.NewHost()
	set := func(name string, val any) {
		if n, ok := val.(int64); ok { // TOML integers
			val = float64(n)
		}
		schema.Set(values, name, val)
	}
	set("type", cmp.Or(t.Type, c.hostType()))
	set("model", cmp.Or(t.Model, c.hostModel()))
	set("ncpus", float64(t.Slots))
	set("cpuf", hostCPUFactor)
	for _, n := range []string{"r15s", "r1m", "r15m", "ut", "pg"} {
		set(n, 0.0)
	}
	if t.Mem > 0 {
		set("mem", float64(t.Mem)/1024)
		set("maxmem", float64(t.Mem)/1024)
	}
	for name, v := range t.Resources {
		set(name, v)
	}
	var gpus []sched.GPU
	for i := range t.GPUs {
		gpus = append(gpus, sched.GPU{Index: i})
	}
	if t.GPUs > 0 {
		set("ngpus_physical", float64(t.GPUs))
	}
	return sched.Host{Name: t.Name, MaxSlots: t.Slots, Values: values, GPUs: gpus}
}

// templateGroups lets -m name a template: each template is a host group
// of its joined instances (c.mu held).
func (c *Controller) templateGroups(snap *sched.Snapshot) {
	if c.supply == nil {
		return
	}
	conf := c.config()
	for _, name := range c.hostNames {
		if t := c.hosts[name].rcTemplate; t != "" && conf.Templates[t] != nil {
			if snap.HostGroups == nil {
				snap.HostGroups = map[string][]string{}
			}
			snap.HostGroups[t] = append(snap.HostGroups[t], name)
		}
	}
}

// setTemplateValues gives a provisioned host its template's resources,
// type and model (c.mu held).
func (c *Controller) setTemplateValues(h *host, schema *resreq.Schema, values *resreq.Host) {
	if h.rcTemplate == "" {
		return
	}
	t := c.config().Templates[h.rcTemplate]
	if t == nil {
		return
	}
	for name, v := range t.Resources {
		if n, ok := v.(int64); ok {
			v = float64(n)
		}
		schema.Set(values, name, v)
	}
	if t.Type != "" {
		schema.Set(values, "type", t.Type)
	}
	if t.Model != "" {
		schema.Set(values, "model", t.Model)
	}
}

// Host is how a host stands, for the provisioner.
func (c *Controller) Host(name string) provision.HostState {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[name]
	if h == nil {
		return provision.HostState{}
	}
	return provision.HostState{Joined: h.connected(), Instance: h.instance, Running: h.used, Drained: h.drained}
}

// Release closes an empty host to new jobs for its return; false while
// it runs jobs.
func (c *Controller) Release(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[name]
	if h == nil {
		return true
	}
	if h.used > 0 || len(c.jobsOn(name)) > 0 {
		return false
	}
	h.rcClosed = true
	return true
}

// Forget removes a returned host.
func (c *Controller) Forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[name]
	if h == nil || len(c.jobsOn(name)) > 0 {
		return
	}
	if h.conn != nil {
		h.conn.close("the host was returned to its provider")
	}
	c.dropHost(name)
	slog.Debug("host forgotten", "host", name)
}

// addSupply fills in bhosts -rc's columns and, when asked, badmin rc
// view's answer.
func (c *Controller) addSupply(req *api.ListHostsRequest, reply *api.ListHostsReply) {
	c.mu.Lock()
	s := c.supply
	c.mu.Unlock()
	if s == nil {
		return
	}
	for _, h := range reply.Hosts {
		if in := s.Instance(h.Name); in != nil {
			h.RcStatus, h.ProvStatus, h.RcUpdatedAt, h.RcInstanceId, h.RcTemplate = in.RcStatus, in.ProvStatus, in.UpdatedAt, in.Id, in.Template
		}
	}
	if req.Supply {
		reply.Supply = s.View()
	}
}

// rcJoined notes a provisioned worker's instance (c.mu held).
func (c *Controller) rcJoined(h *host, instance string) {
	h.instance, h.rcTemplate, h.rcClosed = instance, "", false
	h.drained = c.drainedHosts[h.name]
	if instance == "" || c.supply == nil {
		return
	}
	if in := c.supply.Instance(h.name); in != nil {
		h.rcTemplate = in.Template
	} else {
		slog.Warn("a worker names an instance the provisioner does not know", "host", h.name, "instance", instance)
	}
}

// ClusterConfig is the configuration in force (it changes with badmin
// reconfig).
func (c *Controller) ClusterConfig() *config.Config { return c.config() }
