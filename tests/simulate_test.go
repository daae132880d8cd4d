package tests

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/client"
)

// TestSimulateMatchesLive is issue 29's validation: a 200-job trace,
// scaled down a hundredfold (runs of 50 to 150 s become 0.5 to 1.5 s),
// runs on a real xced as real `sleep` jobs submitted with bsub at the
// trace's times, and the trace of what really happened (each job's
// submission and run time as the controller recorded them) is replayed by
// `xced simulate`. Every job must start in the simulation when it started
// live, within one cycle plus 5 % of its wait.
//
// The live controller runs a cycle on each submission and each job end,
// as the simulation does, but it sees them late: a submission or a job's
// end is acted on once the report has arrived and a cycle has run (its
// 20 ms pause between cycles, process starts on a busy host). The test
// measures that dispatch latency (the median, from a job's end to the
// start of a waiting job it made room for) and replays it: each job is
// submitted that much later and holds its slots that much longer. What
// remains is the latency's spread, which adds up along a chain of jobs
// waiting for each other (the 5 % of the wait), and one cycle (see
// allowance below).
//
// Every job asks for two slots: with jobs of different sizes a queue
// without reservation lets small jobs overtake a large one whenever the
// slots freed happen to suit them, so a few milliseconds decide which
// job starts, and a live run and its replay part ways for reasons that
// are not the scheduler's (lib/sim's own tests cover mixed sizes,
// reservation and backfill against hand-worked schedules).
func TestSimulateMatchesLive(t *testing.T) {
	const (
		jobs  = 200
		slots = 16
		scale = 100 // trace seconds per live second
	)
	c := newCluster(t, "--slots", fmt.Sprint(slots))
	t.Setenv("XCE_DIR", filepath.Join(c.dir, "state"))

	// The trace, in its own seconds: arrivals about every 11 s, runs of
	// 50 to 150 s, two slots each. The load is about 1.1 times the
	// slots: a queue builds up.
	r := rand.New(rand.NewPCG(29, 300))
	type job struct {
		at  time.Duration // live submission offset
		run time.Duration // live sleep
		n   int
		id  int64
	}
	js := make([]job, jobs)
	var at float64
	for i := range js {
		at += r.Float64() * 22
		js[i] = job{
			at:  time.Duration(at / scale * float64(time.Second)),
			run: time.Duration((50 + r.Float64()*100) / scale * float64(time.Second)).Round(time.Millisecond),
			n:   2,
		}
	}

	// Submit each job at its time from a few goroutines, so that a slow
	// bsub does not delay the next one.
	begin := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	work := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range work {
				time.Sleep(time.Until(begin.Add(js[i].at)))
				out := c.must("", "bsub", "-n", fmt.Sprint(js[i].n), "-o", "/dev/null", "sleep", fmt.Sprintf("%.3f", js[i].run.Seconds()))
				m := submittedRE.FindStringSubmatch(out)
				if m == nil {
					t.Errorf("bsub said %q", out)
					continue
				}
				id, _ := strconv.ParseInt(m[1], 10, 64)
				mu.Lock()
				js[i].id = id
				mu.Unlock()
			}
		})
	}
	for i := range js {
		work <- i
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		return
	}

	// Wait for the end, then read what happened.
	cl, err := client.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var done []*api.Job
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := cl.Query(ctx, &api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all"})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		done = done[:0]
		for _, j := range res.Jobs {
			if j.State == api.JobState_DONE {
				done = append(done, j)
			} else if j.State == api.JobState_EXIT {
				t.Fatalf("job %d exited: %v", j.JobId, j)
			}
		}
		if len(done) == jobs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs done after two minutes", len(done), jobs)
		}
		time.Sleep(500 * time.Millisecond)
	}
	slices.SortFunc(done, func(a, b *api.Job) int { return int(a.JobId - b.JobId) })
	t0 := done[0].SubmitTime
	for _, j := range done {
		t0 = min(t0, j.SubmitTime)
	}
	// The live dispatch latency: for each job, from the last moment it
	// could have started (its submission, or the latest job end before
	// its start, which freed the slots it may have waited for) to its
	// start. Each job is measured on its own, so a slow stretch cannot
	// carry over to the jobs after it. Its mean is what a chain of jobs
	// accumulates.
	ends := make([]int64, 0, len(done))
	for _, j := range done {
		ends = append(ends, j.EndTime)
	}
	slices.Sort(ends)
	var gaps []int64
	for _, j := range done {
		from := j.SubmitTime
		if k, _ := slices.BinarySearch(ends, j.StartTime+1); k > 0 {
			from = max(from, ends[k-1])
		}
		gaps = append(gaps, max(j.StartTime-from, 0))
	}
	var sum int64
	for _, g := range gaps {
		sum += g
	}
	latency := float64(sum) / float64(len(gaps)) / 1e9
	slices.Sort(gaps)
	lat := int64(latency * 1e9)
	live := map[int64]*api.Job{}
	var swf strings.Builder
	fmt.Fprintf(&swf, "; MaxProcs: %d\n", slots)
	for _, j := range done {
		live[j.JobId] = j
		sec := func(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', 6, 64) }
		fmt.Fprintf(&swf, "%d %s -1 %s %d -1 -1 %d -1 -1 1 1 -1 -1 0 -1 -1 -1\n",
			j.JobId, sec(j.SubmitTime-t0+lat), sec(j.EndTime-j.StartTime+lat), j.AllocSlots, j.AllocSlots)
	}
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "live.swf")
	if err := os.WriteFile(tracePath, []byte(swf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(binDir, "xced"), "simulate", "--trace", tracePath,
		"--hosts", fmt.Sprintf("1x%d", slots), "--out", filepath.Join(dir, "out")).CombinedOutput()
	if err != nil {
		t.Fatalf("xced simulate: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "out", "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != jobs+1 {
		t.Fatalf("jobs.csv has %d rows, want %d", len(rows), jobs+1)
	}
	// One cycle: a dispatch's latency at its spread (the 95th
	// percentile), counted twice: once for the job's own dispatch, once
	// for the spread the jobs before it in a busy period left (measured:
	// the worst job is off by about two of them, whatever its own wait).
	allowance := 2 * float64(gaps[len(gaps)*95/100]) / 1e9
	var worst, sumDiff, sumWait float64
	bad := 0
	for _, row := range rows[1:] {
		id, _ := strconv.ParseInt(row[0], 10, 64)
		simStart, err1 := strconv.ParseFloat(row[5], 64)
		simWait, err2 := strconv.ParseFloat(row[7], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("jobs.csv row %q", row)
		}
		j := live[id]
		liveStart := float64(j.StartTime-t0) / 1e9
		liveWait := float64(j.StartTime-j.SubmitTime) / 1e9
		diff := math.Abs(simStart - liveStart)
		worst = max(worst, diff)
		sumDiff += diff
		sumWait += liveWait
		if diff > allowance+0.05*liveWait {
			bad++
			if bad <= 10 {
				t.Errorf("job %d: started at +%.3f s live, +%.3f s simulated (live wait %.3f s, simulated %.3f s)", id, liveStart, simStart, liveWait, simWait)
			}
		}
	}
	if bad > 0 {
		// What happened live at the start, for the reader of a failure.
		var b strings.Builder
		for _, j := range done[:min(40, len(done))] {
			fmt.Fprintf(&b, "job %d: n=%d submit +%.3f start +%.3f end +%.3f\n", j.JobId, j.AllocSlots,
				float64(j.SubmitTime-t0)/1e9, float64(j.StartTime-t0)/1e9, float64(j.EndTime-t0)/1e9)
		}
		t.Logf("live:\n%s", b.String())
	}
	t.Logf("dispatch latency: mean %.3f s, median %.3f s, p95 %.3f s", latency, float64(gaps[len(gaps)/2])/1e9, allowance/2)
	t.Logf("%d jobs in %v live; start difference mean %.3f s, worst %.3f s; mean live wait %.3f s; %d outside the allowance\n%s",
		jobs, time.Since(begin).Round(time.Second), sumDiff/jobs, worst, sumWait/jobs, bad, out)
	if sumWait/jobs < 1 {
		t.Errorf("a weak test: mean wait %.3f s, no queue built up", sumWait/jobs)
	}
}

// TestSimulateCommand: xced simulate's outputs are the same bytes on two
// runs, apart from the speed line, which is the last; --compare shows
// both configurations and the difference per queue and per user; a
// malformed line is named with its file and line and skipped.
func TestSimulateCommand(t *testing.T) {
	dir := t.TempDir()
	var swf strings.Builder
	swf.WriteString("; MaxProcs: 8\n")
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&swf, "%d %d -1 %d %d -1 -1 %d %d -1 1 %d -1 -1 0 -1 -1 -1\n", i, i*5, 20+i%70, 1+i%3, 1+i%3, 100, 1+i%4)
	}
	swf.WriteString("201 1000 -1 oops\n")
	tracePath := filepath.Join(dir, "t.swf")
	os.WriteFile(tracePath, []byte(swf.String()), 0o644)
	conf := func(name string, u1 int) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(fmt.Sprintf("[cluster]\nname = \"t\"\ndefault_queue = \"fair\"\n[queues.fair]\npriority = 30\nfairshare = { u1 = %d, default = 1 }\n", u1)), 0o644)
		return p
	}
	a, b := conf("a.toml", 1), conf("b.toml", 5)
	run := func(args ...string) (string, string) {
		cmd := exec.Command(filepath.Join(binDir, "xced"), append([]string{"simulate", "--trace", tracePath}, args...)...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("xced simulate %q: %v\n%s", args, err, errb.String())
		}
		return out.String(), errb.String()
	}
	var outs [2]string
	for i := range outs {
		out, errs := run("--config", a, "--hosts", "4x2", "--out", filepath.Join(dir, fmt.Sprint("o", i)))
		if !strings.Contains(errs, "t.swf:202:") {
			t.Errorf("no file:line for the malformed line: %q", errs)
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if !strings.HasPrefix(lines[len(lines)-1], "Speed:") {
			t.Fatalf("last line %q, want the speed", lines[len(lines)-1])
		}
		outs[i] = strings.Join(lines[:len(lines)-1], "\n")
		if !strings.Contains(outs[i], "1 malformed lines") {
			t.Errorf("summary does not count the malformed line:\n%s", out)
		}
	}
	if outs[0] != outs[1] {
		t.Errorf("two runs print different summaries:\n%s\n---\n%s", outs[0], outs[1])
	}
	for _, f := range []string{"jobs.csv", "summary.json"} {
		x, _ := os.ReadFile(filepath.Join(dir, "o0", f))
		y, _ := os.ReadFile(filepath.Join(dir, "o1", f))
		if len(x) == 0 || string(x) != string(y) {
			t.Errorf("%s differs between two runs (or is empty)", f)
		}
	}
	out, _ := run("--config", a, "--hosts", "4x2", "--compare", b)
	for _, want := range []string{"a.toml", "b.toml", "DIFFERENCE", "queue fair", "user u1", "user u4"} {
		if !strings.Contains(out, want) {
			t.Errorf("--compare output lacks %q:\n%s", want, out)
		}
	}
}

