package sim

import (
	"fmt"
	"strings"
	"testing"

	"xce/lib/trace"
)

// ones is n one-slot jobs submitted at 0 that run 100 s.
func ones(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(swfLine(i+1, 0, 100, 1, -1, 1, 0))
	}
	return b.String()
}

// startedAt counts the jobs that started at each offset (seconds).
func startedAt(r *Result) map[float64]int {
	out := map[float64]int{}
	for _, s := range starts(r) {
		out[s]++
	}
	return out
}

// TestHostWithoutSlots: a configured host without slots is simulated
// with one (a live host takes one per CPU its worker reports, and there
// is no worker to ask), and a warning names it.
func TestHostWithoutSlots(t *testing.T) {
	conf := mustConfig(t, `
[cluster]
name = "t"

[hosts.a]
slots = 3

[hosts.b]

[hosts.c]
type = "X86_64"
`)
	var warns []string
	r, err := Run(mustSWF(t, ones(7)), Options{Config: conf, Warn: func(s string) { warns = append(warns, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if r.TotalSlots != 5 || r.Hosts != 3 {
		t.Errorf("%d slots on %d hosts, want 5 on 3", r.TotalSlots, r.Hosts)
	}
	if got := startedAt(r); got[0] != 5 || got[100] != 2 {
		t.Errorf("starts %v, want 5 at 0 and 2 at 100", got)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "b, c: no slots in the configuration") {
		t.Errorf("warnings %q, want one naming hosts b and c", warns)
	}
}

// TestCores: where the configuration enforces cpu, a simulated host
// lists its cores as a live one does, one per CPU (the SLOTS of --hosts
// NxSLOTS, a configured host's slots), and its jobs get cores of their
// own; without the enforcement it lists none.
func TestCores(t *testing.T) {
	const enforce = "[cluster]\nname = \"t\"\nresource_enforce = [\"cpu\"]\n"
	for _, c := range []struct {
		name       string
		conf       string
		hosts, per int
		cores, at0 int
	}{
		{"--hosts 2x3, cores enforced", enforce, 2, 3, 3, 6},
		{"configured host, cores enforced", enforce + "[hosts.a]\nslots = 4\n", 0, 0, 4, 4},
		{"configured host, not enforced", "[cluster]\nname = \"t\"\n[hosts.a]\nslots = 4\n", 0, 0, 0, 4},
	} {
		e := &eng{opt: Options{Config: mustConfig(t, c.conf), Hosts: c.hosts, Slots: c.per}, hostIdx: map[string]int{}, warned: map[string]bool{}}
		e.conf = e.opt.Config
		if err := e.hosts(); err != nil {
			t.Fatal(err)
		}
		for _, h := range e.snap.Hosts {
			if len(h.CPUs) != c.cores || c.cores > 0 && h.CPUs[c.cores-1] != c.cores-1 {
				t.Errorf("%s: host %s lists cores %v, want %d", c.name, h.Name, h.CPUs, c.cores)
			}
		}
		r, err := Run(mustSWF(t, ones(8)), e.opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := startedAt(r); got[0] != c.at0 {
			t.Errorf("%s: %d jobs started at once, want %d (%v)", c.name, got[0], c.at0, got)
		}
	}
}

// lsbFinish is a JOB_FINISH record of lsb.acct (LSF 10.1's fields up to
// the job array index) for a one-slot job of user in queue "fair",
// submitted at submit, run from start to end, with ru_utime cpu (-1:
// none).
func lsbFinish(id, submit, start, end int, user string, cpu float64) string {
	const base = 1_700_000_000
	return fmt.Sprintf(`"JOB_FINISH" "10.1" %d %d 1000 0 1 %d 0 0 %d "%s" "fair" "" "" "" "h" "/" "" "" "" "j" 1 "a" 1 "a" 64 1.0 "j" "sleep" %g -1%s "" "" 0 1 "" "" 0`+"\n",
		base+end, id, base+submit, base+start, user, cpu, strings.Repeat(" -1", 17))
}

// TestReplaysLSBAcctCPU: the CPU time of an lsb.acct record (ru_utime +
// ru_stime) counts in its user's fairshare history as SWF's and XCE's
// accounting's do: u1's first job used far more CPU than it ran, so u2
// goes first when both wait; without it (run time on each slot), u1,
// whose use is older, goes first.
func TestReplaysLSBAcctCPU(t *testing.T) {
	conf := `
[cluster]
name = "t"
default_queue = "fair"

[hosts.a]
slots = 1

[queues.fair]
fairshare = { u1 = 1, u2 = 1 }
`
	first := func(cpu float64) int64 {
		text := lsbFinish(1, 0, 0, 100, "u1", cpu) + lsbFinish(2, 1, 1, 101, "u2", -1) +
			lsbFinish(3, 150, 150, 160, "u1", -1) + lsbFinish(4, 150, 150, 160, "u2", -1)
		tr, err := trace.ReadLSBAcct(strings.NewReader(text), "lsb.acct")
		if err != nil || len(tr.Jobs) != 4 || len(tr.Malformed) > 0 {
			t.Fatalf("%v: %d jobs, malformed %v", err, len(tr.Jobs), tr.Malformed)
		}
		r, err := Run(tr, Options{Config: mustConfig(t, conf)})
		if err != nil {
			t.Fatal(err)
		}
		if r.Jobs[2].Start < r.Jobs[3].Start {
			return tr.Jobs[2].ID
		}
		return tr.Jobs[3].ID
	}
	if got := first(100_000); got != 4 {
		t.Errorf("with u1's CPU time in lsb.acct job %d started first, want 4 (u2's)", got)
	}
	if got := first(-1); got != 3 {
		t.Errorf("without CPU times job %d started first, want 3 (u1's)", got)
	}
}
