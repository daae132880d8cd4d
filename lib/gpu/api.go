package gpu

import "xce/lib/api"

// API gives the devices as api.Host carries them (Host.Gpus).
func (inv *Inventory) API() []*api.GpuDevice {
	out := make([]*api.GpuDevice, 0, len(inv.Devices))
	for i := range inv.Devices {
		d := &inv.Devices[i]
		out = append(out, &api.GpuDevice{
			Index: int32(d.Index), Uuid: d.UUID, Name: d.Name, Model: d.Model(),
			MemTotalMb: d.MemTotalMB, MemUsedMb: d.MemUsedMB, UtilPct: int32(d.UtilPct), MemUtilPct: int32(d.MemUtilPct),
			TempC: int32(d.TempC), Mig: d.MIG, ComputeMode: d.ComputeMode, Pstate: d.PState,
		})
	}
	return out
}

// FromAPI is the inventory a host reported (api.Host's gpus and
// gpu_driver), for Static, Load and SchedGPUs on the controller's side.
func FromAPI(h *api.Host) Inventory {
	inv := Inventory{Driver: h.GetGpuDriver()}
	for _, g := range h.GetGpus() {
		inv.Devices = append(inv.Devices, Device{
			Index: int(g.Index), UUID: g.Uuid, Name: g.Name, MemTotalMB: g.MemTotalMb, MemUsedMB: g.MemUsedMb,
			UtilPct: int(g.UtilPct), MemUtilPct: int(g.MemUtilPct), TempC: int(g.TempC), MIG: g.Mig,
			ComputeMode: g.ComputeMode, PState: g.Pstate,
		})
	}
	return inv
}

// Fill sets a host's GPU fields from the inventory: ngpus, gpus and
// gpu_driver.
func (inv *Inventory) Fill(h *api.Host) {
	h.Ngpus = int32(len(inv.Devices))
	h.Gpus = inv.API()
	h.GpuDriver = inv.Driver
}

// Full prints the effective requirement as bjobs -l shows it: num,
// mode, mps and j_exclusive always (LSF's defaults where no level set
// them), then the other keywords that are set. It parses back to the
// same requirement.
func (r *Req) Full() string {
	e := r.Effective()
	e.Set |= basicKeys
	return e.String()
}
