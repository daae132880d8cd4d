package sim

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xce/lib/trace"
)

// schedule is a run's jobs.csv and summary, the bytes a user sees.
func schedule(t *testing.T, tr *trace.Trace, opt Options) []byte {
	t.Helper()
	r, err := Run(tr, opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := Summarise(r)
	if err := WriteFiles(dir, r, s); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, f := range []string{"jobs.csv", "summary.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	s.WriteText(&out)
	fmt.Fprintf(&out, "cycles %d, preemptions %d\n", r.Cycles, r.Preemptions)
	return out.Bytes()
}

// mixedQueues: fairshare, slot reservation with backfill, preemption, a
// per-user queue limit, a per-host queue limit and a limit on memory,
// on 16 hosts of 4 slots.
const mixedQueues = `
[cluster]
name = "t"
default_queue = "q0"

[queues.q0]
priority = 30
fairshare = { default = 1, u1 = 3 }

[queues.q1]
priority = 40
slot_reserve = true
preemptive = ["q2"]

[queues.q2]
priority = 20
max_slots_per_user = 6
max_slots_per_host = 3

[[limits]]
name = "memcap"
per_user = ["all"]
mem = 200000
`

// mixedTrace is n jobs of the three queues with memory requirements.
func mixedTrace(n int, seed uint64) string {
	var b strings.Builder
	x := seed*2654435761 + 1
	rnd := func(k int) int {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x % uint64(k))
	}
	t := 0
	for i := 1; i <= n; i++ {
		t += rnd(40)
		run := 1 + rnd(600)
		slots := 1 << rnd(4)
		mem := -1
		if rnd(2) == 0 {
			mem = 1024 * (1 + rnd(8000)) // KB per processor
		}
		fmt.Fprintf(&b, "%d %d -1 %d %d -1 -1 %d %d %d 1 %d -1 -1 %d -1 -1 -1\n",
			i, t, run, slots, slots, run+rnd(300), mem, 1+rnd(7), rnd(3))
	}
	return b.String()
}

// TestLedgerSameSchedule: a replay with the ledger (the running jobs'
// charges kept from one cycle to the next) and the pending jobs that
// cannot fit left out of the snapshot writes the same bytes as one whose
// every cycle charges every running job and sees every pending one: the
// bundled example on 256 hosts of one slot and on 64 hosts of four, and
// a trace with fairshare, slot reservation, preemption and limits.
func TestLedgerSameSchedule(t *testing.T) {
	for _, c := range sameScheduleCases(t) {
		full := c.opt
		full.full = true
		want := schedule(t, c.tr, full)
		got := schedule(t, c.tr, c.opt)
		if !bytes.Equal(want, got) {
			t.Errorf("%s: the schedule differs with the ledger", c.name)
		}
		if c.opt.Config != nil && bytes.Contains(got, []byte(", preemptions 0\n")) {
			t.Errorf("%s: a weak test: no preemption", c.name)
		}
	}
}

// TestPendNeedSameSchedule: a replay that keeps the pending jobs' fewest
// slots as jobs join and leave pending (eng.pendNeed) writes the same
// bytes, cycles counted included, as one that counts them each cycle:
// a stale figure skips a cycle that would place a job, or runs one that
// places none.
func TestPendNeedSameSchedule(t *testing.T) {
	defer func() { noPendNeed = false }()
	for _, c := range sameScheduleCases(t)[1:] {
		noPendNeed = true
		want := schedule(t, c.tr, c.opt)
		noPendNeed = false
		if got := schedule(t, c.tr, c.opt); !bytes.Equal(want, got) {
			t.Errorf("%s: the schedule differs with the pending jobs' fewest slots kept", c.name)
		}
	}
}

// sameScheduleCase is a replay the tests above run two ways.
type sameScheduleCase struct {
	name string
	tr   *trace.Trace
	opt  Options
}

// sameScheduleCases are the bundled example on 256 hosts of one slot and
// on 64 of four, and a trace with fairshare, slot reservation,
// preemption and limits on 16 hosts of four.
func sameScheduleCases(t *testing.T) []sameScheduleCase {
	t.Helper()
	ex, err := trace.Read(filepath.Join("..", "..", "examples", "lublin-10k-256.swf"), "")
	if err != nil {
		t.Fatal(err)
	}
	// A part of the example keeps the tests short; the whole of it is
	// compared by make bench's run (BenchmarkSimulate's check).
	ex.Jobs = ex.Jobs[:2000]
	mixed := mustSWF(t, mixedTrace(800, 5))
	return []sameScheduleCase{
		{"example on 256x1", ex, Options{Hosts: 256, Slots: 1}},
		{"example on 64x4", ex, Options{Hosts: 64, Slots: 4}},
		{"mixed on 16x4", mixed, Options{Config: mustConfig(t, mixedQueues), Hosts: 16, Slots: 4}},
	}
}
