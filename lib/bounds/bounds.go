// Package bounds range-checks what a job's side reports about the job:
// resource usage and the end of a job. The worker and the controller both
// pass every report through it before they keep it (docs/security.md), so
// a report the job forged, or a worker gone wrong, can make a job neither
// negative nor larger than the hosts it ran on: CPU time is between zero
// and the job's hosts' CPUs times its run time, memory between zero and
// the hosts' memory, counts between zero and the kernel's pid limit, exit
// codes those of a shell. The package is pure: the callers say what the
// hosts have and how long the job ran.
package bounds

import (
	"fmt"
	"time"

	"xce/lib/api"
)

// Limits are the job's hosts, together. A zero field is unknown and
// bounds nothing but the sign.
type Limits struct {
	NCPUs   int           // CPUs of the job's hosts
	MemKb   int64         // memory of the job's hosts, KB
	Elapsed time.Duration // the job's run time so far (or in all)
}

const (
	// pidMax is Linux's PID_MAX_LIMIT: no host runs more processes or
	// threads at once.
	pidMax = 4 << 20
	// maxVirtualKb is a process's largest address space (128 TiB, the
	// x86-64 and arm64 user space) in KB; the job's virtual memory is at
	// most that per process.
	maxVirtualKb = 128 << 30
	// maxExit is the largest exit code a shell reports; maxSignal the
	// largest Linux signal.
	maxExit   = 255
	maxSignal = 64
	// cpuSlack allows for the clock ticks and the sample's lag of CPU
	// times measured from /proc.
	cpuSlack = 10 * time.Second
)

// Usage clamps u in place to what the job's hosts could have done and
// returns the fields that were out of range ("" when none), for a log
// line.
func Usage(u *api.ResourceUsage, l Limits) []string {
	if u == nil {
		return nil
	}
	var bad []string
	clamp := func(name string, v *int64, hi int64) {
		switch {
		case *v < 0:
			bad = append(bad, fmt.Sprintf("%s %d", name, *v))
			*v = 0
		case hi > 0 && *v > hi:
			bad = append(bad, fmt.Sprintf("%s %d > %d", name, *v, hi))
			*v = hi
		}
	}
	clamp32 := func(name string, v *int32, hi int32) {
		w := int64(*v)
		clamp(name, &w, int64(hi))
		*v = int32(w)
	}
	clamp("cpu_time_ms", &u.CpuTimeMs, MaxCPUMs(l))
	clamp("mem_kb", &u.MemKb, l.MemKb)
	clamp("max_mem_kb", &u.MaxMemKb, l.MemKb)
	clamp("avg_mem_kb", &u.AvgMemKb, l.MemKb)
	clamp32("nprocs", &u.Nprocs, pidMax)
	clamp32("nthreads", &u.Nthreads, pidMax)
	clamp("swap_kb", &u.SwapKb, maxVirtualKb*int64(max(u.Nprocs, 1)))
	clamp32("pgid", &u.Pgid, pidMax)
	pids := u.Pids[:0]
	for _, p := range u.Pids {
		if p > 0 && p <= pidMax && len(pids) < pidMax {
			pids = append(pids, p)
		}
	}
	if len(pids) != len(u.Pids) {
		bad = append(bad, fmt.Sprintf("%d pids out of range", len(u.Pids)-len(pids)))
	}
	u.Pids = pids
	return bad
}

// Event clamps a job's end in place: its exit code, signal, CPU time and
// usage. It returns the fields that were out of range.
func Event(ev *api.Event, l Limits) []string {
	if ev == nil {
		return nil
	}
	var bad []string
	if ev.ExitStatus < 0 || ev.ExitStatus > maxExit {
		bad = append(bad, fmt.Sprintf("exit_status %d", ev.ExitStatus))
		ev.ExitStatus = maxExit
	}
	if ev.Signal < 0 || ev.Signal > maxSignal {
		bad = append(bad, fmt.Sprintf("signal %d", ev.Signal))
		ev.Signal = 0
	}
	if ev.Pid < 0 || ev.Pid > pidMax {
		bad = append(bad, fmt.Sprintf("pid %d", ev.Pid))
		ev.Pid = 0
	}
	cpu := ev.CpuTimeMs
	hi := MaxCPUMs(l)
	switch {
	case cpu < 0:
		cpu = 0
	case hi > 0 && cpu > hi:
		cpu = hi
	}
	if cpu != ev.CpuTimeMs {
		bad = append(bad, fmt.Sprintf("cpu_time_ms %d", ev.CpuTimeMs))
		ev.CpuTimeMs = cpu
	}
	return append(bad, Usage(ev.Usage, l)...)
}

// MaxCPUMs is the most CPU time, in ms, a job can have used: every CPU of
// its hosts for all its run time (and a little); 0 when unknown.
func MaxCPUMs(l Limits) int64 {
	if l.NCPUs <= 0 || l.Elapsed <= 0 {
		return 0
	}
	return (l.Elapsed + cpuSlack).Milliseconds() * int64(l.NCPUs)
}
