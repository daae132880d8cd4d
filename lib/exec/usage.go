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

// sampler measures the processes of one job from /proc: its process
// group, and every other descendant of the shepherd (root), which is how
// a process that left the group or the session (setsid, a daemon's double
// fork) stays the job's: the shepherd is a child subreaper, so such
// processes are reparented to it rather than to init. It is used by one
// goroutine at a time.
type sampler struct {
	pgid int
	root int // the shepherd's pid; 0: the process group only
	// rootGroup: the shepherd's process group.
	rootGroup int
	pageKB    int64
	buf       []byte

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
	// zombies: the root's ended children other than the job's top
	// process, found by the last full scan, for the shepherd to reap.
	zombies []int
	stats   map[int32]procStat // scratch of a full scan
}

func newSampler(pgid, root int) *sampler {
	return &sampler{pgid: pgid, root: root, rootGroup: syscall.Getpgrp(), pageKB: int64(os.Getpagesize()) / 1024, buf: make([]byte, 2048)}
}

// descends reports whether pid descends from the root, by the parents the
// last full scan read (memo caches the answers of one scan).
func (s *sampler) descends(pid int32, memo map[int32]bool) bool {
	if s.root <= 0 {
		return false
	}
	var path []int32
	found := false
	for p := pid; ; {
		if v, ok := memo[p]; ok {
			found = v
			break
		}
		st, ok := s.stats[p]
		if !ok || st.ppid <= 1 {
			break
		}
		if st.ppid == s.root {
			found = true
			path = append(path, p)
			break
		}
		path = append(path, p)
		p = int32(st.ppid)
		if len(path) > 4096 { // a loop cannot happen in /proc; stay safe
			break
		}
	}
	for _, p := range path {
		memo[p] = found
	}
	return found
}

// members returns the job's live processes now, from a full scan (the
// shepherd kills them at the end).
func (s *sampler) members() []int {
	s.scans = 0 // the next sample scans fully
	u := s.sample(time.Now())
	out := make([]int, 0, len(u.Pids))
	for _, p := range u.Pids {
		out = append(out, int(p))
	}
	return out
}

// fullScanEvery is how often (in samples) sample reads every process of
// the host; the samples in between read only the processes found last time.
const fullScanEvery = 5

// sample measures the job's process group. Every fullScanEvery-th time (and
// while it has found nothing) it reads /proc/<pid>/stat of every
// descendant of the shepherd when it is a subreaper (descendants), else of
// every process on the host, to find the group's members; in between it rereads only the
// members found last time, so a process the job starts is counted within
// fullScanEvery samples. For each member it adds resident memory, threads
// and CPU time (its own and that of the children it has waited for).
// A full scan also finds the shepherd's other descendants (with the
// shepherd a child subreaper, a process that left the group or the
// session stays one); the scans in between reread them by pid.
func (s *sampler) sample(now time.Time) *api.ResourceUsage {
	u := &api.ResourceUsage{Pgid: int32(s.pgid), CollectedTime: now.UnixNano()}
	full := s.scans%fullScanEvery == 0 || len(s.pids) == 0
	s.scans++
	if full {
		s.candidates = s.candidates[:0]
		// Every member is the shepherd's descendant when it is a
		// subreaper (the job's group is in the shepherd's session):
		// its tree is enough, and far cheaper than the host's.
		tree, ok := []int32(nil), false
		if s.root > 0 {
			tree, ok = descendants(s.root)
		}
		if ok {
			s.candidates = append(s.candidates, tree...)
		} else {
			pids, _ := Pids()
			for _, pid := range pids {
				s.candidates = append(s.candidates, int32(pid))
			}
		}
	} else {
		s.candidates = append(s.candidates[:0], s.pids...)
	}
	var cpuTicks int64
	path := make([]byte, 0, 32)
	if full && s.root > 0 {
		if s.stats == nil {
			s.stats = map[int32]procStat{}
		}
		clear(s.stats)
		s.zombies = s.zombies[:0]
	}
	var stats []procStat
	for _, pid := range s.candidates {
		path = strconv.AppendInt(append(path[:0], "/proc/"...), int64(pid), 10)
		path = append(path, "/stat"...)
		st, ok := s.readStat(path)
		if !ok {
			st.state = 'X'
		}
		stats = append(stats, st)
		if full && s.root > 0 && ok {
			s.stats[pid] = st
		}
	}
	memo := map[int32]bool{}
	for i, pid := range s.candidates {
		st := stats[i]
		if st.state == 'X' || int(pid) == s.root {
			continue
		}
		if st.state == 'Z' {
			// The shepherd's own children (mail) share its group and are
			// reaped by os/exec; the job's orphans are in other groups.
			if full && st.ppid == s.root && int(pid) != s.pgid && st.pgrp != s.rootGroup {
				s.zombies = append(s.zombies, int(pid))
			}
			continue
		}
		if st.pgrp != s.pgid && !(full && s.descends(pid, memo)) && !(!full && slices.Contains(s.pids, pid)) {
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

// Pids lists the processes of the host (the numbered entries of /proc),
// without init.
func Pids() ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	pids := make([]int, 0, len(names))
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err == nil && pid > 1 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// ProcIDs are the ids /proc/<pid>/stat gives a process: its parent, its
// process group and its session; and its state ('Z': a zombie).
type ProcIDs struct {
	PPid, Pgrp, Session int
	State               byte
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
	return ProcIDs{PPid: st.ppid, Pgrp: st.pgrp, Session: st.session, State: st.state}, nil
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

// killTree kills the job's processes that are left outside its process
// group (top is its top process, already ended and killed with its group)
// and reaps those that were reparented to the shepherd. A process forking
// while it is killed is found by the next round.
func killTree(s *sampler, top int) {
	for range 5 {
		left := 0
		for _, p := range s.members() {
			if p != top {
				syscall.Kill(p, syscall.SIGKILL)
				left++
			}
		}
		reapZombies(s, top)
		if left == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reapZombies reaps the shepherd's ended children that the last full scan
// found, except the job's top process (os/exec reaps that one).
func reapZombies(s *sampler, top int) {
	for _, z := range s.zombies {
		if z != top {
			var ws syscall.WaitStatus
			syscall.Wait4(z, &ws, syscall.WNOHANG, nil)
		}
	}
	s.zombies = s.zombies[:0]
}
