package sched

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// GPU is one GPU device of a host, as its worker last reported it.
type GPU struct {
	// Index is the device's index on the host (nvidia-smi's, NVML's):
	// what CUDA_VISIBLE_DEVICES lists and GPUAlloc.Devices holds.
	Index int
	// Model is LSF's model name (TeslaV100_SXM2_32GB), shown in reasons.
	Model string
	// Names are the gmodel spellings that select the device, lower case
	// (gpu.ModelNames: full name, brand, type, ...); nil: Model only.
	Names []string
	// MemTotal and MemUsed are the device's memory in MB; MemTotal 0:
	// unknown (then no gmem request fits it).
	MemTotal, MemUsed float64
	// Vendor is "nvidia" (also when "") or "amd".
	Vendor string
}

// GPUReq is a job's GPU requirement as the scheduler reads it: bsub -gpu
// merged with the queue's, the profile's and the cluster's
// (gpu.Req.Sched gives it).
type GPUReq struct {
	Num     int  // GPUs per host; per task with PerTask. 0 means 1.
	PerTask bool // num=N/task
	// Exclusive: no other job may use the job's GPUs while it runs
	// (j_exclusive=yes, or mode=exclusive_process, which forces it).
	Exclusive bool
	// Model is gmodel's name ("" any), matched against GPU.Names
	// without regard to case; ModelMem (MB) is gmodel's -mem_size, which
	// a device's total memory must be within 10% of.
	Model    string
	ModelMem float64
	// Mem is gmem: the GPU memory, in MB, the job reserves on each of its
	// GPUs; a device offers its total less max(reported used, reserved).
	Mem float64
	// Pack is gpack=yes: shared jobs go to the GPUs already running the
	// most jobs (otherwise the fewest).
	Pack bool
	// Vendor is gvendor: "" or "nvidia" for NVIDIA devices, "amd".
	Vendor string
}

// String prints the requirement in -gpu syntax, for pending reasons.
func (g *GPUReq) String() string {
	var b []string
	n := strconv.Itoa(max(1, g.Num))
	if g.PerTask {
		n += "/task"
	}
	b = append(b, "num="+n)
	if g.Exclusive {
		b = append(b, "j_exclusive=yes")
	}
	if g.Model != "" {
		m := g.Model
		if g.ModelMem > 0 {
			m += "-" + num(g.ModelMem) + "M"
		}
		b = append(b, "gmodel="+m)
	}
	if g.Pack {
		b = append(b, "gpack=yes")
	}
	if g.Vendor != "" && g.Vendor != "nvidia" {
		b = append(b, "gvendor="+g.Vendor)
	}
	if g.Mem > 0 {
		b = append(b, "gmem="+num(g.Mem)+"M")
	}
	return strings.Join(b, ":")
}

// GPUAlloc is what a job holds of one host's GPUs.
type GPUAlloc struct {
	Devices   []int // GPU.Index of each device, ascending
	Exclusive bool  // no other job may use them
	Mem       float64
}

// ngpusPhysical is the counter resource LSF turns -gpu into; on a host
// that lists its devices the devices replace the counter.
const ngpusPhysical = "ngpus_physical"

// maxGPUs is the most devices of a host the scheduler handles (a bit
// mask each); LSF's LSF_HOST_MAX_GPU is at most 32.
const maxGPUs = 64

// gpuPool is a host's devices as instances (inst.go: what holds each,
// alone or shared, and the pick), with what GPUs add: the device at each
// position, and the gmem its jobs reserve on it.
type gpuPool struct {
	instPool
	devs []gpuDev
	// Room for a usual host's devices: a pool is one allocation.
	stBuf  [8]instSlot
	devBuf [8]gpuDev
}

// gpuDev is one device of the pool.
type gpuDev struct {
	*GPU
	memRes float64 // gmem its jobs reserve
}

// newGPUPool is the pool of a host's devices (the first maxGPUs), none
// held.
func newGPUPool(gs []GPU) *gpuPool {
	n := min(len(gs), maxGPUs)
	gp := &gpuPool{}
	if n <= len(gp.stBuf) {
		gp.st, gp.devs = gp.stBuf[:n], gp.devBuf[:n]
	} else {
		gp.instPool, gp.devs = newInstPool(n), make([]gpuDev, n)
	}
	for k := range n {
		gp.devs[k].GPU = &gs[k]
	}
	return gp
}

// holdDevices charges an allocation's devices (by GPU.Index).
func (gp *gpuPool) holdDevices(g *GPUAlloc) {
	for _, idx := range g.Devices {
		for i, d := range gp.devs {
			if d.Index == idx {
				gp.hold(i, g.Exclusive)
				gp.devs[i].memRes += g.Mem
			}
		}
	}
}

// releaseDevices takes a running job's devices off (preemption's what
// if); aloneOther says whether another job still holds device idx alone.
func (gp *gpuPool) releaseDevices(g *GPUAlloc, aloneOther func(idx int) bool) {
	for _, idx := range g.Devices {
		for i, d := range gp.devs {
			if d.Index == idx {
				alone := gp.heldAlone(i)
				if g.Exclusive {
					alone = aloneOther(idx)
				}
				gp.release(i, alone)
				gp.devs[i].memRes -= g.Mem
			}
		}
	}
}

