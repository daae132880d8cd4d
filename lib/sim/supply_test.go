package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// elastic: one static host of 2 slots and a template of max = 2
// instances of 2 slots each that the default queue may use.
const elastic = `
[cluster]
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
`

// TestSupplyBurst: six 1-slot jobs of 600 s at once fill the static host
// and make demand for two instances (never more than max), which join
// after the 2m boot delay and run the other four; 600 s after their jobs
// end they go back. Each lived 0 .. 120+600+600 = 1320 s from its
// request: 2640 s = 0.7333 instance-hours, 0.3667 at 0.5 an hour.
func TestSupplyBurst(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("; MaxProcs: 2\n")
	for i := 1; i <= 6; i++ {
		sb.WriteString(swfLine(i, 0, 600, 1, 3600, 1, 1))
	}
	tr := mustSWF(t, sb.String())
	run := func() (*Result, []byte, []byte) {
		r, err := Run(tr, Options{Config: mustConfig(t, elastic)})
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
	onInst := 0
	for _, j := range r.Jobs {
		if j.Outcome != Done {
			t.Fatalf("job %d: outcome %d, want done", j.Trace, j.Outcome)
		}
		switch {
		case j.Hosts() == "a":
			if j.Start != 0 {
				t.Errorf("job %d on a started at %v, want 0", j.Trace, j.Start)
			}
		case strings.HasPrefix(j.Hosts(), "cpu2-"):
			onInst++
			if j.Start != 2*time.Minute {
				t.Errorf("job %d on %s started at %v, want after the 2m boot", j.Trace, j.Hosts(), j.Start)
			}
		default:
			t.Errorf("job %d ran on %q", j.Trace, j.Hosts())
		}
	}
	if onInst != 4 {
		t.Errorf("%d jobs ran on instances, want 4", onInst)
	}
	if len(r.Templates) != 1 {
		t.Fatalf("templates: %+v", r.Templates)
	}
	tm := r.Templates[0]
	if tm.Started != 2 || tm.Life != 2*1320*time.Second {
		t.Errorf("started %d instances living %v, want 2 and %v", tm.Started, tm.Life, 2*1320*time.Second)
	}
	if h := tm.Hours(); math.Abs(h-2640.0/3600) > 1e-12 {
		t.Errorf("instance-hours %v, want %v", h, 2640.0/3600)
	}
	if c := tm.Cost(); math.Abs(c-0.5*2640.0/3600) > 1e-12 {
		t.Errorf("cost %v, want %v", c, 0.5*2640.0/3600)
	}
	if r.Clock != 1320*time.Second {
		t.Errorf("the run ended at %v, want 1320s (the instances' return)", r.Clock)
	}
	if !bytes.Contains(text, []byte("cpu2             2        2            0.73       0.50         0.37")) {
		t.Errorf("summary lacks the template line:\n%s", text)
	}
	if !bytes.Contains(js, []byte(`"templates":[{"name":"cpu2","max":2,"instances_started":2,`)) {
		t.Errorf("summary.json lacks the templates: %s", js)
	}
	_, text2, js2 := run()
	if !bytes.Equal(text, text2) || !bytes.Equal(js, js2) {
		t.Error("two runs of the same input differ")
	}
}

// TestSupplyMaxTTL: an instance past max_ttl takes no new job and goes
// back once empty, and the next burst starts a new one.
func TestSupplyMaxTTL(t *testing.T) {
	conf := strings.Replace(elastic, "max = 2", "max = 1\nmax_ttl = \"15m\"", 1)
	var sb strings.Builder
	sb.WriteString("; MaxProcs: 2\n")
	// Two fill a, the third needs an instance (joins at 120 s).
	for i := 1; i <= 3; i++ {
		sb.WriteString(swfLine(i, 0, 1200, 1, 3600, 1, 1))
	}
	// At 1000 s the instance (900 s old) is closed: this one waits for
	// a new instance after the first goes back at 1320 s.
	sb.WriteString(swfLine(4, 1000, 100, 1, 3600, 1, 1))
	r, err := Run(mustSWF(t, sb.String()), Options{Config: mustConfig(t, conf)})
	if err != nil {
		t.Fatal(err)
	}
	st := starts(r)
	if st[3] != 120 {
		t.Errorf("job 3 started at %v, want 120", st[3])
	}
	// a frees at 1200 s, before a new instance could join (1320+120).
	if st[4] != 1200 || r.Jobs[3].Hosts() != "a" {
		t.Errorf("job 4 started at %v on %s, want 1200 on a", st[4], r.Jobs[3].Hosts())
	}
	tm := r.Templates[0]
	// The first instance: 0 .. 1320 (job 3 ends); a second was
	// requested at 1000 s (job 4 pending, the closed one cannot take it)
	// only if max allowed: it does not (max = 1, the first still exists).
	if tm.Started != 1 || tm.Life != 1320*time.Second {
		t.Errorf("started %d living %v, want 1 and 1320s", tm.Started, tm.Life)
	}
}

// TestSupplyCompareAndAbsent: --compare shows each template's figures
// side by side, and a configuration without templates writes neither the
// table nor the JSON field (its output stays as before).
func TestSupplyCompareAndAbsent(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("; MaxProcs: 2\n")
	for i := 1; i <= 6; i++ {
		sb.WriteString(swfLine(i, 0, 600, 1, 3600, 1, 1))
	}
	tr := mustSWF(t, sb.String())
	sum := func(conf string) *Summary {
		r, err := Run(tr, Options{Config: mustConfig(t, conf)})
		if err != nil {
			t.Fatal(err)
		}
		return Summarise(r)
	}
	a := sum(elastic)
	b := sum(strings.Replace(elastic, `idle_time = "10m"`, `idle_time = "1m"`, 1))
	var out bytes.Buffer
	WriteCompare(&out, "a", "b", a, b)
	// b: each instance 0 .. 720+60 = 780 s: 1560 s in all, 1080 s less.
	for _, want := range []string{"template cpu2", "  instance hours                       0.73           0.43          -0.30",
		"  cost                                 0.37           0.22          -0.15"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--compare lacks %q:\n%s", want, out.String())
		}
	}
	plain := sum(strings.Replace(strings.Split(elastic, "[providers.local]")[0], `rc_hosts = ["cpu2"]`, "", 1))
	var text bytes.Buffer
	plain.WriteText(&text)
	js, _ := json.Marshal(plain)
	if bytes.Contains(text.Bytes(), []byte("TEMPLATE")) || bytes.Contains(js, []byte("templates")) {
		t.Errorf("a configuration without templates shows them:\n%s\n%s", text.Bytes(), js)
	}
}
