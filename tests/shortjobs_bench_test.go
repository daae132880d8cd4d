package tests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"xce/lib/api"
	jobexec "xce/lib/exec"
	"xce/lib/testenv"
	"xce/lib/worker"
)

// BenchmarkShortJobs: 1,000 `true` jobs on 2 slots, from `bsub -J
// "a[1-1000]" -o /dev/null true` until every element is DONE, as
// sub-benchmarks: on the single-host default, through one remote worker,
// and on single-host controllers already holding 10,000 and 100,000
// finished jobs (history must not slow the path); beside, measured in the
// same run, the machine's limit (`xargs -P2` running `sh -c true`) and
// this design's (the worker and its shepherd alone, 2 at a time, with no
// controller). Each row also gives the CPU per job of xced and of the
// jobs' processes (shepherds and job shells). The empty controller's RSS
// is a row of its own.
func BenchmarkShortJobs(b *testing.B) {
	const n = 1000
	var machine xargsRef
	b.Run("xargs", func(b *testing.B) {
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru0)
		cmd := exec.Command("xargs", "-P2", "-n1", "sh", "-c", "true")
		cmd.Stdin = strings.NewReader(strings.Repeat("x\n", n))
		began := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("xargs: %v: %s", err, out)
		}
		d := time.Since(began)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru1)
		machine = xargsRef{wall: d, cpuPerJob: ms(testenv.RusageCPU(&ru1)-testenv.RusageCPU(&ru0)) / n}
		report(b, fmt.Sprintf("%d `sh -c true` by xargs -P2 (the machine)", n), d.Seconds(), "s", nil)
		report(b, "  CPU per job", machine.cpuPerJob, "ms-jobs", nil)
	})
	b.Run("shepherd", func(b *testing.B) {
		d, cpu := shepherdLoop(b, n, 2)
		report(b, fmt.Sprintf("%d `true` by the worker and shepherd alone, 2 at a time", n), d.Seconds(), "s", nil)
		report(b, "  CPU per job (worker, shepherd and job)", ms(cpu)/n, "ms-jobs", nil)
	})
	b.Run("single-host", func(b *testing.B) {
		c := newBenchCluster(b, "--slots", "2")
		c.shortJobs(b, n, "single-host default", nil, machine)
	})
	b.Run("remote-worker", func(b *testing.B) {
		c, w := newBenchWorkerCluster(b, 2)
		c.shortJobs(b, n, "one remote worker", w, machine)
	})
	for _, hist := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("history-%d", hist), func(b *testing.B) {
			c := newBenchCluster(b, "--slots", "2")
			c.finishedHistory(b, hist)
			c.settle(b)
			c.shortJobs(b, n, fmt.Sprintf("single host, %d finished jobs held", hist), nil, machine)
		})
	}
	b.Run("empty-rss", func(b *testing.B) {
		c := newBenchCluster(b)
		rss, anon, file := c.resting()
		report(b, "empty xced's RSS (VmRSS at rest after start)", rss/1024, "MB", atMost(12))
		report(b, "  of which anonymous", anon/1024, "MB-anon", nil)
		report(b, "  of which file-mapped", file/1024, "MB-file", nil)
		rss, anon, file = stackFloor(b)
		report(b, "the stack alone: store, empty gRPC server, raft", rss/1024, "MB-floor", nil)
		report(b, "  of which anonymous", anon/1024, "MB-floor-anon", nil)
		report(b, "  of which file-mapped", file/1024, "MB-floor-file", nil)
	})
}

// stackFloor is the empty controller's reference, measured as it is: the
// RSS at rest of tools/stackfloor, which opens the store xced uses, serves
// an empty gRPC server and links raft, with none of the controller.
func stackFloor(b *testing.B) (rss, anon, file float64) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "stackfloor")
	build := exec.Command("go", "build", "-tags", "grpcnotrace", "-ldflags", buildLDFlags(), "-o", bin, "../tools/stackfloor")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build stackfloor: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		b.Fatalf("stackfloor said %q: %v", line, err)
	}
	return restingOf(b, cmd.Process.Pid)
}

// xargsRef is the machine's limit measured in the same run (the xargs
// row); zero when that row did not run.
type xargsRef struct {
	wall      time.Duration
	cpuPerJob float64 // ms
}

// The issue's targets were set on a machine where the xargs row took
// 0.40 s: 2.5 s on the single-host default and 3 s through a worker are
// 6.25 and 7.5 times the machine's own limit. Process starts cost ten
// times as much on some machines as on others, so the rows give the
// ratio to the xargs row of the same run beside the absolute figure.
const (
	issueXargs         = 0.40 // s
	singleHostTarget   = 2.5  // s
	remoteWorkerTarget = 3.0  // s
)

