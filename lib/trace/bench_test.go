package trace

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkReadSWF1M reads a 1,000,000-job SWF file (made here: 2,000
// users in 50 groups, 8 queues, a header like the archive's) and reports
// the time and the memory per job: allocated while reading, and held by
// the trace afterwards.
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
	var before, after runtime.MemStats
	b.ResetTimer()
	var tr *Trace
	for b.Loop() {
		tr = nil
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr, err = Read(path, "")
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&after)
	}
	b.StopTimer()
	if len(tr.Jobs) != n {
		b.Fatalf("read %d jobs", len(tr.Jobs))
	}
	runtime.GC()
	var held runtime.MemStats
	runtime.ReadMemStats(&held)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/job")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "alloc-B/job")
	b.ReportMetric(float64(held.HeapAlloc-before.HeapAlloc)/n, "held-B/job")
	runtime.KeepAlive(tr)
}
