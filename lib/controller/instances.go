package controller

import (
	"maps"
	"slices"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/resreq"
	"xce/lib/sched"
)

// Named instances ([resources.NAME] instances = true; lib/sched's
// instances.go decides who gets which): a host's list comes from its
// elim when it reports the resource (names separated by commas; a stale
// report lists none), else from [hosts.NAME] instances; the resource's
// value there is their number. What a placement gets is kept with the
// job (HostSlots.instances), given back in every later snapshot, so the
// instances stay held across restarts and fail-over and are free again
// once the job has ended.

// withInstances gives a scheduler host its instances (a connected host
// only: an unavailable one advertises nothing).
func withInstances(conf *config.Config, schema *resreq.Schema, sh sched.Host, v *api.Host, connected bool) sched.Host {
	res := conf.InstanceResources()
	if len(res) == 0 || !connected {
		return sh
	}
	for _, name := range res {
		var names []string
		if s, ok := v.GetElimValues()[name]; ok {
			names = config.ParseInstances(s)
		} else if hc := conf.Hosts[sh.Name]; hc != nil && hc.Instances[name] != nil {
			names = hc.Instances[name]
		} else {
			continue
		}
		if sh.Instances == nil {
			sh.Instances = map[string][]string{}
		}
		sh.Instances[name] = names
		if sh.Values != nil {
			_ = schema.Set(sh.Values, name, float64(len(names)))
		}
	}
	return sh
}

// recordInstances is what a placement's part on a host holds, as its
// record keeps it.
func recordInstances(h sched.HostAlloc) []*api.InstanceAlloc {
	var out []*api.InstanceAlloc
	for _, res := range slices.Sorted(maps.Keys(h.Instances)) {
		out = append(out, &api.InstanceAlloc{Resource: res, Names: slices.Clone(h.Instances[res])})
	}
	return out
}

// heldInstances is what a running job holds on a host (nil: none).
func heldInstances(hs *api.HostSlots) map[string][]string {
	if len(hs.GetInstances()) == 0 {
		return nil
	}
	out := make(map[string][]string, len(hs.GetInstances()))
	for _, ia := range hs.GetInstances() {
		out[ia.GetResource()] = append(out[ia.GetResource()], ia.GetNames()...)
	}
	return out
}
