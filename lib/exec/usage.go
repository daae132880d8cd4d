package exec

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"xce/lib/api"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100
// on every Linux architecture Go supports.
const clockTicks = 100

// sampler measures the processes of one process group from /proc. It is
// used by one goroutine at a time.
type sampler struct {
	pgid   int
	pageKB int64
	buf    []byte

	scans      int     // samples taken
	pids       []int32 // the members found by the last sample
	candidates []int32

	samples    int64 // samples that found a process
	memSum     int64 // KB, over those samples
	maxMem     int64 // KB
	maxSwap    int64 // KB
	maxProcs   int32
	maxThreads int32
	cpuMs      int64 // the largest CPU time seen
	last       *api.ResourceUsage
}

func newSampler(pgid int) *sampler {
	return &sampler{pgid: pgid, pageKB: int64(os.Getpagesize()) / 1024, buf: make([]byte, 2048)}
}

// fullScanEvery is how often (in samples) sample reads every process of
// the host; the samples in between read only the processes found last time.
const fullScanEvery = 5

// sample measures the job's process group. Every fullScanEvery-th time (and
// while it has found nothing) it reads /proc/<pid>/stat of every process on
// the host to find the group's members; in between it rereads only the
// members found last time, so a process the job starts is counted within
// fullScanEvery samples. For each member it adds resident memory, threads
// and CPU time (its own and that of the children it has waited for).
// Processes that left the group are not seen (LSF's own pgid-based
// collection has the same blind spot).
func (s *sampler) sample(now time.Time) *api.ResourceUsage {
	u := &api.ResourceUsage{Pgid: int32(s.pgid), CollectedTime: now.UnixNano()}
	full := s.scans%fullScanEvery == 0 || len(s.pids) == 0
	s.scans++
	if full {
		s.candidates = s.candidates[:0]
		if d, err := os.Open("/proc"); err == nil {
			names, _ := d.Readdirnames(-1)
			d.Close()
			for _, name := range names {
				if pid, err := strconv.Atoi(name); err == nil && pid > 0 {
					s.candidates = append(s.candidates, int32(pid))
				}
			}
		}
	} else {
		s.candidates = append(s.candidates[:0], s.pids...)
	}
	var cpuTicks int64
	path := make([]byte, 0, 32)
	for _, pid := range s.candidates {
		path = strconv.AppendInt(append(path[:0], "/proc/"...), int64(pid), 10)
		path = append(path, "/stat"...)
		st, ok := s.readStat(path)
		if !ok || st.pgrp != s.pgid || st.state == 'Z' || st.state == 'X' {
			continue
		}
		u.Pids = append(u.Pids, pid)
		u.Nprocs++
		u.Nthreads += int32(st.threads)
		u.MemKb += st.rssPages * s.pageKB
		u.SwapKb += st.vsize / 1024 // LSF's SWAP: the job's virtual memory
		cpuTicks += st.cpuTicks
	}
	slices.Sort(u.Pids)
	s.pids = append(s.pids[:0], u.Pids...)
	u.CpuTimeMs = cpuTicks * 1000 / clockTicks
	if u.Nprocs > 0 {
		s.samples++
		s.memSum += u.MemKb
		s.maxMem = max(s.maxMem, u.MemKb)
		s.maxSwap = max(s.maxSwap, u.SwapKb)
		s.maxProcs = max(s.maxProcs, u.Nprocs)
		s.maxThreads = max(s.maxThreads, u.Nthreads)
		// Waited-for children move into their parent's figure, and a
		// process that leaves takes its time along: keep the largest
		// total seen.
		s.cpuMs = max(s.cpuMs, u.CpuTimeMs)
	}
	u.CpuTimeMs = s.cpuMs
	u.MaxMemKb = s.maxMem
	if s.samples > 0 {
		u.AvgMemKb = s.memSum / s.samples
	}
	s.last = u
	return u
}

// summary is the job's usage over its whole run: the peaks as nprocs,
// nthreads and swap_kb (the job report's Max Processes, Max Threads and
// Max Swap), the latest sample's memory as mem_kb.
func (s *sampler) summary() *api.ResourceUsage {
	u := &api.ResourceUsage{
		Pgid:      int32(s.pgid),
		MaxMemKb:  s.maxMem,
		SwapKb:    s.maxSwap,
		Nprocs:    s.maxProcs,
		Nthreads:  s.maxThreads,
		CpuTimeMs: s.cpuMs,
	}
	if s.samples > 0 {
		u.AvgMemKb = s.memSum / s.samples
	}
	if s.last != nil {
		u.MemKb = s.last.MemKb
		u.CollectedTime = s.last.CollectedTime
	}
	return u
}

type procStat struct {
	state    byte
	ppid     int
	pgrp     int
	session  int
	cpuTicks int64 // utime + stime + cutime + cstime
	threads  int64
	vsize    int64 // bytes of virtual memory
	rssPages int64
}

// readStat reads and parses /proc/<pid>/stat into the sampler's buffer.
func (s *sampler) readStat(path []byte) (procStat, bool) {
	fd, err := syscall.Open(string(path), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, false
	}
	n, err := syscall.Read(fd, s.buf)
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return procStat{}, false
	}
	return parseStat(s.buf[:n])
}

// ProcIDs are the ids /proc/<pid>/stat gives a process: its parent, its
// process group and its session.
type ProcIDs struct {
	PPid, Pgrp, Session int
}

// ReadProcIDs reads the parent, process group and session ids of process
// pid from /proc/<pid>/stat (the worker checks them before it signals a
// job's process group). A zombie still has them.
func ReadProcIDs(pid int) (ProcIDs, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := os.ReadFile(path)
	if err != nil {
		return ProcIDs{}, err
	}
	st, ok := parseStat(b)
	if !ok {
		return ProcIDs{}, fmt.Errorf("parse %s: unexpected format", path)
	}
	return ProcIDs{PPid: st.ppid, Pgrp: st.pgrp, Session: st.session}, nil
}

// parseStat parses the fields of a /proc/<pid>/stat line that the sampler
// needs. The command name (field 2) may hold spaces and parentheses, so the
// fields are counted from the last ')'.
func parseStat(b []byte) (procStat, bool) {
	end := -1
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			end = i
			break
		}
	}
	if end < 0 || end+2 >= len(b) {
		return procStat{}, false
	}
	var st procStat
	field := 3 // the field that starts at b[end+2]
	i := end + 2
	for i < len(b) && field <= 24 {
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\n' {
			j++
		}
		tok := b[i:j]
		switch field {
		case 3:
			if len(tok) > 0 {
				st.state = tok[0]
			}
		case 4:
			st.ppid = int(atoi(tok))
		case 5:
			st.pgrp = int(atoi(tok))
		case 6:
			st.session = int(atoi(tok))
		case 14, 15, 16, 17:
			st.cpuTicks += atoi(tok)
		case 20:
			st.threads = atoi(tok)
		case 23:
			st.vsize = atoi(tok)
		case 24:
			st.rssPages = atoi(tok)
		}
		field++
		i = j + 1
	}
	return st, field > 24
}

// atoi parses a decimal integer, allowing a leading '-'; 0 for anything else.
func atoi(b []byte) int64 {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}
