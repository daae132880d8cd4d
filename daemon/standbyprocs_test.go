package main

import (
	"os"
	"runtime"
	"testing"
)

// A standby runs on one processor and gets the default back when it
// leads; a GOMAXPROCS the administrator set stays as it is.
func TestStandbyProcs(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: the default is one processor already")
	}
	t.Cleanup(func() { runtime.SetDefaultGOMAXPROCS() })
	t.Setenv("GOMAXPROCS", "") // restored after the test
	os.Unsetenv("GOMAXPROCS")
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	if def < 2 {
		t.Skip("the default is one processor here (a CPU limit)")
	}
	p := newStandbyProcs()
	p.standBy()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("a standby runs on %d processors, want 1", n)
	}
	p.lead()
	if n := runtime.GOMAXPROCS(0); n != def {
		t.Fatalf("a leader runs on %d processors, want the default %d", n, def)
	}

	t.Setenv("GOMAXPROCS", "2")
	runtime.GOMAXPROCS(2)
	p = newStandbyProcs()
	p.standBy()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("a standby whose GOMAXPROCS is set runs on %d processors, want the 2 set", n)
	}
}