// shortJobs submits an array of n `true` on the cluster's 2 slots, waits
// until every element has ended and reports the time and CPU per job: of
// xced (and of the remote worker w, when there is one) and of the jobs'
// processes (the reaped children of the process that runs them). It
// waits on a watch stream, as bsub -K and bwait do: a client polling
// bjobs every few milliseconds would spend xced's CPU on reading the
// running jobs' live usage, which is not the jobs' path.
func (c *benchCluster) shortJobs(b *testing.B, n int, where string, w *exec.Cmd, machine xargsRef) {
	cl := c.dial()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	runner := c.cmd.Process.Pid
	if w != nil {
		runner = w.Process.Pid
	}
	ctl0, _ := procCPU(b, c.cmd.Process.Pid)
	wk0, kids0 := procCPU(b, runner)
	began := time.Now()
	id := c.submit("-J", fmt.Sprintf("a[1-%d]", n), "-o", "/dev/null", "true")
	ref := []*api.JobRef{{JobId: id, ArrayIndex: -1}}
	stream, err := cl.Watch(ctx, &api.WatchRequest{Refs: ref, Initial: true})
	if err != nil {
		b.Fatalf("Watch: %v", err)
	}
	ended := map[int32]bool{}
	for len(ended) < n {
		ev, err := stream.Recv()
		if err != nil {
			b.Fatalf("Watch: %v (after %v, %d of %d ended)\nxced log:\n%s", err, time.Since(began), len(ended), n, c.logTail())
		}
		if s := ev.Job.State; s == api.JobState_DONE || s == api.JobState_EXIT {
			ended[ev.Job.ArrayIndex] = true
		}
	}
	d := time.Since(began)
	endIdleShepherds(b, runner)
	ctl1, _ := procCPU(b, c.cmd.Process.Pid)
	wk1, kids1 := procCPU(b, runner)
	jobs, err := cl.Query(ctx, &api.QueryRequest{Scope: api.QueryRequest_ALL, Refs: ref})
	if err != nil {
		b.Fatal(err)
	}
	done := 0
	for _, j := range jobs.Jobs {
		if j.State == api.JobState_DONE {
			done++
		}
	}
	if done != n {
		b.Fatalf("%d of %d elements DONE", done, n)
	}
	limit := singleHostTarget
	if w != nil {
		limit = remoteWorkerTarget
	}
	report(b, fmt.Sprintf("%d `true` on 2 slots, %s", n, where), d.Seconds(), "s", atMost(limit))
	if machine.wall > 0 {
		report(b, "  the same, times the xargs row", d.Seconds()/machine.wall.Seconds(), "x-xargs", atMost(limit/issueXargs))
	}
	xced := ms(ctl1-ctl0) / float64(n)
	jobsCPU := ms(kids1-kids0) / float64(n)
	report(b, "  CPU per job: xced", xced, "ms-xced", nil)
	if w != nil {
		report(b, "  CPU per job: xced worker", ms(wk1-wk0)/float64(n), "ms-worker", nil)
		xced += ms(wk1-wk0) / float64(n)
	}
	report(b, "  CPU per job: the job's processes", jobsCPU, "ms-jobs", nil)
	report(b, "  CPU per job in all", xced+jobsCPU, "ms", atMost(2.5))
	if machine.cpuPerJob > 0 {
		report(b, "  CPU per job in all, times the xargs row's", (xced+jobsCPU)/machine.cpuPerJob, "x-xargs-cpu", nil)
	}
}

// procCPU is the user and system CPU time process pid has used, and that
// of its children it has waited for, from /proc/PID/stat.
func procCPU(b *testing.B, pid int) (self, children time.Duration) {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	tick := func(i int) time.Duration {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		return time.Duration(v) * 10 * time.Millisecond
	}
	return tick(11) + tick(12), tick(13) + tick(14)
}

// endIdleShepherds ends the shepherds that pid keeps idle for the next
// job (lib/worker/reuse.go) and waits until pid has reaped them: the
// CPU of a shepherd, and of the jobs it ran, is its parent's children's
// only once it is reaped.
func endIdleShepherds(b *testing.B, pid int) {
	b.Helper()
	kids := shepherdsOf(pid)
	for _, k := range kids {
		syscall.Kill(k, syscall.SIGKILL)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, k := range kids {
		for ; ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat("/proc/" + strconv.Itoa(k)); err != nil {
				break // reaped
			}
			if time.Now().After(deadline) {
				b.Fatalf("shepherd %d of %d not reaped", k, pid)
			}
		}
	}
}

// shepherdsOf lists pid's children that run a shepherd.
func shepherdsOf(pid int) []int {
	dirs, _ := os.ReadDir("/proc")
	var kids []int
	for _, d := range dirs {
		k, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if ids, err := jobexec.ReadProcIDs(k); err != nil || ids.PPid != pid {
			continue
		}
		if cmdline, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline"); !strings.Contains(string(cmdline), "shepherd") {
			continue
		}
		kids = append(kids, k)
	}
	return kids
}

