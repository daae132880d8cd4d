package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// An array larger than one store transaction holds (about 13,000
// elements; sites raise max_array_size far past that) is submitted
// whole, is whole after kill -9, and can be killed whole.
func TestHugeArray(t *testing.T) {
	if testing.Short() {
		t.Skip("submits 30,000 array elements")
	}
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte("[cluster]\nmax_array_size = 100000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", path)
	id := c.submit("", "-H", "-J", "sweep[1-30000]", "true")
	check := func(when, want string) {
		t.Helper()
		if got := c.must("", "bjobs", "-A", "-noheader", "-o", "jobid njobs psusp exit delimiter=','", id); got != id+","+want+"\n" {
			t.Errorf("%s: bjobs -A: %q, want %q", when, got, id+","+want+"\n")
		}
	}
	check("submitted", "30000,30000,0")
	c.crash()
	c.start()
	check("after kill -9", "30000,30000,0")
	// A change to every element is more than a transaction holds too.
	c.must("", "bkill", id)
	check("killed", "30000,0,30000")
	c.stop()
	c.start()
	check("after a restart", "30000,0,30000")
	// The ids go on after the array.
	next := c.submit("", "-H", "true")
	if n, _ := strconv.Atoi(next); n <= mustAtoi(t, id) {
		t.Errorf("the next job is <%d>, after the array's <%s>", n, id)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
