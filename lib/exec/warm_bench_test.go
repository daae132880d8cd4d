package exec

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/testenv"
)

// BenchmarkWarmRun runs 500 `true` jobs 2 at a time through Run inside
// this one process, in 3 rounds, and reports the median wall time and CPU
// (this process and its reaped children, so the job's shell too) per
// job: the shepherd's own per-job work without a process start of its
// own, which is what a shepherd kept for the next job would cost. Beside
// lib/worker's BenchmarkJobFloor (the machine, the worker's work alone,
// and today's path with a shepherd process per job) it says what the
// per-job process start costs and what reusing it would save.
func BenchmarkWarmRun(b *testing.B) {
	const n, rounds = 500, 3
	root := b.TempDir()
	var wall, cpu []float64 // ms per job, per round
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			c0, t0 := testenv.CPUTime(), time.Now()
			sem := make(chan struct{}, 2)
			var wg sync.WaitGroup
			for k := 0; k < n; k++ {
				sem <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					dir := filepath.Join(root, strconv.Itoa(r)+"-"+strconv.Itoa(k))
					if err := os.MkdirAll(filepath.Join(dir, "run"), 0o700); err != nil {
						b.Error(err)
						return
					}
					defer os.RemoveAll(dir)
					l := &api.Launch{
						Job: &api.Job{JobId: int64(k + 1), SubmitTime: time.Now().UnixNano(),
							Spec: &api.JobSpec{Command: "true", SubmitCwd: dir, User: "u", Home: dir,
								Env: []string{"PATH=/usr/bin:/bin"}, OutputFile: "/dev/null"},
							Effective:   &api.JobSpec{Queue: "normal"},
							SpoolOutput: filepath.Join(dir, "run", "output")},
						ClusterName: "c", Host: "h",
						JobFile:     filepath.Join(dir, "run", "job"),
						StartFile:   filepath.Join(dir, "run", "start"),
						StatusFile:  filepath.Join(dir, "run", "status"),
						KillGraceMs: 1000,
					}
					if ev, err := Run(l); err != nil || ev.GetExitStatus() != 0 {
						b.Errorf("job %d: %v, exit status %d", k+1, err, ev.GetExitStatus())
					}
				}()
			}
			wg.Wait()
			wall = append(wall, float64(time.Since(t0).Microseconds())/1000/n)
			cpu = append(cpu, float64((testenv.CPUTime()-c0).Microseconds())/1000/n)
		}
	}
	b.ReportMetric(testenv.Median(wall), "wall-ms/job")
	b.ReportMetric(testenv.Median(cpu), "cpu-ms/job")
	b.ReportMetric(0, "ns/op")
}
