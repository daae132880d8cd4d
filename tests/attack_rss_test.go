package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The memory figures of the attack tests: the peak of a daemon's resident
// set (VmHWM) while an attack ran, beside its resident set before it.
// Each attack test prints them on one line of a fixed form, for a report
// to quote (go test -v, grep 'attack peak RSS:'):
//
//	go test -count=1 -v ./tests/ -run 'TestSocket|TestBlaunchStopped' | grep 'attack peak RSS:'
//
// The figures are reported, not asserted: a test asserts only a bound
// its attack's defence makes structural, generously.

// rssMark is a daemon's memory as an attack begins.
type rssMark struct {
	name string
	pid  int
	idle int64 // VmRSS, KiB
}

// markRSS resets pid's peak (VmHWM) to its resident set now, so that
// the peak read after the attack is the attack's (clear_refs 5, Linux
// 4.0 and later; where it cannot be written the peak since the daemon
// started is read, which is no lower).
func markRSS(name string, pid int) rssMark {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	return rssMark{name: name, pid: pid, idle: procField(pid, "status", "VmRSS")}
}

// peakKB is the peak resident set (VmHWM, KiB) since the mark.
func (m rssMark) peakKB() int64 { return procField(m.pid, "status", "VmHWM") }

// reportRSS prints the attack's figures for every daemon marked, and
// returns their peaks' growth over idle, by name.
func reportRSS(t *testing.T, attack string, marks ...rssMark) map[string]int64 {
	t.Helper()
	grew := map[string]int64{}
	var parts []string
	for _, m := range marks {
		peak := m.peakKB()
		grew[m.name] = peak - m.idle
		parts = append(parts, fmt.Sprintf("%s %.1f MB idle, %.1f MB peak (+%.1f MB)", m.name, mb(m.idle), mb(peak), mb(peak-m.idle)))
	}
	t.Logf("attack peak RSS: %s: %s", attack, strings.Join(parts, "; "))
	return grew
}

func mb(kib int64) float64 { return float64(kib) / 1024 }
