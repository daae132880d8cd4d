package gpu

import "xce/lib/sched"

// SchedGPUs gives the scheduler a host's devices (sched.Host.GPUs): the
// index, LSF's model name, the gmodel spellings that select it, and its
// memory in MB.
func SchedGPUs(devs []Device) []sched.GPU {
	out := make([]sched.GPU, 0, len(devs))
	for i := range devs {
		d := &devs[i]
		g := sched.GPU{Index: d.Index, Model: d.Model(), Names: ModelNames(d.Name), Vendor: "nvidia"}
		if d.MemTotalMB > 0 {
			g.MemTotal = float64(d.MemTotalMB)
		}
		if d.MemUsedMB > 0 {
			g.MemUsed = float64(d.MemUsedMB)
		}
		out = append(out, g)
	}
	return out
}

// Sched is the requirement as the scheduler reads it (sched.Job.GPU),
// LSF's defaults and implications applied.
func (r *Req) Sched() *sched.GPUReq {
	e := r.Effective()
	return &sched.GPUReq{Num: e.Num, PerTask: e.PerTask, Exclusive: e.Exclusive(), Model: e.Model,
		ModelMem: e.ModelMemMB, Mem: e.MemMB, Pack: e.Gpack, Vendor: e.Vendor}
}
