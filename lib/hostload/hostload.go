// Package hostload measures the LSF load indices of the Linux host it runs
// on, with LSF's meanings and units (lsload, bhosts -l, select[] and
// order[] see them):
//
//	r15s r1m r15m  run queue length averaged over 15 s, 1 min and 15 min
//	ut             CPU utilisation (0..1) averaged over the last minute
//	pg             paging rate: pages swapped in and out per second
//	io             disk I/O: KB read and written per second (whole disks)
//	ls             login sessions (utmp's user processes)
//	it             idle time: minutes since a login session's terminal was
//	               last used (with no session, since the host booted)
//	tmp swp mem    free space in the temporary directory, free swap and
//	               available memory, KB
//
// The kernel gives r1m and r15m directly (/proc/loadavg). The others are
// averaged exponentially from the sampler's own samples, as LSF's LIM
// does: r15s is the running processes (/proc/stat procs_running, less the
// sampler itself) over 15 s; ut the CPU's busy share over 60 s; pg and io
// the rates between samples over 15 s. They follow the host as closely as
// it is sampled (the controller samples every second); the first sample
// starts them from the averages since boot.
// An index the host does not give (no utmp file, no /proc/vmstat) is not
// reported (Have), rather than reported as 0.
//
// /proc, /sys, /dev, the utmp file and the temporary directory are
// parameters, so tests measure fixture trees.
package hostload

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
	"golang.org/x/sys/unix"
)

// Have says which indices a sample holds.
type Have uint16

const (
	HaveRunQueue Have = 1 << iota // r15s r1m r15m
	HaveUt
	HavePg
	HaveIo
	HaveLs
	HaveIt
	HaveTmp
	HaveSwp
	HaveMem
)

// Indices is one sample of the load indices.
type Indices struct {
	R15s, R1m, R15m float64
	Ut              float64 // 0..1
	Pg              float64 // pages per second
	Io              float64 // KB per second
	Ls              int
	It              float64 // minutes
	TmpKB           int64
	SwpKB           int64
	MemKB           int64
	// MaxTmpKB, MaxSwpKB and MaxMemKB are the sizes tmp, swp and mem are
	// part of (lshosts's maxtmp, maxswp, maxmem).
	MaxTmpKB, MaxSwpKB, MaxMemKB int64
	Have                         Have
	Time                         time.Time
}

// Paths are where the sampler reads; "" means the system's.
type Paths struct {
	Proc, Sys, Dev string // /proc, /sys, /dev
	Utmp           string // /run/utmp, else /var/run/utmp
	Tmp            string // os.TempDir()
}

// Sampler takes samples; it keeps what the rates and the averaged r15s
// need from the previous one. Safe for concurrent use.
type Sampler struct {
	p     Paths
	proc  procfs.FS
	block blockdevice.FS
	err   error // opening the file systems

	mu   sync.Mutex
	prev *counters
	last Indices
}

// counters are the cumulative figures rates are computed from.
type counters struct {
	at          time.Time
	busy, total float64 // CPU seconds
	pages       float64 // pswpin + pswpout
	sectors     float64 // read + written, 512 bytes each
	havePg      bool
	// The exponential averages.
	r15s, ut, pg, io float64
}

// ema moves avg towards v by the weight of dt seconds in an exponential
// average over tau seconds.
func ema(avg, v, dt, tau float64) float64 {
	return avg + (1-math.Exp(-dt/tau))*(v-avg)
}

// New returns a sampler reading from p.
func New(p Paths) *Sampler {
	if p.Proc == "" {
		p.Proc = "/proc"
	}
	if p.Sys == "" {
		p.Sys = "/sys"
	}
	if p.Dev == "" {
		p.Dev = "/dev"
	}
	if p.Tmp == "" {
		p.Tmp = os.TempDir()
	}
	s := &Sampler{p: p}
	s.proc, s.err = procfs.NewFS(p.Proc)
	if s.err == nil {
		s.block, s.err = blockdevice.NewFS(p.Proc, p.Sys)
	}
	return s
}

// Latest returns the last sample when it is younger than maxAge, else a
// new one.
func (s *Sampler) Latest(now time.Time, maxAge time.Duration) Indices {
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	if !last.Time.IsZero() && now.Sub(last.Time) < maxAge && !now.Before(last.Time) {
		return last
	}
	return s.Sample(now)
}

