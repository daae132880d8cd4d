// Package gpu is XCE's GPU knowledge: detecting a host's NVIDIA GPUs
// (NVML, else nvidia-smi, else none), the static resources and load
// indices LSF names for them, LSF's -gpu requirement language (parse,
// print, defaults, merging across cluster, queue, profile and job), and
// the environment a GPU job gets for its allocation. It places nothing:
// lib/sched picks the devices (sched.GPU, sched.GPUReq, sched.GPUAlloc),
// and SchedGPUs / (*Req).Sched turn this package's types into those.
package gpu
