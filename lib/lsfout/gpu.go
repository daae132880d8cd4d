package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"xce/lib/api"
	"xce/lib/gpu"
)

// gpuMem is a device's memory in MB as bhosts -gpu prints it: whole MB up
// to 1023M, else GB with one decimal ("15.8G"); "-" unknown.
func gpuMem(mb float64) string {
	switch {
	case mb < 0:
		return "-"
	case mb < 1024:
		return strconv.FormatFloat(mb, 'f', 0, 64) + "M"
	}
	return trimZero(strconv.FormatFloat(mb/1024, 'f', 1, 64)) + "G"
}

// WriteHostsGPU writes bhosts -gpu (gpu.md §5.3): one row per device,
// the host name on its first only: GPU_ID, MODEL, MUSED (what the
// driver reports used), MRSV (the gmem jobs reserve), NJOBS, RUN, SUSP
// and RSV (the jobs using it). A host without GPUs has no rows.
func WriteHostsGPU(w io.Writer, hosts []*api.Host, noHeader bool) error {
	var b bytes.Buffer
	if !noHeader {
		fmt.Fprintf(&b, "%-20s %8s %20s %9s %9s %6s %6s %6s %6s\n",
			"HOST_NAME", "GPU_ID", "MODEL", "MUSED", "MRSV", "NJOBS", "RUN", "SUSP", "RSV")
	}
	for _, h := range hosts {
		name := h.GetName()
		for _, g := range h.GetGpus() {
			run, susp := len(g.GetJobIds())-len(g.GetSuspJobIds()), len(g.GetSuspJobIds())
			fmt.Fprintf(&b, "%-20s %8d %20s %9s %9s %6d %6d %6d %6d\n",
				name, g.GetIndex(), g.GetModel(), gpuMem(float64(g.GetMemUsedMb())), gpuMem(g.GetMemRsvMb()),
				run+susp, run, susp, 0)
			name = ""
		}
	}
	return flush(w, &b)
}

// WriteHostsLongGPU is bhosts -l -gpu: each host's bhosts -l record
// followed by its GPU tables (gpu.md §5.3): STATIC ATTRIBUTES,
// DYNAMIC ATTRIBUTES and GPU JOB INFORMATION. XCE knows no GPU factor,
// socket or NVLink topology, ECC count or GPU error: "-".
func WriteHostsLongGPU(w io.Writer, hosts []*api.Host, shared []*api.SharedResource) error {
	var b bytes.Buffer
	for _, h := range hosts {
		hostLong(&b, h, shared)
		gpuLong(&b, h)
	}
	return flush(w, &b)
}

func gpuLong(b *bytes.Buffer, h *api.Host) {
	gs := h.GetGpus()
	if len(gs) == 0 {
		return
	}
	b.WriteString(" GPU STATIC ATTRIBUTES:\n")
	fmt.Fprintf(b, " %-6s %-22s %8s %6s %6s %s\n", "GPU_ID", "MODEL", "MTOTAL", "FACTOR", "SOCKET", "NVLINK/XGMI")
	for _, g := range gs {
		fmt.Fprintf(b, " %-6d %-22s %8s %6s %6s %s\n", g.GetIndex(), g.GetModel(), gpuMem(float64(g.GetMemTotalMb())), "-", "-", "-")
	}
	b.WriteString("\n GPU DYNAMIC ATTRIBUTES:\n")
	fmt.Fprintf(b, " %-6s %-17s %8s %8s %5s %4s %4s %4s %6s %6s %s\n",
		"GPU_ID", "MODE", "MUSED", "MRSV", "TEMP", "ECC", "UT", "MUT", "PSTATE", "STATUS", "ERROR")
	for _, g := range gs {
		fmt.Fprintf(b, " %-6d %-17s %8s %8s %5s %4s %4s %4s %6s %6s %s\n",
			g.GetIndex(), dashIfEmpty(g.GetComputeMode()), gpuMem(float64(g.GetMemUsedMb())), gpuMem(g.GetMemRsvMb()),
			unitOrDash(g.GetTempC(), "C"), "-", unitOrDash(g.GetUtilPct(), "%"), unitOrDash(g.GetMemUtilPct(), "%"),
			pstate(g.GetPstate()), "ok", "-")
	}
	b.WriteString("\n GPU JOB INFORMATION:\n")
	fmt.Fprintf(b, " %-6s %-5s %-20s %-20s %s\n", "GPU_ID", "JEXCL", "RUNJOBIDS", "SUSPJOBIDS", "RSVJOBIDS")
	for _, g := range gs {
		var run []string
		susp := map[string]bool{}
		for _, id := range g.GetSuspJobIds() {
			susp[id] = true
		}
		for _, id := range g.GetJobIds() {
			if !susp[id] {
				run = append(run, id)
			}
		}
		jexcl := "-"
		if len(g.GetJobIds()) > 0 {
			jexcl = "N"
			if g.GetExclusive() {
				jexcl = "Y"
			}
		}
		fmt.Fprintf(b, " %-6d %-5s %-20s %-20s %s\n", g.GetIndex(), jexcl,
			dashIfEmpty(strings.Join(run, ",")), dashIfEmpty(strings.Join(g.GetSuspJobIds(), ",")), "-")
	}
	b.WriteString("\n")
}