// devicesBusy reports whether one of an allocation's devices could not
// be given to it now (held alone by another job; or it wants them alone
// and another job holds one).
func (gp *gpuPool) devicesBusy(g *GPUAlloc) bool {
	for _, idx := range g.Devices {
		for i, d := range gp.devs {
			if d.Index == idx && !gp.usable(i, g.Exclusive) {
				return true
			}
		}
	}
	return false
}

// gpuNeed is a part's GPU requirement: the job's -gpu, or the
// rusage[ngpus_physical=N] it states (implicit), which on hosts without
// a device list keeps its counter meaning.
type gpuNeed struct {
	GPUReq
	implicit bool
	text     string // how reasons name it
}

// perHost is the GPUs the need takes on a host given its slots there.
func (g *gpuNeed) perHost(slots int) int {
	n := max(1, g.Num)
	if g.PerTask {
		n *= slots
	}
	return n
}

// newGPUNeed returns the part's need: the job's, else, when some host
// lists devices, what rusage[ngpus_physical=N] in the part's usage
// stands for (LSF's -gpu num=N equivalence).
func (c *cycle) newGPUNeed(j *Job, hneed []need) *gpuNeed {
	if j.GPU != nil {
		return &gpuNeed{GPUReq: *j.GPU, text: "-gpu " + j.GPU.String()}
	}
	if !c.anyGPU {
		return nil
	}
	for _, nd := range hneed {
		if nd.name == ngpusPhysical && nd.amount > 0 {
			g := &gpuNeed{GPUReq: GPUReq{Num: int(math.Ceil(nd.amount - 1e-9)), PerTask: nd.method == "task"}, implicit: true}
			g.text = "rusage[" + ngpusPhysical + "=" + num(nd.amount) + "]"
			return g
		}
	}
	return nil
}

// matches reports whether a device can ever serve the need (model, its
// memory, gmem against its total).
func (g *gpuNeed) matches(d *GPU) bool {
	if !g.modelOK(d) {
		return false
	}
	if g.ModelMem > 0 && (d.MemTotal <= 0 || math.Abs(d.MemTotal-g.ModelMem) > 0.1*g.ModelMem) {
		return false
	}
	if g.Mem > 0 && d.MemTotal+1e-9 < g.Mem {
		return false
	}
	return true
}

// modelOK reports whether the device is of the vendor and model asked.
func (g *GPUReq) modelOK(d *GPU) bool {
	if vendor(g.Vendor) != vendor(d.Vendor) {
		return false
	}
	return g.Model == "" || modelMatches(d, g.Model)
}

func vendor(v string) string {
	if v == "" {
		return "nvidia"
	}
	return strings.ToLower(v)
}

func modelMatches(d *GPU, want string) bool {
	if strings.EqualFold(d.Model, want) {
		return true
	}
	for _, n := range d.Names {
		if strings.EqualFold(n, want) {
			return true
		}
	}
	return false
}

// gpuStatic says why a host can never take the need (okHost: it can),
// and which of its devices could serve it.
func (c *cycle) gpuStatic(g *gpuNeed, hs *hostState) (fail, uint64) {
	if hs.gpus == nil || hs.gpus.size() == 0 {
		if g.implicit {
			return okHost, 0 // the ngpus_physical counter decides
		}
		return fNoGPU, 0
	}
	var mask uint64
	model := 0
	for i := range hs.gpus.devs {
		d := hs.gpus.devs[i].GPU
		if !g.modelOK(d) {
			continue
		}
		model++
		if g.matches(d) {
			mask |= 1 << i
		}
	}
	switch {
	case model == 0:
		return fGPUModel, 0
	case mask == 0:
		return fGPUMem, 0
	case bits.OnesCount64(mask) < g.perHost(1):
		return fGPUCount, mask
	}
	return okHost, mask
}

// usable returns the devices of mask that the need may take now, less
// those in taken.
func (g *gpuNeed) usable(hs *hostState, mask, taken uint64) uint64 {
	gp := hs.gpus
	if g.Mem <= 0 {
		return gp.usableMask(mask&^taken, g.Exclusive, nil)
	}
	// gmem: what the device offers is its total less max(reported used,
	// reserved).
	return gp.usableMask(mask&^taken, g.Exclusive, func(i int) bool {
		d := &gp.devs[i]
		return d.MemTotal-max(d.memRes, d.MemUsed)+1e-9 >= g.Mem
	})
}

