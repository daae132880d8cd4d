package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// tokens: one host of 4 slots, a licence of 1 token that a provider lends
// 2 more of (after 1m), and a queue whose jobs each need a token.
const tokens = `
[cluster]
name = "t"
default_queue = "normal"

[hosts.a]
slots = 4

[resources.lic]
total = 1
provider = "local"
borrow_max = 2
idle_time = "10m"
sim_lend_delay = "1m"

[providers.local]
kind = "local"

[queues.normal]
res_req = "rusage[lic=1]"
`

// TestBorrowBurst: four jobs of 600 s at once: one takes the token; the
// others make the cycle borrow 2 (never more than borrow_max), lent after
// the 1m delay, which run two of them; the last starts when the first
// ends. The loan is idle once jobs 2 and 3 end (660 s: job 4 fits in the
// total) and goes back 10m later: 2 units from 60 s to 1260 s, 2400
// unit-seconds.
func TestBorrowBurst(t *testing.T) {
	var sb strings.Builder
	for i := 1; i <= 4; i++ {
		sb.WriteString(swfLine(i, 0, 600, 1, 3600, 1, 1))
	}
	tr := mustSWF(t, sb.String())
	run := func() (*Result, []byte, []byte) {
		r, err := Run(tr, Options{Config: mustConfig(t, tokens)})
		if err != nil {
			t.Fatal(err)
		}
		s := Summarise(r)
		var text bytes.Buffer
		s.WriteText(&text)
		js, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return r, text.Bytes(), js
	}
	r, text, js := run()
	st := starts(r)
	for id, want := range map[int64]float64{1: 0, 2: 60, 3: 60, 4: 600} {
		if st[id] != want {
			t.Errorf("job %d started at %v, want %v", id, st[id], want)
		}
	}
	if len(r.Borrows) != 1 {
		t.Fatalf("borrows: %+v", r.Borrows)
	}
	b := r.Borrows[0]
	if b.Loans != 1 || b.Units != 2 || b.UnitTime != 2400*time.Second {
		t.Errorf("%d loans of %d units for %v, want 1 of 2 for 2400s", b.Loans, b.Units, b.UnitTime)
	}
	if h := b.UnitHours(); math.Abs(h-2400.0/3600) > 1e-12 {
		t.Errorf("unit-hours %v", h)
	}
	if r.Clock != 1260*time.Second {
		t.Errorf("the run ended at %v, want 1260s (the loan's return)", r.Clock)
	}
	if !bytes.Contains(text, []byte("RESOURCE     BORROW_MAX  LOANS UNITS_BORROWED  UNIT_HOURS\nlic                   2      1              2        0.67\n")) {
		t.Errorf("summary lacks the resource line:\n%s", text)
	}
	if !bytes.Contains(js, []byte(`"borrowed":[{"name":"lic","borrow_max":2,"loans":1,"units_borrowed":2,"unit_hours":0.6666`)) {
		t.Errorf("summary.json lacks the loans: %s", js)
	}
	_, text2, js2 := run()
	if !bytes.Equal(text, text2) || !bytes.Equal(js, js2) {
		t.Error("two runs of the same input differ")
	}

	// Without the provider the three wait for the one token.
	plain := strings.Replace(tokens, "provider = \"local\"\nborrow_max = 2\nidle_time = \"10m\"\nsim_lend_delay = \"1m\"\n", "", 1)
	r2, err := Run(tr, Options{Config: mustConfig(t, plain)})
	if err != nil {
		t.Fatal(err)
	}
	if st := starts(r2); st[4] != 1800 || len(r2.Borrows) != 0 {
		t.Errorf("without a provider job 4 started at %v (want 1800), borrows %+v", st[4], r2.Borrows)
	}
	var out bytes.Buffer
	WriteCompare(&out, "a", "b", Summarise(r), Summarise(r2))
	if !strings.Contains(out.String(), "resource lic\n  loans                                1.00           0.00          -1.00") {
		t.Errorf("--compare lacks the resource:\n%s", out.String())
	}
}

// TestBorrowReturnSeesStart: a loan whose idle time runs out at the
// instant a job starts on its unit stays: the return is judged after
// that instant's cycle. Job 2 borrows the one unit (lent at once; with a
// 10 s cycle it starts at the next one), ends 60 s later; the unit is
// idle until job 3 comes just as the idle time ends, and takes it (job 1
// holds the total until 1200 s). It goes back 10m after job 3 ends.
func TestBorrowReturnSeesStart(t *testing.T) {
	conf := strings.Replace(strings.Replace(tokens, "borrow_max = 2", "borrow_max = 1", 1), "sim_lend_delay = \"1m\"\n", "", 1)
	for _, tc := range []struct {
		cycle        time.Duration
		start2, sub3 int
	}{{0, 0, 660}, {10 * time.Second, 10, 670}} {
		tr := mustSWF(t, swfLine(1, 0, 1200, 1, 3600, 1, 1)+swfLine(2, 0, 60, 1, 3600, 1, 1)+swfLine(3, tc.sub3, 100, 1, 3600, 1, 1))
		r, err := Run(tr, Options{Config: mustConfig(t, conf), Cycle: tc.cycle})
		if err != nil {
			t.Fatal(err)
		}
		st := starts(r)
		if st[2] != float64(tc.start2) || st[3] != float64(tc.sub3) {
			t.Errorf("cycle %v: jobs 2 and 3 started at %v and %v, want %d and %d", tc.cycle, st[2], st[3], tc.start2, tc.sub3)
		}
		want := time.Duration(tc.sub3+100+600) * time.Second
		if b := r.Borrows[0]; b.Loans != 1 || b.UnitTime != want {
			t.Errorf("cycle %v: %d loans lent for %v, want 1 for %v", tc.cycle, b.Loans, b.UnitTime, want)
		}
	}
}