// TestSimulateTemplates: `xced simulate` with a configuration that has a
// template provisions instances for a burst and reports the template's
// instance-hours and cost, in the summary and in summary.json, the same
// bytes on two runs.
func TestSimulateTemplates(t *testing.T) {
	dir := t.TempDir()
	var swf strings.Builder
	swf.WriteString("; MaxProcs: 2\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&swf, "%d 0 -1 600 1 -1 -1 1 3600 -1 1 1 1 -1 -1 -1 -1 -1\n", i)
	}
	tracePath := filepath.Join(dir, "t.swf")
	os.WriteFile(tracePath, []byte(swf.String()), 0o644)
	confPath := filepath.Join(dir, "xce.toml")
	os.WriteFile(confPath, []byte(`[cluster]
name = "t"
default_queue = "normal"
[hosts.a]
slots = 2
[queues.normal]
rc_hosts = ["cpu2"]
[providers.local]
kind = "local"
[templates.cpu2]
provider = "local"
max = 2
slots = 2
idle_time = "10m"
sim_boot_time = "2m"
price = 0.5
`), 0o644)
	var outs [2]string
	for i := range outs {
		out := filepath.Join(dir, fmt.Sprint("o", i))
		cmd := exec.Command(filepath.Join(binDir, "xced"), "simulate", "--trace", tracePath, "--config", confPath, "--out", out)
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("xced simulate: %v", err)
		}
		s := string(b)
		outs[i] = s[:strings.LastIndex(s, "Speed:")]
		js, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		if !strings.Contains(string(js), `"instances_started": 2,`) || !strings.Contains(string(js), `"instance_hours": 0.7333333333333333,`) {
			t.Errorf("summary.json lacks the template's figures:\n%s", js)
		}
		csv, _ := os.ReadFile(filepath.Join(out, "jobs.csv"))
		if n := strings.Count(string(csv), ",cpu2-"); n != 4 {
			t.Errorf("%d jobs ran on instances, want 4:\n%s", n, csv)
		}
	}
	if !strings.Contains(outs[0], "cpu2             2        2            0.73       0.50         0.37") {
		t.Errorf("the summary lacks the template line:\n%s", outs[0])
	}
	if outs[0] != outs[1] {
		t.Errorf("two runs print different summaries:\n%s\n---\n%s", outs[0], outs[1])
	}
}
