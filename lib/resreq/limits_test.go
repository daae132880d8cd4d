package resreq

import (
	"strings"
	"testing"
	"time"
)

func TestLongInputs(t *testing.T) {
	start := time.Now()
	long := "select[" + strings.Repeat("type == X86_64 || ", 1500) + "mem > 1]"
	r, err := Parse(long)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(r.String()); err != nil {
		t.Fatal(err)
	}
	_, err = Parse("select[" + strings.Repeat("mem + ", 20000) + "1 > 0]")
	if err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("a 20000-term select: %v", err)
	}
	// How long it took is for the benchmarks; a quadratic blow-up would
	// show there (and as a hang here), not as a wall-clock check.
	t.Logf("long inputs took %v", time.Since(start))
}

// TestMaxLength: a requirement longer than MaxLength is refused before it
// is parsed (a megabyte of rusage or of alternatives took seconds).
func TestMaxLength(t *testing.T) {
	for _, s := range []string{
		"rusage[" + strings.Repeat("mem=1:", MaxLength) + "mem=1]",
		strings.Repeat("{select[mem>1]} || ", MaxLength/16) + "{select[mem>1]}",
	} {
		if _, err := Parse(s); err == nil || !strings.Contains(err.Error(), "too long") {
			t.Errorf("a %d-byte requirement: %v", len(s), err)
		}
	}
	if _, err := Parse("select[" + strings.Repeat("type == X86_64 || ", 1500) + "mem > 1]"); err != nil {
		t.Errorf("a 27 KB requirement: %v", err)
	}
}