func unitOrDash(v int32, unit string) string {
	if v < 0 {
		return "-"
	}
	return strconv.Itoa(int(v)) + unit
}

// pstate is "P0" as the number lsload -gpuload shows ("0"); "-" unknown.
func pstate(s string) string {
	if n, ok := strings.CutPrefix(s, "P"); ok && n != "" {
		return n
	}
	return "-"
}

// WriteLSHostsGPU writes lshosts -gpu (gpu.md §5.1): one row per device,
// the host name on its first only (cut to 10 unless wide), gpu_id,
// gpu_model (cut to 15 unless wide), gpu_driver, gpu_factor and numa_id
// ("-": XCE does not know them), vendor.
func WriteLSHostsGPU(w io.Writer, hosts []*api.Host, wide bool) error {
	var b bytes.Buffer
	name, model := fixed, fixed
	if wide {
		name, model = padRight, padRight
	}
	fmt.Fprintf(&b, "%s %6s %s %-11s %-10s %-7s %s\n", padRight("HOST_NAME", 10), "gpu_id", padRight("gpu_model", 16), "gpu_driver", "gpu_factor", "numa_id", "vendor")
	for _, h := range hosts {
		n := name(h.GetName(), 10)
		for _, g := range h.GetGpus() {
			fmt.Fprintf(&b, "%s %6d %s %-11s %-10s %-7s %s\n", n, g.GetIndex(), model(g.GetModel(), 15)+" ",
				dashIfEmpty(h.GetGpuDriver()), "-", "-", "Nvidia")
			n = strings.Repeat(" ", len(n))
		}
	}
	return flush(w, &b)
}

// jobGPU is a job's effective GPU requirement with LSF's defaults (nil:
// the job asks for no GPUs).
func jobGPU(j *api.Job) *gpu.Req {
	s := effective(j).GetGpu()
	if s == "" {
		return nil
	}
	r, err := gpu.Parse(s)
	if err != nil {
		return nil
	}
	return r.Effective()
}

// gpuAlloc is bjobs -o gpu_alloc: each host with its devices,
// "hostA/0,1 hostB/2" ("" none).
func gpuAlloc(j *api.Job) string {
	var parts []string
	for _, hs := range j.GetExecHosts() {
		if len(hs.GetGpus()) == 0 {
			continue
		}
		ids := make([]string, len(hs.GetGpus()))
		for i, d := range hs.GetGpus() {
			ids[i] = strconv.Itoa(int(d))
		}
		parts = append(parts, hs.GetHost()+"/"+strings.Join(ids, ","))
	}
	return strings.Join(parts, " ")
}

