package worker

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/testenv"
)

// BenchmarkJobOverhead runs 1,000 `true` jobs through a worker and its
// real shepherd, 4 at a time, with a cgroup per job and with the process
// tree only, alternating in rounds so both meet the same machine load,
// then once more with both modes side by side (two workers at once, 2
// jobs in flight each), then one job at a time (250 jobs per mode). It reports each mode's median start-to-end
// latency and throughput, the cgroup's added median (ms) and slowdown
// (%), the added median side by side, and each containment step's median
// wall time (traceStep). Root only.
func BenchmarkJobOverhead(b *testing.B) {
	shep := nobodyShepherd(b)
	const total, inFlight, rounds = 1000, 4, 5
	type mode struct {
		name       string
		lat        []time.Duration
		wall       time.Duration
		concurrent []time.Duration // run beside the other mode
		serial     []time.Duration // one job at a time
	}
	modes := []*mode{{name: "tree"}, {name: "cgroup"}}
	// Each step's wall time, by mode (see traceStep).
	var smu sync.Mutex
	steps := map[string][]time.Duration{}
	cur := ""
	tracer := func(step string, d time.Duration) {
		smu.Lock()
		steps[cur+":"+step] = append(steps[cur+":"+step], d)
		smu.Unlock()
	}
	stepTracer.Store(&tracer)
	defer stepTracer.Store(nil)
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for _, m := range modes {
				smu.Lock()
				cur = m.name
				smu.Unlock()
				lat, wall := runTrue(b, shep, m.name == "tree", false, total/rounds, inFlight)
				m.lat = append(m.lat, lat...)
				m.wall += wall
			}
		}
		// Both modes at once, through two workers, so that each job meets
		// the same machine load whatever its mode (a shared machine's
		// load swings more between rounds than the cgroup costs).
		smu.Lock()
		cur = "both"
		smu.Unlock()
		var wg sync.WaitGroup
		for _, m := range modes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lat, _ := runTrue(b, shep, m.name == "tree", false, total/2, inFlight/2)
				m.concurrent = append(m.concurrent, lat...)
			}()
		}
		wg.Wait()
		// One job at a time, alternating: the latency a job adds when it
		// does not queue for the machine's cores behind others.
		for r := 0; r < rounds; r++ {
			for _, m := range modes {
				smu.Lock()
				cur = m.name + "-serial"
				smu.Unlock()
				lat, _ := runTrue(b, shep, m.name == "tree", false, total/(4*rounds), 1)
				m.serial = append(m.serial, lat...)
			}
		}
	}
	smed := map[string]time.Duration{}
	for _, m := range modes {
		slices.Sort(m.serial)
		smed[m.name] = m.serial[len(m.serial)/2]
		b.ReportMetric(float64(smed[m.name].Microseconds())/1000, m.name+"-serial-median-ms")
	}
	b.ReportMetric(float64((smed["cgroup"]-smed["tree"]).Microseconds())/1000, "serial-cgroup-added-median-ms")
	med := map[string]time.Duration{}
	rate := map[string]float64{}
	for _, m := range modes {
		slices.Sort(m.lat)
		med[m.name] = m.lat[len(m.lat)/2]
		rate[m.name] = float64(len(m.lat)) / m.wall.Seconds()
		b.ReportMetric(float64(med[m.name].Microseconds())/1000, m.name+"-median-ms")
		b.ReportMetric(rate[m.name], m.name+"-jobs/s")
	}
	b.ReportMetric(float64((med["cgroup"]-med["tree"]).Microseconds())/1000, "cgroup-added-median-ms")
	cmed := map[string]time.Duration{}
	for _, m := range modes {
		slices.Sort(m.concurrent)
		cmed[m.name] = m.concurrent[len(m.concurrent)/2]
	}
	b.ReportMetric(float64((cmed["cgroup"]-cmed["tree"]).Microseconds())/1000, "side-by-side-cgroup-added-median-ms")
	for name, ds := range steps {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-median-ms")
	}
	b.ReportMetric(100*(rate["tree"]/rate["cgroup"]-1), "cgroup-slower-%")
}

// nobodyShepherd skips b unless it runs as root (cgroups, and jobs run
// as nobody), and builds the shepherd where nobody can reach it.
func nobodyShepherd(b *testing.B) string {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Skip("needs root (cgroups, and a job run as its user)")
	}
	shep := testenv.BuildShepherd(b)
	os.Chmod(filepath.Dir(shep), 0o755)
	os.Chmod(filepath.Dir(filepath.Dir(shep)), 0o755)
	return shep
}

// runTrue runs n `true` jobs, at most inFlight at once, and returns each
// one's latency from Start to its end's report, and the wall time.
func runTrue(b *testing.B, shep string, tree, reuse bool, n, inFlight int) ([]time.Duration, time.Duration) {
	var mu sync.Mutex
	started := map[int64]time.Time{}
	var lat []time.Duration
	done := make(chan int64, n)
	w, err := New(Config{
		Host: "hostA", ClusterName: "bench", RunDir: b.TempDir(), Shepherd: []string{shep},
		KillGrace: time.Second, TerminateInterval: time.Second, NoProcessTracking: tree, NoShepherdReuse: !reuse,
		CgroupParent: testCgroupParent,
		Report: func(r Report) {
			if r.Finished == nil && r.Err == nil {
				return
			}
			mu.Lock()
			lat = append(lat, time.Since(started[r.JobID]))
			mu.Unlock()
			done <- r.JobID
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	dir := b.TempDir()
	os.Chmod(dir, 0o755)
	sem := make(chan struct{}, inFlight)
	t0 := time.Now()
	for i := 1; i <= n; i++ {
		sem <- struct{}{}
		j := &api.Job{JobId: int64(i), State: api.JobState_RUN, SubmitTime: time.Now().UnixNano(),
			ExecHosts: []*api.HostSlots{{Host: "hostA", Slots: 1}},
			Spec: &api.JobSpec{Command: "true", SubmitCwd: dir, Env: []string{"PATH=/usr/bin:/bin"},
				Uid: 65534, Gid: 65534, OutputFile: "/dev/null"}}
		mu.Lock()
		started[j.JobId] = time.Now()
		mu.Unlock()
		if err := w.Start(j); err != nil {
			b.Fatal(err)
		}
		go func() {
			w.Remove(<-done, 0)
			<-sem
		}()
	}
	for i := 0; i < inFlight; i++ {
		sem <- struct{}{}
	}
	return lat, time.Since(t0)
}
