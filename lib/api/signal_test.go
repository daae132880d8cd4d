package api

import (
	"syscall"
	"testing"
)

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]syscall.Signal{
		"SIGUSR1": syscall.SIGUSR1, "usr1": syscall.SIGUSR1, "KILL": syscall.SIGKILL, "10": 10,
		"NOPE": 0, "99": 0, "0": 0, "": 0,
	} {
		if got := ParseSignal(in); got != want {
			t.Errorf("ParseSignal(%q) = %v, want %v", in, got, want)
		}
	}
}
