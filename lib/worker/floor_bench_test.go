package worker

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"xce/lib/cgroup"
	"xce/lib/testenv"
)

// BenchmarkJobFloor runs `true` jobs 2 at a time three ways, in
// alternating rounds of 500, and reports each one's median wall time and
// CPU (this process and its reaped children) per job:
//   - xargs: `xargs -P2 sh -c true`, the machine's own limit;
//   - direct: this process does what the worker does for a job and starts
//     the job itself (job directory, cgroup, os/exec of `sh -c true` as
//     nobody, wait, end usage, removal): the floor of a design that keeps
//     a directory and a cgroup per job but no process of its own per job;
//   - shepherd: the worker and a real shepherd process per job (runTrue,
//     NoShepherdReuse);
//   - reused: the worker as it runs, handing each job to an idle shepherd
//     of the job's user where it has one (reuse.go).
//
// The gap between direct and shepherd is what a shepherd process per job
// costs; reused shows how much of it reuse takes back. Root only.
func BenchmarkJobFloor(b *testing.B) {
	shep := nobodyShepherd(b)
	const n, rounds = 500, 3
	type row struct{ wall, cpu []float64 } // ms per job, one per round
	rows := map[string]*row{"xargs": {}, "direct": {}, "shepherd": {}, "reused": {}}
	measure := func(name string, run func()) {
		c0, t0 := testenv.CPUTime(), time.Now()
		run()
		r := rows[name]
		r.wall = append(r.wall, float64(time.Since(t0).Microseconds())/1000/n)
		r.cpu = append(r.cpu, float64((testenv.CPUTime()-c0).Microseconds())/1000/n)
	}
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			measure("xargs", func() {
				cmd := osexec.Command("xargs", "-P2", "-n1", "sh", "-c", "true")
				cmd.Stdin = strings.NewReader(strings.Repeat("x\n", n))
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("xargs: %v: %s", err, out)
				}
			})
			measure("direct", func() { directLoop(b, n, 2) })
			measure("shepherd", func() { runTrue(b, shep, false, false, n, 2) })
			measure("reused", func() { runTrue(b, shep, false, true, n, 2) })
		}
	}
	for name, r := range rows {
		b.ReportMetric(testenv.Median(r.wall), name+"-wall-ms/job")
		b.ReportMetric(testenv.Median(r.cpu), name+"-cpu-ms/job")
	}
	b.ReportMetric(0, "ns/op")
}

// directLoop runs n `sh -c true` as nobody, at most inFlight at once, each
// with the worker's job directory and a cgroup of its own, started and
// waited for by this process (see BenchmarkJobFloor).
func directLoop(b *testing.B, n, inFlight int) {
	m, err := cgroup.New(cgroup.Config{Cluster: "floor", Parent: testCgroupParent})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	root := b.TempDir()
	os.Chmod(root, 0o755)
	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			dir := filepath.Join(root, strconv.Itoa(i))
			f, err := makeJobDir(dir, 65534, 65534, true, make([]byte, 1500))
			if err != nil {
				b.Error(err)
				return
			}
			f.close()
			cg, err := m.Create(int64(i), 0, cgroup.Limits{})
			if err != nil {
				b.Error(err)
				return
			}
			defer cg.Remove()
			cmd := osexec.Command("/bin/sh", "-c", "true")
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			cmd.Dir = filepath.Join(dir, userDirName)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			if err := cmd.Start(); err != nil {
				b.Error(err)
				return
			}
			if err := cg.Add(cmd.Process.Pid); err != nil {
				b.Error(err)
			}
			cmd.Wait()
			if _, err := cg.EndUsage(); err != nil {
				b.Error(err)
			}
			if err := os.RemoveAll(dir); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
}