// gpuLongJob writes bjobs -l's GPU sections of a GPU job: GPU
// REQUIREMENT DETAILS (Combined: the merged requirement; Effective: the
// same once dispatched, "-" before) and, once it holds devices,
// GPU_ALLOCATION (gpu.md §5.4; XCE knows the devices' indices and the
// gmem it reserves, the other columns are "-").
func gpuLongJob(b *bytes.Buffer, j *api.Job, started bool) {
	s := effective(j).GetGpu()
	if s == "" {
		return
	}
	eff := "-"
	if started {
		eff = s
	}
	b.WriteString("\n GPU REQUIREMENT DETAILS:\n")
	b.WriteString(" Combined: " + s + "\n")
	b.WriteString(" Effective: " + eff + "\n")
	if !started || gpuAlloc(j) == "" {
		return
	}
	b.WriteString("\n GPU_ALLOCATION:\n")
	fmt.Fprintf(b, " %-15s %-4s %-6s %-17s %-17s %-20s %-6s %-6s %-6s %-6s %s\n", "HOST", "TASK", "GPU_ID",
		"GI_PLACEMENT/SIZE", "CI_PLACEMENT/SIZE", "MODEL", "MTOTAL", "FACTOR", "MRSV", "SOCKET", "NVLINK/XGMI")
	task := 0
	for _, hs := range j.GetExecHosts() {
		slots := int(max(1, hs.GetSlots()))
		tasks := make([]string, slots)
		for i := range tasks {
			tasks[i] = strconv.Itoa(task + i)
		}
		task += slots
		for _, d := range hs.GetGpus() {
			fmt.Fprintf(b, " %-15s %-4s %-6d %-17s %-17s %-20s %-6s %-6s %-6s %-6s %s\n", hs.GetHost(), strings.Join(tasks, ","), d,
				"-", "-", "-", "-", "-", gpuMem(hs.GetGpuMemMb()), "-", "-")
		}
	}
}

// WriteLSLoadGPU writes lsload -gpu (gpu.md §5.2): per host with GPUs, its
// name (cut to 15 unless wide, 25 wide) and lsload status, then ngpus,
// gpu_shared_avg_mut and gpu_shared_avg_ut (the average memory and GPU
// utilisation of the devices in shared mode, "Default"; "-" when the
// driver gives none) and ngpus_physical, each right-aligned under its
// header. An unavailable host shows its name and status only, as lsload
// does; a host without GPUs is not listed.
func WriteLSLoadGPU(w io.Writer, hosts []*api.Host, wide bool) error {
	var b bytes.Buffer
	nameW, name := 15, fixed
	if wide {
		nameW, name = 25, padRight
	}
	cols := []string{"ngpus", "gpu_shared_avg_mut", "gpu_shared_avg_ut", "ngpus_physical"}
	b.WriteString(padRight("HOST_NAME", nameW) + " " + padLeft("status", 6))
	for _, c := range cols {
		b.WriteString("  " + c)
	}
	b.WriteByte('\n')
	for _, h := range hosts {
		status := LoadStatus(h)
		gs := h.GetGpus()
		if len(gs) == 0 && h.GetNgpus() == 0 {
			continue
		}
		b.WriteString(name(h.GetName(), nameW) + " " + padLeft(status, 6))
		if status != "unavail" {
			n := strconv.Itoa(len(gs))
			mut, ut := sharedAvg(gs)
			for i, v := range []string{n, mut, ut, n} {
				b.WriteString("  " + padLeft(v, len(cols[i])))
			}
		}
		b.WriteByte('\n')
	}
	return flush(w, &b)
}

// sharedAvg is the average memory and GPU utilisation of a host's
// shared-mode devices ("0%" with none, "-" when the driver gives none).
func sharedAvg(gs []*api.GpuDevice) (mut, ut string) {
	var sm, su, nm, nu int
	shared := 0
	for _, g := range gs {
		if m := g.GetComputeMode(); m != "" && m != "Default" {
			continue
		}
		shared++
		if v := g.GetMemUtilPct(); v >= 0 {
			sm, nm = sm+int(v), nm+1
		}
		if v := g.GetUtilPct(); v >= 0 {
			su, nu = su+int(v), nu+1
		}
	}
	avg := func(sum, n int) string {
		switch {
		case shared == 0:
			return "0%"
		case n == 0:
			return "-"
		}
		return strconv.Itoa((sum+n/2)/n) + "%"
	}
	return avg(sm, nm), avg(su, nu)
}
