package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Output is copied whole while the spool's disk keeps the reserve free,
// and cut, with a line saying so, when it would not.
func TestRelayReserve(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reserve string // MB
		cut     bool
	}{
		{"room", "1", false},
		{"no room", "1073741824", true}, // 1 PB: more than any test disk has free
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(SpoolReserveEnv, tc.reserve)
			path := filepath.Join(t.TempDir(), "spool")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w, rl, err := startRelay(f)
			if err != nil {
				t.Fatal(err)
			}
			w.WriteString("hello\n")
			w.Close()
			note := rl.end(10 * time.Second)
			b, _ := os.ReadFile(path)
			got := string(b)
			if tc.cut {
				if note == "" || strings.Contains(got, "hello") || !strings.Contains(got, "The job's output was cut after 0 bytes") {
					t.Errorf("note %q, spool %q", note, got)
				}
				return
			}
			if note != "" || got != "hello\n" {
				t.Errorf("note %q, spool %q", note, got)
			}
		})
	}
}
