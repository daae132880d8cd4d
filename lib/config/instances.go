package config

import (
	"maps"
	"slices"
	"strings"
)

// Named instances (the resource model's L3 layer): [resources.NAME]
// instances = true makes a numeric, consumable resource whose units are
// handed out by name; a host lists its own in [hosts.NAME] instances
// ({ fpga = ["fpga0", "fpga1"] }), or an elim reports the resource with
// the names as its value, comma-separated ("fpga0,fpga1"; an elim's
// list wins over the configured one). The host's value of the resource
// is the number of its instances.

// IsInstance reports whether name is a resource of named instances.
func (c *Config) IsInstance(name string) bool {
	r := c.Resources[name]
	return r != nil && r.Instances
}

// InstanceResources are the resources of named instances, sorted.
func (c *Config) InstanceResources() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.Resources)) {
		if c.Resources[name].Instances {
			out = append(out, name)
		}
	}
	return out
}

// ParseInstances reads an elim's value of an instance resource: names
// separated by commas, blanks dropped ("" or "-": none).
func ParseInstances(v string) []string {
	var out []string
	for n := range strings.SplitSeq(v, ",") {
		if n = strings.TrimSpace(n); n != "" && n != "-" {
			out = append(out, n)
		}
	}
	return out
}

// checkInstances checks the instance resources and the hosts' lists.
func (c *Config) checkInstances(k *checker) {
	for _, name := range c.InstanceResources() {
		r := c.Resources[name]
		key := "resources." + name + ".instances"
		switch {
		case r.Type != "numeric":
			k.add(key, "only a numeric resource has instances (type is %q)", r.Type)
		case r.Shared():
			k.add(key, "a shared pool (total) has no instances on hosts; leave out total")
		case r.Units:
			k.add(key, "a resource of instances counts them; leave out units")
		}
	}
	for _, host := range slices.Sorted(maps.Keys(c.Hosts)) {
		h := c.Hosts[host]
		for _, res := range slices.Sorted(maps.Keys(h.Instances)) {
			key := "hosts." + host + ".instances." + res
			if !c.IsInstance(res) {
				k.add(key, "%s is not a resource of instances; define it under [resources.%s] with instances = true", res, res)
				continue
			}
			if _, dup := h.Resources[res]; dup {
				k.add("hosts."+host+".resources."+res, "%s has instances on the host; its value is their number", res)
			}
			seen := map[string]bool{}
			for _, n := range h.Instances[res] {
				switch {
				case n == "" || n == "-" || strings.ContainsAny(n, ", \t\n"):
					k.add(key, "%q is not an instance name (no blanks or commas)", n)
				case seen[n]:
					k.add(key, "%s is listed twice", n)
				}
				seen[n] = true
			}
		}
	}
}
