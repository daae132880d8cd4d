package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// Provider is a source of hosts on demand ([providers.NAME]): "local"
// starts each instance as an `xced worker` process of the provisioner's
// own host; "script" calls LSF resource connector's provider scripts in
// ScriptDir (getAvailableTemplates.sh, requestMachines.sh, ...).
type Provider struct {
	Name      string `toml:"-"`
	Kind      string `toml:"kind"`
	ScriptDir string `toml:"script_dir"`
	// Timeout bounds each call of a script provider: a script still
	// running then is killed with everything it started, and the call
	// fails (badmin rc error). 0: 60 s, also the provisioner's bound.
	Timeout Duration `toml:"timeout"`
}

// Template is a kind of host a provider can supply ([templates.NAME]).
// The scheduler tries its instances as virtual hosts after the real hosts
// fail a job; the provisioner asks the provider for what only templates
// could take.
type Template struct {
	Name     string `toml:"-"`
	Provider string `toml:"provider"`
	// Max is how many instances may exist at once.
	Max   int    `toml:"max"`
	Slots int    `toml:"slots"` // job slots (and ncpus) of each instance; default 1
	Mem   Memory `toml:"mem"`   // memory of each instance
	Type  string `toml:"type"`  // host type; "" = the cluster's
	Model string `toml:"model"` // host model; "" = the cluster's
	// Resources are the resources each instance carries: true for a
	// Boolean one (LSF's awshost flag), a number for a numeric one, a
	// string for a string one. Queues' rc_hosts name the Boolean ones.
	Resources map[string]any `toml:"resources"`
	GPUs      int            `toml:"gpus"`
	// IdleTime (LSB_RC_EXTERNAL_HOST_IDLE_TIME): an instance without jobs
	// this long is closed and returned; default 10m.
	IdleTime Duration `toml:"idle_time"`
	// MaxTTL (LSB_RC_EXTERNAL_HOST_MAX_TTL): an instance older than this
	// is closed and returned once empty; 0 = no limit.
	MaxTTL Duration `toml:"max_ttl"`
	// BootTimeout: an instance that has not joined this long after it was
	// requested is returned and its request marked failed; default 10m.
	BootTimeout Duration `toml:"boot_timeout"`
	// Price per instance-hour (the simulator's and reports' cost).
	Price float64 `toml:"price"`
	// SimBootTime is how long a simulated instance takes from its request
	// to joining (`xced simulate` only); default 2m.
	SimBootTime Duration `toml:"sim_boot_time"`
}

// Template defaults.
const (
	DefaultIdleTime    = Duration(600)
	DefaultBootTimeout = Duration(600)
)

// Attributes are the Boolean resources the template's hosts carry, sorted.
func (t *Template) Attributes() []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(t.Resources)) {
		if b, ok := t.Resources[n].(bool); ok && b {
			out = append(out, n)
		}
	}
	return out
}

// AllowsTemplate reports whether the queue's jobs may be given hosts of the
// template: its rc_hosts lists "all", the template's name, or a Boolean
// resource the template carries (LSF's RC_HOSTS). No rc_hosts: none.
func (q *Queue) AllowsTemplate(t *Template) bool {
	for _, e := range q.RCHosts {
		if e == "all" || e == t.Name {
			return true
		}
		if b, ok := t.Resources[e].(bool); ok && b {
			return true
		}
	}
	return false
}

