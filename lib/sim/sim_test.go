package sim

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xce/lib/config"
	"xce/lib/trace"
)

func mustConfig(t testing.TB, text string) *config.Config {
	t.Helper()
	c, err := config.Parse("test.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustSWF(t testing.TB, text string) *trace.Trace {
	t.Helper()
	tr, err := trace.ReadSWF(strings.NewReader(text), "test.swf")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// swfLine is one SWF job: id, submit, run, processors, requested time,
// user, queue; the other fields absent (-1).
func swfLine(id, submit, run, procs, req, user, queue int) string {
	return fmt.Sprintf("%d %d -1 %d %d -1 -1 %d %d -1 1 %d -1 -1 %d -1 -1 -1\n", id, submit, run, procs, procs, req, user, queue)
}

// starts maps job id to start offset in seconds (-1: never).
func starts(r *Result) map[int64]float64 {
	out := map[int64]float64{}
	for _, j := range r.Jobs {
		s := -1.0
		if j.Start >= 0 {
			s = j.Start.Seconds()
		}
		out[r.Trace.Jobs[j.Trace].ID] = s
	}
	return out
}

// twoQueues: a reserving high-priority queue q1 and a fairshare queue q2
// on one host of 4 slots.
const twoQueues = `
[cluster]
name = "t"
default_queue = "q2"

[hosts.a]
slots = 4

[queues.q1]
priority = 40
slot_reserve = true

[queues.q2]
priority = 30
fairshare = { u1 = 1, u2 = 1 }
`

// TestScheduleAsExpected: a small trace with slot reservation, backfill
// and fairshare gives the schedule worked out by hand from the rules
// lib/sched's tests hold it to (a reserved job starts no later than its
// estimated start; a job runs beside a reservation only when its run limit
// ends it before; in a fairshare queue the account with the higher
// dynamic priority goes first).
func TestScheduleAsExpected(t *testing.T) {
	tr := mustSWF(t, "; MaxProcs: 4\n"+
		swfLine(1, 0, 100, 2, 100, 1, 2)+ // starts at 0, ends at 100
		swfLine(2, 0, 30, 1, 100, 1, 2)+ // starts at 0, ends at 30
		swfLine(3, 10, 50, 4, 60, 2, 1)+ // reserves the host from 100 (jobs 1 and 2's limits)
		swfLine(4, 10, 200, 1, 200, 2, 2)+ // would overrun the reservation: waits for job 3
		swfLine(5, 10, 80, 1, 80, 1, 2)+ // ends by 90: backfills at once
		swfLine(6, 40, 20, 1, 30, 1, 2)+ // u1 holds 3 slots, u2 none: u2's job 7 goes first
		swfLine(7, 40, 20, 1, 50, 2, 2)) // starts at 40 on job 2's slot; 6 takes it at 60
	r, err := Run(tr, Options{Config: mustConfig(t, twoQueues)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]float64{1: 0, 2: 0, 3: 100, 4: 150, 5: 10, 6: 60, 7: 40}
	got := starts(r)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("job %d started at %v, want %v", id, got[id], w)
		}
	}
}

// TestRunLimitAndDependency: a job past its run limit is killed there
// (and counted); a job that depends on another is submitted its think
// time after that one ends, and one that depends on a killed job never
// runs (done() is never met).
func TestRunLimitAndDependency(t *testing.T) {
	tr := mustSWF(t, "; MaxProcs: 2\n"+
		"1 0 -1 100 1 -1 -1 1 50 -1 1 1 -1 -1 0 -1 -1 -1\n"+ // killed at 50
		"2 0 -1 10 1 -1 -1 1 -1 -1 1 1 -1 -1 0 -1 -1 -1\n"+ // ends at 10
		"3 0 -1 10 1 -1 -1 1 -1 -1 1 1 -1 -1 0 -1 2 5\n"+ // submitted at 15
		"4 0 -1 10 1 -1 -1 1 -1 -1 1 1 -1 -1 0 -1 1 5\n") // never
	r, err := Run(tr, Options{Hosts: 2, Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarise(r)
	if s.Killed != 1 || s.Jobs != 3 || s.Skipped != 1 {
		t.Errorf("killed %d, jobs %d, skipped %d; want 1, 3, 1", s.Killed, s.Jobs, s.Skipped)
	}
	got := starts(r)
	if got[3] != 15 || got[4] != -1 || r.Jobs[0].End != 50*time.Second {
		t.Errorf("job 3 at %v (want 15), job 4 at %v (want never), job 1 ended at %v (want 50s)", got[3], got[4], r.Jobs[0].End)
	}
}

// TestSkipsAndWarnings: a job larger than the cluster is skipped and
// counted; a trace queue the configuration lacks maps to the default
// queue with one warning whatever the number of its jobs.
func TestSkipsAndWarnings(t *testing.T) {
	tr := mustSWF(t, swfLine(1, 0, 10, 8, -1, 1, 7)+swfLine(2, 0, 10, 1, -1, 1, 7)+swfLine(3, 1, 10, 1, -1, 2, 7))
	var warns []string
	r, err := Run(tr, Options{Config: mustConfig(t, twoQueues), Warn: func(s string) { warns = append(warns, s) }})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarise(r)
	if s.Skipped != 1 || s.Jobs != 2 {
		t.Errorf("skipped %d, jobs %d; want 1, 2", s.Skipped, s.Jobs)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "q7") {
		t.Errorf("warnings %q, want one about q7", warns)
	}
	if r.Jobs[1].Queue != "q2" {
		t.Errorf("job 2 in queue %q, want the default q2", r.Jobs[1].Queue)
	}
}

// TestMalformedInput: malformed lines are counted and skipped, never a
// panic; the rest replays.
func TestMalformedInput(t *testing.T) {
	tr := mustSWF(t, "; MaxProcs: 4\n"+swfLine(1, 0, 10, 1, -1, 1, 0)+
		"2 0 -1 x 1\n"+ // not a number
		"3 0 -1 10 1 -1 -1 1\n"+ // too few fields
		"4 0 -1 -5 1 -1 -1 1 -1 -1 1 1 -1 -1 0 -1 -1 -1\n"+ // negative run time
		swfLine(5, 3, 10, 2, -1, 2, 0))
	r, err := Run(tr, Options{Hosts: 4, Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarise(r)
	if s.Malformed != 2 || s.Skipped != 1 || s.Jobs != 2 {
		t.Errorf("malformed %d, skipped %d, jobs %d; want 2, 1, 2", s.Malformed, s.Skipped, s.Jobs)
	}
}

// genTrace is a deterministic synthetic trace: n jobs of up to maxSlots
// processors, users 1..users, arrivals about every gap seconds.
func genTrace(n, users, maxSlots int, gap float64, seed uint64) string {
	var b strings.Builder
	x := seed*2654435761 + 1
	rnd := func(k int) int {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x % uint64(k))
	}
	t := 0.0
	for i := 1; i <= n; i++ {
		t += float64(rnd(int(2*gap*1000)+1)) / 1000
		run := 1 + rnd(600)
		slots := 1 << rnd(4)
		slots = min(slots, maxSlots)
		req := run + rnd(300)
		fmt.Fprintf(&b, "%d %d -1 %d %d -1 -1 %d %d -1 1 %d -1 -1 %d -1 -1 -1\n", i, int(t), run, slots, slots, req, 1+rnd(users), rnd(3))
	}
	return b.String()
}

// TestDeterminism: two runs of the same input write the same bytes.
func TestDeterminism(t *testing.T) {
	conf := mustConfig(t, `
[cluster]
name = "t"
default_queue = "q0"
[queues.q0]
priority = 30
fairshare = { default = 1, u1 = 3 }
[queues.q1]
priority = 40
slot_reserve = true
[queues.q2]
priority = 20
max_slots_per_user = 6
`)
	text := genTrace(2000, 7, 16, 20, 3)
	var outs [2][2][]byte
	for i := range outs {
		r, err := Run(mustSWF(t, text), Options{Config: conf, Hosts: 16, Slots: 4})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		s := Summarise(r)
		if err := WriteFiles(dir, r, s); err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		s.WriteText(&text)
		csvb, _ := os.ReadFile(filepath.Join(dir, "jobs.csv"))
		js, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
		outs[i] = [2][]byte{csvb, append(js, text.Bytes()...)}
		if s.Jobs < 1900 || s.MeanWait == 0 {
			t.Fatalf("a weak test: %+v", s.Figures)
		}
	}
	if !bytes.Equal(outs[0][0], outs[1][0]) || !bytes.Equal(outs[0][1], outs[1][1]) {
		t.Error("two runs of the same input differ")
	}
}

// TestCompareFairshare: with two users backlogged on a fairshare queue,
// shares of 1:1 give each about half the slots while both wait, and 3:1
// give the first about (1+n1)/3 = (1+n2)/1 of them, LSF's dynamic
// priority shares/((1+slots)*RUN_JOB_FACTOR + run*RUN_TIME_FACTOR)
// balanced: 6.5 of 8 slots without history, 6 with it (run time in
// proportion to the slots), so between 75 % and 81 %.
func TestCompareFairshare(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 400; i++ {
		// Alternate users, all submitted at once, 100 s each.
		b.WriteString(swfLine(i+1, 0, 100, 1, 100, 1+i%2, 0))
	}
	conf := func(u1 int) *config.Config {
		return mustConfig(t, fmt.Sprintf(`
[cluster]
name = "t"
default_queue = "fair"
[queues.fair]
priority = 30
fairshare = { u1 = %d, u2 = 1 }
`, u1))
	}
	share := func(u1 int) float64 {
		r, err := Run(mustSWF(t, b.String()), Options{Config: conf(u1), Hosts: 8, Slots: 1})
		if err != nil {
			t.Fatal(err)
		}
		// While both users have jobs pending: until the first runs out.
		lastStart := map[string]time.Duration{}
		for _, j := range r.Jobs {
			u := r.Trace.Jobs[j.Trace].User
			lastStart[u] = max(lastStart[u], j.Start)
		}
		until := min(lastStart["u1"], lastStart["u2"])
		n1, n := 0, 0
		for _, j := range r.Jobs {
			if j.Start < until {
				n++
				if r.Trace.Jobs[j.Trace].User == "u1" {
					n1++
				}
			}
		}
		return float64(n1) / float64(n)
	}
	t.Logf("u1 share of the slots while both wait: %.3f with 1:1, %.3f with 3:1", share(1), share(3))
	if s := share(1); s < 0.45 || s > 0.55 {
		t.Errorf("shares 1:1: u1 got %.2f of the slots, want about 0.5", s)
	}
	if s := share(3); s < 0.72 || s > 0.83 {
		t.Errorf("shares 3:1: u1 got %.2f of the slots, want 0.75 to 0.81", s)
	}
}

// TestCompareOutput: WriteCompare lists both runs and the difference per
// queue and per user.
func TestCompareOutput(t *testing.T) {
	a := &Summary{Figures: Figures{Jobs: 2, MeanWait: 10}, Users: []Group{{Name: "u1", Figures: Figures{Jobs: 2, MeanWait: 10}}}}
	b := &Summary{Figures: Figures{Jobs: 2, MeanWait: 4}, Users: []Group{{Name: "u1", Figures: Figures{Jobs: 2, MeanWait: 4}}}}
	var out bytes.Buffer
	WriteCompare(&out, "a.toml", "b.toml", a, b)
	for _, want := range []string{"a.toml", "b.toml", "DIFFERENCE", "user u1", "-6.00"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("compare output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCSV: jobs.csv has the interface's header and one line per job.
func TestCSV(t *testing.T) {
	r, err := Run(mustSWF(t, "; MaxProcs: 4\n"+swfLine(1, 0, 10, 2, -1, 1, 0)+swfLine(2, 5, 10, 4, -1, 1, 0)), Options{Hosts: 2, Slots: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteFiles(dir, r, Summarise(r)); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(filepath.Join(dir, "jobs.csv"))
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		strings.Split(CSVHeader, ","),
		{"1", "u1", "normal", "2", "0", "0", "10", "0", "10", "2*h1"},
		{"2", "u1", "normal", "4", "5", "10", "20", "5", "10", "2*h1:2*h2"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("jobs.csv:\n%v\nwant\n%v", rows, want)
	}
}
