package gpu

import (
	"path/filepath"
	"strconv"
	"strings"
)

// EnvOptions describe how the job runs on the host.
type EnvOptions struct {
	// Renumber: the job sees only its devices, numbered from 0 (cgroup
	// device enforcement, LSB_RESOURCE_ENFORCE="gpu").
	Renumber bool
	// Tasks is the job's tasks on the host; with num=N/task each task's
	// devices are given as CUDA_VISIBLE_DEVICES<task> too. 0 means 1.
	Tasks int
	// MPSDir is the per-job directory of the NVIDIA MPS daemon the worker
	// started for mps=yes ("" none): the clients' pipe and log
	// directories are under it.
	MPSDir string
}

// Env is the environment a job gets for its GPUs on one host (gpu.md §4),
// as KEY=VALUE strings in a fixed order: CUDA_VISIBLE_DEVICES, the
// allocated devices' indices (not set with mps=...,nocvd);
// CUDA_VISIBLE_DEVICES0, 1, ... per task for num=N/task;
// CUDA_DEVICE_ORDER=PCI_BUS_ID so that CUDA numbers the devices as
// nvidia-smi and NVML do (CUDA's own default is fastest first, which on a
// host of mixed models would point the job at another job's GPU);
// CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY with MPS. LSF's
// LSB_GPU_ALLOC_INFO is not in IBM's documentation (gpu.md §4), so it is
// not invented here. devices are the host's device indices
// (sched.GPUAlloc.Devices); r is the effective requirement (nil: the
// default). No devices: nil.
func Env(devices []int, r *Req, o EnvOptions) []string {
	if len(devices) == 0 {
		return nil
	}
	e := r.Effective()
	ids := make([]string, len(devices))
	for i, d := range devices {
		if o.Renumber {
			d = i
		}
		ids[i] = strconv.Itoa(d)
	}
	var out []string
	if !e.NoCVD() {
		out = append(out, "CUDA_VISIBLE_DEVICES="+strings.Join(ids, ","))
		if tasks := max(1, o.Tasks); e.PerTask && tasks > 1 {
			per := max(1, e.Num)
			for t := range tasks {
				lo, hi := min(t*per, len(ids)), min((t+1)*per, len(ids))
				out = append(out, "CUDA_VISIBLE_DEVICES"+strconv.Itoa(t)+"="+strings.Join(ids[lo:hi], ","))
			}
		}
	}
	out = append(out, "CUDA_DEVICE_ORDER=PCI_BUS_ID")
	if o.MPSDir != "" && e.MPS != "no" {
		out = append(out, "CUDA_MPS_PIPE_DIRECTORY="+filepath.Join(o.MPSDir, "pipe"),
			"CUDA_MPS_LOG_DIRECTORY="+filepath.Join(o.MPSDir, "log"))
	}
	return out
}