// pickGPUs chooses n of the usable devices: one model if any model has
// enough (LSF prefers the same model), then the lowest indices for
// exclusive jobs, the fewest jobs for shared ones (the most with gpack).
func (g *gpuNeed) pickGPUs(hs *hostState, usable uint64, n int) []int {
	var cand []int
	for m := usable; m != 0; m &= m - 1 {
		cand = append(cand, bits.TrailingZeros64(m))
	}
	if len(cand) < n {
		return nil
	}
	gp := hs.gpus
	byModel := map[string]int{}
	for _, i := range cand {
		byModel[gp.devs[i].Model]++
	}
	if len(byModel) > 1 {
		best := ""
		for _, i := range cand { // the first model (by device) with enough
			if m := gp.devs[i].Model; byModel[m] >= n {
				best = m
				break
			}
		}
		if best != "" {
			cand = slices.DeleteFunc(cand, func(i int) bool { return gp.devs[i].Model != best })
		}
	}
	if !g.Exclusive {
		slices.SortStableFunc(cand, func(a, b int) int {
			if g.Pack {
				return gp.holders(b) - gp.holders(a)
			}
			return gp.holders(a) - gp.holders(b)
		})
	}
	out := cand[:n]
	slices.Sort(out)
	return out
}

// devIndices turns device positions into GPU.Index values.
func devIndices(hs *hostState, pos []int) []int {
	out := make([]int, len(pos))
	for k, i := range pos {
		out[k] = hs.gpus.devs[i].Index
	}
	slices.Sort(out)
	return out
}

// chargeGPUs records an allocation's devices on a host. A running job
// without a device list (rusage[ngpus_physical=N] from before devices
// were known) is given the devices a shared job would get now.
func (c *cycle) chargeGPUs(hs *hostState, ha *HostAlloc) {
	if ha.GPU == nil {
		var n float64
		for _, u := range ha.Rusage {
			for _, r := range u.Resources {
				if r.Name == ngpusPhysical {
					n = amount(ha.Rusage, ngpusPhysical, 0, ha.Slots, ha.Lead, false)
				}
			}
		}
		if n <= 0 {
			return
		}
		g := &gpuNeed{GPUReq: GPUReq{Num: int(math.Ceil(n - 1e-9))}}
		all := uint64(1)<<hs.gpus.size() - 1
		use := g.usable(hs, all, 0)
		k := min(bits.OnesCount64(use), g.Num)
		for _, i := range g.pickGPUs(hs, use, k) {
			hs.gpus.hold(i, false)
		}
		return
	}
	hs.gpus.holdDevices(ha.GPU)
}

// freeGPUs is what select and order see as ngpus_physical on a host that
// lists its devices: the devices no job uses.
func freeGPUs(hs *hostState) int {
	return hs.gpus.idle()
}

// gpuWhy is the detail line of a GPU job's pending reason: over all
// hosts, how many fail which GPU check, as Kubernetes' FitError does:
// "-gpu num=2:gmodel=V100: 0/12 hosts: 4 have fewer than 2 free GPUs,
// 3 have no GPU of model V100, 5 have no GPUs".
func (c *cycle) gpuWhy(g *gpuNeed, counts map[fail]int, perHost int) string {
	type clause struct {
		n    int
		text string
	}
	var cl []clause
	model := ""
	if g.Model != "" {
		model = " of model " + g.Model
	}
	if vendor(g.Vendor) != "nvidia" {
		model = " of vendor " + vendor(g.Vendor) + strings.Replace(model, " of", ",", 1)
	}
	mem := ""
	if g.ModelMem > 0 {
		mem = " with " + c.formatValue("mem", g.ModelMem)
	}
	for f, n := range counts {
		var t string
		switch f {
		case fNoGPU:
			t = "no GPUs"
		case fGPUModel:
			t = "no GPU" + model
		case fGPUMem:
			if g.Mem > 0 && mem == "" {
				t = "no GPU" + model + " with " + c.formatValue("mem", g.Mem) + " of memory"
			} else {
				t = "no GPU" + model + mem
			}
		case fGPUCount:
			t = fmt.Sprintf("fewer than %d GPUs%s", perHost, model)
		case fGPU:
			t = fmt.Sprintf("fewer than %d free GPUs", perHost)
			if g.Mem > 0 {
				t += " with " + c.formatValue("mem", g.Mem) + " of free memory"
			}
		default:
			continue
		}
		cl = append(cl, clause{n, t})
	}
	if len(cl) == 0 {
		return ""
	}
	slices.SortFunc(cl, func(a, b clause) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.text, b.text)
	})
	parts := make([]string, len(cl))
	for i, x := range cl {
		verb := "have"
		if x.n == 1 {
			verb = "has"
		}
		parts[i] = fmt.Sprintf("%d %s %s", x.n, verb, x.text)
	}
	return fmt.Sprintf("%s: 0/%d hosts: %s", g.text, len(c.hosts), strings.Join(parts, ", "))
}

// CanEverRun reports whether some host of hosts could serve the
// requirement if nothing else ran there (its devices' number, model,
// vendor and memory; not slots or state), for rejecting at submission a
// request no host can ever meet. slots is the job's minimum slots on one
// host (num=N/task). A host without a device list counts as having no
// GPUs.
func (g *GPUReq) CanEverRun(hosts []Host, slots int) bool {
	need := &gpuNeed{GPUReq: *g}
	n := need.perHost(max(1, slots))
	for i := range hosts {
		k := 0
		for j := range hosts[i].GPUs {
			if need.matches(&hosts[i].GPUs[j]) {
				k++
			}
		}
		if k >= n && k > 0 {
			return true
		}
	}
	return false
}
