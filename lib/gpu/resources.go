package gpu

import (
	"fmt"
	"strconv"

	"xce/lib/resreq"
)

// Value is one resource's value on a host, by LSF's name.
type Value struct {
	Name  string
	Num   float64
	Str   string
	IsStr bool
}

// Any is the value as resreq.Schema.Set takes it.
func (v Value) Any() any {
	if v.IsStr {
		return v.Str
	}
	return v.Num
}

// DefaultMaxGPUs is LSF_HOST_MAX_GPU's default: the per-GPU resources
// (gpu_model0 ...) exist for this many devices.
const DefaultMaxGPUs = 8

// Resources are the GPU resources beyond resreq's built-in ngpus and
// ngpus_physical, for the cluster's resreq.NewSchema, with the per-GPU
// ones for maxGPUs devices (0: DefaultMaxGPUs). LSF's names (gpu.md §1);
// gpu_model (the host's first device's model) and gpu_maxmem (its
// largest device memory, MB) are XCE's host-level conveniences for
// select[gpu_model == TeslaV100_SXM2_16GB] and order[gpu_maxmem]; LSF
// has no such names. gpu_mode<n> is NVML's compute mode number (0
// Default, 1 Exclusive_Thread, 2 Prohibited, 3 Exclusive_Process), as
// lsload -gpuload shows it.
func Resources(maxGPUs int) []resreq.Resource {
	if maxGPUs <= 0 {
		maxGPUs = DefaultMaxGPUs
	}
	out := []resreq.Resource{
		{Name: "gpu_driver", Kind: resreq.String},
		{Name: "gpu_model", Kind: resreq.String},
		{Name: "gpu_maxmem", Kind: resreq.Numeric, Units: true},
		{Name: "gpu_shared_avg_ut", Kind: resreq.Numeric, Increasing: true},
		{Name: "gpu_shared_avg_mut", Kind: resreq.Numeric, Increasing: true},
	}
	for n := range maxGPUs {
		i := strconv.Itoa(n)
		out = append(out,
			resreq.Resource{Name: "gpu_model" + i, Kind: resreq.String},
			resreq.Resource{Name: "gpu_mtotal" + i, Kind: resreq.Numeric, Units: true},
			resreq.Resource{Name: "gpu_mode" + i, Kind: resreq.Numeric},
			resreq.Resource{Name: "gpu_temp" + i, Kind: resreq.Numeric, Increasing: true},
			resreq.Resource{Name: "gpu_ut" + i, Kind: resreq.Numeric, Increasing: true},
			resreq.Resource{Name: "gpu_mut" + i, Kind: resreq.Numeric, Increasing: true},
			resreq.Resource{Name: "gpu_mused" + i, Kind: resreq.Numeric, Units: true, Increasing: true},
			resreq.Resource{Name: "gpu_pstate" + i, Kind: resreq.Numeric, Increasing: true},
			resreq.Resource{Name: "gpu_status" + i, Kind: resreq.String},
		)
	}
	return out
}

// Static are the host's static GPU resources (what registration
// reports): ngpus, ngpus_physical (the total; the scheduler sees the
// unused devices of a host that lists them), gpu_driver, gpu_model,
// gpu_maxmem, and per device gpu_model<n> and gpu_mtotal<n>. A host
// without GPUs gets ngpus=0 and ngpus_physical=0.
func (inv *Inventory) Static() []Value {
	n := float64(len(inv.Devices))
	out := []Value{{Name: "ngpus", Num: n}, {Name: "ngpus_physical", Num: n}}
	if inv.Driver != "" {
		out = append(out, Value{Name: "gpu_driver", Str: inv.Driver, IsStr: true})
	}
	var maxMem int64 = -1
	for i := range inv.Devices {
		d := &inv.Devices[i]
		if i == 0 {
			out = append(out, Value{Name: "gpu_model", Str: d.Model(), IsStr: true})
		}
		maxMem = max(maxMem, d.MemTotalMB)
		k := strconv.Itoa(d.Index)
		out = append(out, Value{Name: "gpu_model" + k, Str: d.Model(), IsStr: true})
		if d.MemTotalMB >= 0 {
			out = append(out, Value{Name: "gpu_mtotal" + k, Num: float64(d.MemTotalMB)})
		}
	}
	if maxMem >= 0 {
		out = append(out, Value{Name: "gpu_maxmem", Num: float64(maxMem)})
	}
	return out
}

// modeNumbers are NVML's compute mode numbers.
var modeNumbers = map[string]float64{"Default": 0, "Exclusive_Thread": 1, "Prohibited": 2, "Exclusive_Process": 3}

// Load are the host's GPU load indices (what heartbeats report): per
// device gpu_mode<n>, gpu_temp<n>, gpu_ut<n>, gpu_mut<n>, gpu_mused<n>
// (MB), gpu_pstate<n>, gpu_status<n> ("ok"), and the averages over the
// devices in shared (Default) mode, gpu_shared_avg_ut and
// gpu_shared_avg_mut. What a device does not report is left out.
func (inv *Inventory) Load() []Value {
	var out []Value
	var ut, mut float64
	shared := 0
	for i := range inv.Devices {
		d := &inv.Devices[i]
		k := strconv.Itoa(d.Index)
		num := func(name string, v int64) {
			if v >= 0 {
				out = append(out, Value{Name: name + k, Num: float64(v)})
			}
		}
		if m, ok := modeNumbers[d.ComputeMode]; ok {
			out = append(out, Value{Name: "gpu_mode" + k, Num: m})
		}
		num("gpu_temp", int64(d.TempC))
		num("gpu_ut", int64(d.UtilPct))
		num("gpu_mut", int64(d.MemUtilPct))
		num("gpu_mused", d.MemUsedMB)
		var ps int64 = -1
		if _, err := fmt.Sscanf(d.PState, "P%d", &ps); err != nil {
			ps = -1
		}
		num("gpu_pstate", ps)
		out = append(out, Value{Name: "gpu_status" + k, Str: "ok", IsStr: true})
		if (d.ComputeMode == "Default" || d.ComputeMode == "") && d.UtilPct >= 0 {
			shared++
			ut += float64(d.UtilPct)
			mut += float64(max(0, d.MemUtilPct))
		}
	}
	if shared > 0 {
		out = append(out, Value{Name: "gpu_shared_avg_ut", Num: ut / float64(shared)},
			Value{Name: "gpu_shared_avg_mut", Num: mut / float64(shared)})
	}
	return out
}

// SetHost writes values into a host built with s.NewHost, skipping the
// names s does not define (a device beyond LSF_HOST_MAX_GPU, a schema
// without Resources).
func SetHost(s *resreq.Schema, h *resreq.Host, vals []Value) error {
	for _, v := range vals {
		r, _, ok := s.Lookup(v.Name)
		if !ok || (r.Kind == resreq.String) != v.IsStr {
			continue
		}
		if err := s.Set(h, v.Name, v.Any()); err != nil {
			return fmt.Errorf("set %s: %w", v.Name, err)
		}
	}
	return nil
}
