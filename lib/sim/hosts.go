package sim

import (
	"math"

	"xce/lib/config"
	"xce/lib/resreq"
)

// simCores lists a simulated host's cores (sched.Host.CPUs) where the
// configuration enforces cpu on it, as the live controller does for a
// host whose worker reports them: one per CPU of its ncpus (its slots:
// SLOTS of --hosts N[xSLOTS], a configured host's slots), so that a job is
// bound to a core per slot and a host runs at most a slot per core; nil
// elsewhere.
func simCores(conf *config.Config, schema *resreq.Schema, name string, v *resreq.Host) []int {
	if !conf.Containment(name).Enforces("cpu") {
		return nil
	}
	r, i, ok := schema.Lookup("ncpus")
	if !ok || r.Kind != resreq.Numeric {
		return nil
	}
	n := v.Num[i]
	if n < 1 || math.IsNaN(n) || n > 1<<20 {
		return nil
	}
	out := make([]int, int(n))
	for k := range out {
		out[k] = k
	}
	return out
}
