package hostload

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// host is a fixture /proc, /sys, /dev and utmp whose counters a test
// advances between samples.
type host struct {
	t                     *testing.T
	root                  string
	cpuBusy, cpuIdle      int // USER_HZ ticks
	running               int
	pswpin, pswpout       int
	vdaSectors, loopSects int
	uptime                float64
}

func newHost(t *testing.T) *host {
	h := &host{t: t, root: t.TempDir(), cpuBusy: 1000, cpuIdle: 3000, running: 3, uptime: 100}
	for _, d := range []string{"proc", "sys/block/vda", "sys/block/loop0", "dev/pts"} {
		if err := os.MkdirAll(filepath.Join(h.root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.write()
	return h
}

func (h *host) file(rel, content string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.root, rel), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *host) write() {
	h.file("proc/loadavg", "1.50 0.75 0.25 3/200 4242\n")
	h.file("proc/stat", fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 %d 0 0 %d 0 0 0 0 0 0\nintr 0\nctxt 0\nbtime 0\nprocesses 10\nprocs_running %d\nprocs_blocked 0\n",
		h.cpuBusy, h.cpuIdle, h.cpuBusy, h.cpuIdle, h.running))
	h.file("proc/meminfo", "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n")
	h.file("proc/vmstat", fmt.Sprintf("pgpgin 5\npswpin %d\npswpout %d\n", h.pswpin, h.pswpout))
	h.file("proc/uptime", fmt.Sprintf("%.2f 50.00\n", h.uptime))
	stat := func(sectors int) string {
		// read IOs, merges, sectors, ticks; write IOs, merges, sectors, ticks; ...
		return fmt.Sprintf("1 0 %d 0 1 0 %d 0 0 0 0 0 0 0 0 0 0\n", sectors/2, sectors-sectors/2)
	}
	h.file("sys/block/vda/stat", stat(h.vdaSectors))
	h.file("sys/block/loop0/stat", stat(h.loopSects))
}

func (h *host) sampler(utmp string) *Sampler {
	return New(Paths{Proc: filepath.Join(h.root, "proc"), Sys: filepath.Join(h.root, "sys"), Dev: filepath.Join(h.root, "dev"),
		Utmp: utmp, Tmp: h.root})
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestSampleIndices(t *testing.T) {
	h := newHost(t)
	s := h.sampler(filepath.Join(h.root, "no-utmp"))
	t0 := time.Unix(1_000_000, 0)
	a := s.Sample(t0)
	want := HaveRunQueue | HaveUt | HavePg | HaveIo | HaveTmp | HaveSwp | HaveMem
	if a.Have != want {
		t.Errorf("have %b, want %b (no utmp: no ls, no it)", a.Have, want)
	}
	// The first sample: averages since boot; r15s starts from r1m.
	if a.R1m != 1.5 || a.R15m != 0.25 || a.R15s != 1.5 || !near(a.Ut, 0.25) {
		t.Errorf("first sample r15s %v r1m %v r15m %v ut %v", a.R15s, a.R1m, a.R15m, a.Ut)
	}
	if a.MemKB != 8000000 || a.MaxMemKB != 16000000 || a.SwpKB != 0 || a.TmpKB <= 0 || a.MaxTmpKB < a.TmpKB {
		t.Errorf("mem %d/%d swp %d tmp %d/%d", a.MemKB, a.MaxMemKB, a.SwpKB, a.TmpKB, a.MaxTmpKB)
	}
	// 10 s later: the CPU was fully busy, 300 pages were swapped, vda
	// moved 20480 sectors (10 MB), the loop device's I/O does not count.
	h.cpuBusy += 1000
	h.pswpin, h.pswpout = 100, 200
	h.vdaSectors, h.loopSects = 20480, 999999
	h.running = 5
	h.uptime += 10
	h.write()
	b := s.Sample(t0.Add(10 * time.Second))
	w15, w60 := 1-math.Exp(-10.0/15), 1-math.Exp(-10.0/60)
	if !near(b.Ut, 0.25+w60*(1-0.25)) {
		t.Errorf("ut %v, want the 60 s average of 0.25 then 1", b.Ut)
	}
	if !near(b.Pg, w15*30) {
		t.Errorf("pg %v, want the 15 s average of 0 then 30 pages/s", b.Pg)
	}
	if !near(b.Io, w15*1024) {
		t.Errorf("io %v, want the 15 s average of 0 then 1024 KB/s", b.Io)
	}
	if !near(b.R15s, 1.5+w15*(4-1.5)) {
		t.Errorf("r15s %v, want the 15 s average towards 4 running (5 less the sampler)", b.R15s)
	}
	// Latest reuses a fresh sample.
	if c := s.Latest(t0.Add(10*time.Second+100*time.Millisecond), time.Second); c.Time != b.Time {
		t.Errorf("Latest sampled again within its max age")
	}
}

func utmpRecord(typ int16, line string) []byte {
	rec := make([]byte, utmpSize)
	binary.LittleEndian.PutUint16(rec[0:2], uint16(typ))
	copy(rec[utmpLineOff:utmpLineOff+utmpLineLen], line)
	return rec
}

func TestSessions(t *testing.T) {
	h := newHost(t)
	utmp := filepath.Join(h.root, "utmp")
	now := time.Unix(2_000_000, 0)
	for name, age := range map[string]time.Duration{"pts/0": 30 * time.Minute, "pts/1": 5 * time.Minute} {
		p := filepath.Join(h.root, "dev", name)
		h.file(filepath.Join("dev", name), "")
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	var b []byte
	b = append(b, utmpRecord(2, "~")...) // BOOT_TIME
	b = append(b, utmpRecord(utmpUserProcess, "pts/0")...)
	b = append(b, utmpRecord(utmpUserProcess, "pts/1")...)
	b = append(b, utmpRecord(8, "pts/2")...)                   // DEAD_PROCESS
	b = append(b, utmpRecord(utmpUserProcess, "../../etc")...) // stays under dev
	if err := os.WriteFile(utmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ix := h.sampler(utmp).Sample(now)
	if ix.Have&(HaveLs|HaveIt) != HaveLs|HaveIt || ix.Ls != 3 || !near(ix.It, 5) {
		t.Errorf("ls %d it %v (have %b), want 3 sessions idle 5 minutes", ix.Ls, ix.It, ix.Have)
	}
	// No session: idle since boot.
	if err := os.WriteFile(utmp, utmpRecord(2, "~"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ix := h.sampler(utmp).Sample(now); ix.Ls != 0 || !near(ix.It, 100.0/60) {
		t.Errorf("no sessions: ls %d it %v, want 0 and the uptime", ix.Ls, ix.It)
	}
}

// The real host: every index Linux gives is there.
func TestSampleThisHost(t *testing.T) {
	ix := New(Paths{}).Sample(time.Now())
	for _, h := range []Have{HaveRunQueue, HaveUt, HaveTmp, HaveMem} {
		if ix.Have&h == 0 {
			t.Errorf("index %b not measured on this host (have %b)", h, ix.Have)
		}
	}
	if ix.MaxMemKB <= 0 || ix.MemKB <= 0 {
		t.Errorf("mem %d of %d", ix.MemKB, ix.MaxMemKB)
	}
}
