package resreq

import (
	"strings"
	"testing"
)

// TestMemUnit: under LSF_UNIT_FOR_LIMITS=KB a workflow tool writes
// rusage[mem=500000] meaning 500000 KB; read as MB the job asked for
// 488 GB and pended forever. A schema's memory unit governs bare amounts
// of memory resources in select[] and rusage[], not other resources nor
// amounts written with a unit.
func TestMemUnit(t *testing.T) {
	mb := testSchema(t)
	kb := mb.WithMemUnit(KB)
	gb := mb.WithMemUnit(GB)
	mem := func(s *Schema, text string) float64 {
		t.Helper()
		r, err := Parse(text, WithSchema(s))
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		return r.Simple.Rusage.Or[0][0].Resources[0].Amounts[0].MB()
	}
	for _, c := range []struct {
		s    *Schema
		text string
		want float64
	}{
		{mb, "rusage[mem=500000]", 500000},
		{kb, "rusage[mem=500000]", 500000.0 / 1024},
		{gb, "rusage[mem=2]", 2048},
		{kb, "rusage[mem=4GB]", 4096},
		{kb, "rusage[swp=2048]", 2},
		{kb, "rusage[ut=0.5]", 0.5},
	} {
		if got := mem(c.s, c.text); got != c.want {
			t.Errorf("%s under %v: %g MB, want %g", c.text, c.s.memUnit, got, c.want)
		}
	}

	// select[]: a host with 1000 MB of memory.
	_, mi, _ := kb.Lookup("mem")
	_, ui, _ := kb.Lookup("ut")
	h := kb.NewHost()
	h.Num[mi], h.Num[ui] = 1000, 0.3
	for _, c := range []struct {
		s    *Schema
		text string
		want bool
	}{
		{mb, "select[mem > 500000]", false},
		{kb, "select[mem > 500000]", true},   // 488 MB
		{kb, "select[mem > 2000000]", false}, // 1953 MB
		{kb, "select[500000 < mem]", true},
		{kb, "select[mem > 2GB]", false},
		{kb, "select[ut < 1]", true}, // not memory: no unit
		{gb, "select[mem < 1]", true},
	} {
		if got := compileSel(t, c.s, c.text).Match(h); got != c.want {
			t.Errorf("%s under %v on a 1000 MB host: %v, want %v", c.text, c.s.memUnit, got, c.want)
		}
	}

	// The unit is written into the requirement: it prints, and reads back
	// the same under any schema.
	r, err := Parse("select[mem > 500000] rusage[mem=500000]", WithSchema(kb))
	if err != nil {
		t.Fatal(err)
	}
	text := r.String()
	if !strings.Contains(text, "500000KB") || strings.Contains(text, "500000]") {
		t.Errorf("printed %q: the unit is not written", text)
	}
	again, err := Parse(text, WithSchema(mb))
	if err != nil || again.String() != text {
		t.Errorf("reparsed under MB: %v %q", err, again)
	}
}