// Sample measures the indices now.
func (s *Sampler) Sample(now time.Time) Indices {
	ix := Indices{Time: now}
	if s.err != nil {
		return ix
	}
	cur := &counters{at: now}
	if la, err := s.proc.LoadAvg(); err == nil {
		ix.R1m, ix.R15m = la.Load1, la.Load15
		ix.Have |= HaveRunQueue
	}
	running := -1.0
	if st, err := s.proc.Stat(); err == nil {
		c := st.CPUTotal
		cur.total = c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
		cur.busy = cur.total - c.Idle - c.Iowait
		// The sampler itself is running while it reads.
		running = max(0, float64(st.ProcessesRunning)-1)
		ix.Have |= HaveUt
	}
	cur.pages, cur.havePg = s.swapPages()
	cur.sectors = s.diskSectors()
	if mi, err := s.proc.Meminfo(); err == nil {
		if mi.MemAvailable != nil {
			ix.MemKB = int64(*mi.MemAvailable)
			ix.Have |= HaveMem
		}
		if mi.MemTotal != nil {
			ix.MaxMemKB = int64(*mi.MemTotal)
		}
		if mi.SwapFree != nil && mi.SwapTotal != nil {
			ix.SwpKB, ix.MaxSwpKB = int64(*mi.SwapFree), int64(*mi.SwapTotal)
			ix.Have |= HaveSwp
		}
	}
	var fs unix.Statfs_t
	if unix.Statfs(s.p.Tmp, &fs) == nil {
		ix.TmpKB = int64(fs.Bavail) * fs.Bsize / 1024
		ix.MaxTmpKB = int64(fs.Blocks) * fs.Bsize / 1024
		ix.Have |= HaveTmp
	}
	uptime := s.uptime()
	if ls, idle, ok := s.sessions(now, uptime); ok {
		ix.Ls, ix.It = ls, idle.Minutes()
		ix.Have |= HaveLs | HaveIt
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.prev
	first := prev == nil
	if first {
		// The cumulative counters started at zero when the host booted.
		prev = &counters{at: now.Add(-uptime)}
	}
	dt := now.Sub(prev.at).Seconds()
	if cur.sectors < 0 {
		cur.sectors = prev.sectors
	} else {
		ix.Have |= HaveIo
	}
	if cur.havePg {
		ix.Have |= HavePg
	}
	// The values since the previous sample (since boot for the first),
	// then their averages; the first sample is its own average.
	ut, pg, io, runq := prev.ut, prev.pg, prev.io, prev.r15s
	if dt > 0 {
		if cur.total > prev.total {
			ut = min(1, max(0, (cur.busy-prev.busy)/(cur.total-prev.total)))
		}
		pg = max(0, cur.pages-prev.pages) / dt
		io = max(0, cur.sectors-prev.sectors) * 512 / 1024 / dt
	}
	if running >= 0 {
		runq = running
	}
	if first {
		cur.ut, cur.pg, cur.io, cur.r15s = ut, pg, io, ix.R1m
	} else if dt > 0 {
		cur.ut, cur.pg, cur.io = ema(prev.ut, ut, dt, 60), ema(prev.pg, pg, dt, 15), ema(prev.io, io, dt, 15)
		cur.r15s = ema(prev.r15s, runq, dt, 15)
	} else {
		cur.ut, cur.pg, cur.io, cur.r15s = prev.ut, prev.pg, prev.io, prev.r15s
	}
	ix.Ut, ix.Pg, ix.Io, ix.R15s = cur.ut, cur.pg, cur.io, cur.r15s
	s.prev, s.last = cur, ix
	return ix
}

// swapPages is pswpin + pswpout from /proc/vmstat.
func (s *Sampler) swapPages() (float64, bool) {
	b, err := os.ReadFile(filepath.Join(s.p.Proc, "vmstat"))
	if err != nil {
		return 0, false
	}
	var n float64
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok || (k != "pswpin" && k != "pswpout") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, false
		}
		n += f
		found++
	}
	return n, found == 2
}

// virtualDisk reports block devices that are not disks of their own:
// loop and RAM devices, device-mapper and md devices (their I/O is already
// counted on the disks under them), optical and floppy drives.
func virtualDisk(name string) bool {
	for _, p := range []string{"loop", "ram", "zram", "dm-", "md", "sr", "fd", "nbd"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// diskSectors is the sectors read and written by the host's whole disks
// (/sys/block, which lists no partitions); -1 when it cannot be read.
func (s *Sampler) diskSectors() float64 {
	devs, err := s.block.SysBlockDevices()
	if err != nil {
		return -1
	}
	var n float64
	for _, d := range devs {
		if virtualDisk(d) {
			continue
		}
		st, _, err := s.block.SysBlockDeviceStat(d)
		if err != nil {
			continue
		}
		n += float64(st.ReadSectors + st.WriteSectors)
	}
	return n
}

func (s *Sampler) uptime() time.Duration {
	b, err := os.ReadFile(filepath.Join(s.p.Proc, "uptime"))
	if err != nil {
		return 0
	}
	f, _, _ := strings.Cut(string(b), " ")
	sec, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
	if err != nil {
		return 0
	}
	return time.Duration(sec * float64(time.Second))
}

// utmp records as glibc writes them on Linux: 384 bytes, ut_type (int16)
// at 0, ut_line (32 bytes) at 8.
const (
	utmpSize        = 384
	utmpLineOff     = 8
	utmpLineLen     = 32
	utmpUserProcess = 7
)

// sessions counts the login sessions in utmp and how long the most
// recently used one's terminal has been idle; with no session, idle is
// the time since boot. ok is false when there is no utmp file.
func (s *Sampler) sessions(now time.Time, uptime time.Duration) (n int, idle time.Duration, ok bool) {
	paths := []string{s.p.Utmp}
	if s.p.Utmp == "" {
		paths = []string{"/run/utmp", "/var/run/utmp"}
	}
	var b []byte
	var err error
	for _, p := range paths {
		if b, err = os.ReadFile(p); err == nil {
			break
		}
	}
	if err != nil {
		return 0, 0, false
	}
	idle = uptime
	var latest time.Time
	for off := 0; off+utmpSize <= len(b); off += utmpSize {
		rec := b[off : off+utmpSize]
		if int16(binary.LittleEndian.Uint16(rec[0:2])) != utmpUserProcess {
			continue
		}
		n++
		line := rec[utmpLineOff : utmpLineOff+utmpLineLen]
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		name := filepath.Clean("/" + string(line))[1:] // no escape from Dev
		var st unix.Stat_t
		if name == "" || unix.Stat(filepath.Join(s.p.Dev, name), &st) != nil {
			continue
		}
		if at := time.Unix(st.Atim.Sec, st.Atim.Nsec); at.After(latest) {
			latest = at
		}
	}
	if !latest.IsZero() {
		idle = max(0, now.Sub(latest))
	}
	return n, idle, true
}