// finishedHistory makes the controller hold n more finished jobs: arrays
// of held `true` (1,000 elements each) killed while held, which ends
// them (EXIT) through the controller's own path without running them.
func (c *benchCluster) finishedHistory(b *testing.B, n int) {
	const each = 1000 // the default MAX_JOB_ARRAY_SIZE
	for left := n; left > 0; left -= each {
		k := min(left, each)
		id := c.submit("-H", "-J", fmt.Sprintf("h[1-%d]", k), "-o", "/dev/null", "true")
		c.timed("bkill", strconv.FormatInt(id, 10))
	}
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if got := c.count()[api.JobState_EXIT]; got >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the history of %d finished jobs was not made in 5 minutes", n)
		}
	}
}

// settle waits until the controller is at rest: under 5 % of a core
// over half a second (at most 2 minutes). Making the history is a burst
// of 100,000 writes seconds before the short jobs, and Badger's flushes
// and compactions of it, and the collector's work on it, would otherwise
// be counted in the jobs' figures: a site's history grows over weeks.
func (c *benchCluster) settle(b *testing.B) {
	const period = 500 * time.Millisecond
	prev, _ := procCPU(b, c.cmd.Process.Pid)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		time.Sleep(period)
		now, _ := procCPU(b, c.cmd.Process.Pid)
		if now-prev < period/20 {
			return
		}
		prev = now
	}
	b.Logf("the controller was not at rest 2 minutes after the history was made")
}

// newBenchWorkerCluster starts a controller that runs no jobs itself and
// serves workers on a loopback port, and one `xced worker` of the given
// slots; it returns when the worker's host is ok.
func newBenchWorkerCluster(b *testing.B, slots int) (*benchCluster, *exec.Cmd) {
	addr := freePort(b)
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	conf := filepath.Join(b.TempDir(), "cluster.toml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "[cluster]\n\n[hosts.%s]\nserver = false\n", host), 0o644); err != nil {
		b.Fatal(err)
	}
	c := newBenchCluster(b, "--listen", addr, "--config", conf)
	dir := filepath.Join(c.dir, "w-hw")
	w := exec.Command(filepath.Join(binDir, "xced"), "worker", "--controller", addr,
		"--token-file", filepath.Join(c.state, "cluster.token"), "--dir", dir, "--name", "hw",
		"--slots", strconv.Itoa(slots), "--load-interval", "1s")
	parent := "xce-bench-w-" + filepath.Base(c.dir)
	w.Env = append(os.Environ(), "XCE_CGROUP_PARENT="+parent)
	var log bytes.Buffer
	w.Stdout, w.Stderr = &log, &log
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stopProcess(w)
		testenv.RemoveCgroupTree(parent)
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var out bytes.Buffer
		c.run(&out, "bhosts", "-w")
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "hw" && f[1] == "ok" {
				return c, w
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("the worker did not join in 30 s:\n%s\nxced:\n%s", log.String(), c.logTail())
		}
	}
}

// shepherdLoop runs n `true` jobs through lib/worker and the shepherd
// binary xced uses, at most inFlight at once, each started as soon as one
// ends: the design's own limit, without a controller. It returns the wall
// time and the CPU the loop, the shepherds and the jobs used.
func shepherdLoop(b *testing.B, n, inFlight int) (time.Duration, time.Duration) {
	done := make(chan worker.Report, n)
	parent := fmt.Sprintf("xce-bench-shep-%d", os.Getpid())
	defer testenv.RemoveCgroupTree(parent)
	w, err := worker.New(worker.Config{
		Host: "hostA", ClusterName: "bench", RunDir: b.TempDir(),
		Shepherd:  []string{filepath.Join(binDir, "xce-shepherd")},
		KillGrace: time.Second, TerminateInterval: time.Second,
		CgroupParent: parent,
		Report: func(r worker.Report) {
			if r.Finished != nil || r.Err != nil {
				done <- r
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	dir := b.TempDir()
	cpu0 := testenv.CPUTime()
	began := time.Now()
	var wg sync.WaitGroup
	start := func(i int) {
		j := &api.Job{JobId: int64(i), State: api.JobState_RUN, SubmitTime: time.Now().UnixNano(),
			ExecHosts: []*api.HostSlots{{Host: "hostA", Slots: 1}},
			Spec: &api.JobSpec{Command: "true", SubmitCwd: dir, Env: []string{"PATH=/usr/bin:/bin"},
				Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()), OutputFile: "/dev/null"}}
		if err := w.Start(j); err != nil {
			b.Fatal(err)
		}
	}
	next := 1
	for ; next <= inFlight && next <= n; next++ {
		start(next)
	}
	for ended := 0; ended < n; ended++ {
		r := <-done
		if r.Err != nil {
			b.Fatalf("job %d: %v", r.JobID, r.Err)
		}
		wg.Add(1)
		go func(id int64) { defer wg.Done(); w.Remove(id, 0) }(r.JobID)
		if next <= n {
			start(next)
			next++
		}
	}
	d := time.Since(began)
	wg.Wait()
	w.Close() // the idle shepherds reaped: their CPU and their jobs' counted
	return d, testenv.CPUTime() - cpu0
}