// checkElastic fills in the templates' defaults and checks providers,
// templates and the queues' rc_hosts.
func (c *Config) checkElastic(k *checker) {
	c.checkBorrow(k)
	for _, name := range slices.Sorted(maps.Keys(c.Providers)) {
		p := c.Providers[name]
		p.Name = name
		key := "providers." + name
		if !ValidName(name) {
			k.add(key, "%q is not a valid name: use letters, digits, '_', '-', '.' and '@' (no blanks)", name)
		}
		switch p.Kind {
		case "local":
			if p.ScriptDir != "" {
				k.add(key+".script_dir", "only a provider of kind = \"script\" has a script_dir")
			}
			if p.Timeout != 0 {
				k.add(key+".timeout", "only a provider of kind = \"script\" has a timeout")
			}
		case "script":
			if p.Timeout < 0 {
				k.add(key+".timeout", "%s: must not be negative", p.Timeout)
			}
			if p.ScriptDir == "" {
				k.add(key+".script_dir", "a script provider needs script_dir, the directory of its requestMachines.sh and the other scripts")
			} else if !filepath.IsAbs(p.ScriptDir) {
				k.add(key+".script_dir", "%s: give an absolute path", p.ScriptDir)
			} else if fi, err := os.Stat(p.ScriptDir); err == nil && !fi.IsDir() {
				k.add(key+".script_dir", "%s is not a directory", p.ScriptDir)
			}
		case "":
			k.add(key+".kind", "a provider needs a kind: \"local\" or \"script\"")
		default:
			k.add(key+".kind", "%q: unknown provider kind; use \"local\" or \"script\"", p.Kind)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Templates)) {
		t := c.Templates[name]
		t.Name = name
		key := "templates." + name
		switch {
		case !ValidName(name):
			k.add(key, "%q is not a valid name: use letters, digits, '_', '-', '.' and '@' (no blanks)", name)
		case reservedNames[name]:
			k.add(key, "%q is a reserved word here; choose another name", name)
		case c.Hosts[name] != nil || c.HostGroups[name] != nil:
			k.add(key, "%s is also a host or host group; a template needs a name of its own", name)
		}
		switch {
		case t.Provider == "":
			k.add(key+".provider", "a template needs a provider (one of [providers])")
		case c.Providers[t.Provider] == nil:
			k.add(key+".provider", "unknown provider %s; define it under [providers.%s]", t.Provider, t.Provider)
		}
		if t.Max <= 0 {
			k.add(key+".max", "%d: a template needs max, the number of instances it may have at once (at least 1)", t.Max)
		}
		k.nonNegative(key+".slots", t.Slots)
		if t.Slots == 0 {
			t.Slots = 1
		}
		if t.GPUs < 0 {
			k.add(key+".gpus", "%d: must not be negative", t.GPUs)
		}
		if t.Price < 0 || t.Price != t.Price {
			k.add(key+".price", "%g: must not be negative", t.Price)
		}
		if t.IdleTime == 0 {
			t.IdleTime = DefaultIdleTime
		}
		if t.BootTimeout == 0 {
			t.BootTimeout = DefaultBootTimeout
		}
		for _, rn := range slices.Sorted(maps.Keys(t.Resources)) {
			rkey := key + ".resources." + rn
			r := c.Resources[rn]
			v := t.Resources[rn]
			if r == nil {
				k.add(rkey, "unknown resource %s; define it under [resources.%s]", rn, rn)
				continue
			}
			if r.Shared() {
				k.add(rkey, "%s is a shared resource (total = %d); it has no per-host value", rn, r.Total)
				continue
			}
			ok := false
			switch v := v.(type) {
			case bool:
				ok = r.Type == "boolean" && v
			case int64:
				ok = r.Type == "numeric" && v >= 0
			case float64:
				ok = r.Type == "numeric" && v >= 0
			case string:
				ok = r.Type == "string"
			}
			if !ok {
				k.add(rkey, "%s is a %s resource; give %s", rn, r.Type, map[string]string{
					"boolean": "true", "numeric": "a number, not negative", "string": "a string"}[r.Type])
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Queues)) {
		q := c.Queues[name]
		for _, e := range q.RCHosts {
			if e == "all" || c.Templates[e] != nil {
				continue
			}
			if r := c.Resources[e]; r != nil && r.Type == "boolean" {
				continue
			}
			k.add("queues."+name+".rc_hosts", "%s: name \"all\", a template or a Boolean resource templates carry", e)
		}
		if q.RCAccount != "" && !ValidName(q.RCAccount) {
			k.add("queues."+name+".rc_account", "%q is not a valid account name", q.RCAccount)
		}
	}
}

// String names a provider as messages do: "local" or "script (DIR)".
func (p *Provider) String() string {
	if p.Kind == "script" {
		return fmt.Sprintf("script (%s)", p.ScriptDir)
	}
	return p.Kind
}
