package trace

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReadSWF1M reads a 1,000,000-job SWF file (made here: 2,000
// users in 50 groups, 8 queues, a header like the archive's) and reports
// the time and the memory per job: allocated while reading, and held by
// the trace afterwards. Beside it, "lines" reads the same file without
// parsing it: the floor, measured in the same run.
func BenchmarkReadSWF1M(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "1m.swf")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("; Version: 2.2\n; MaxJobs: 1000000\n; MaxRecords: 1000000\n; MaxProcs: 10000\n")
	r := rand.New(rand.NewPCG(1, 2))
	var line []byte
	submit := 0
	for i := 1; i <= n; i++ {
		submit += r.IntN(60)
		procs := 1 << r.IntN(8)
		run := r.IntN(86400)
		user := 1 + r.IntN(2000)
		fields := []int{i, submit, r.IntN(1000), run, procs, run, -1, procs, run + r.IntN(3600), 1024 * (1 + r.IntN(8)), 1, user, 1 + user%50, -1, 1 + r.IntN(8), 1, -1, -1}
		line = line[:0]
		for k, v := range fields {
			if k > 0 {
				line = append(line, ' ')
			}
			line = strconv.AppendInt(line, int64(v), 10)
		}
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	// The floor: the same file read line by line, nothing parsed.
	b.Run("lines", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			br := bufio.NewReaderSize(f, 256<<10)
			lines := 0
			for {
				_, err := readLine(br)
				if err != nil {
					break
				}
				lines++
			}
			f.Close()
			if lines < n {
				b.Fatalf("%d lines", lines)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/job")
	})
	b.Run("read", func(b *testing.B) {
		var before, after runtime.MemStats
		var tr *Trace
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			tr = nil
			runtime.GC()
			runtime.ReadMemStats(&before)
			c0 := cpuTime()
			b.StartTimer()
			var err error
			tr, err = Read(path, "")
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			cpu += cpuTime() - c0
			runtime.ReadMemStats(&after)
			b.StartTimer()
		}
		if len(tr.Jobs) != n {
			b.Fatalf("read %d jobs", len(tr.Jobs))
		}
		runtime.GC()
		var held runtime.MemStats
		runtime.ReadMemStats(&held)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/job")
		// CPU time (user and system, every thread): what the wall time
		// is when the machine is not shared.
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/n, "cpu-ns/job")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "alloc-B/job")
		b.ReportMetric(float64(held.HeapAlloc-before.HeapAlloc)/n, "held-B/job")
		runtime.KeepAlive(tr)
	})
}

// cpuTime is the process's CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
