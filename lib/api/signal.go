package api

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ParseSignal reads a signal as LSF's commands take one (bkill -s, bsub
// -wa): a name, with or without SIG, or a number; 0 when it is none.
func ParseSignal(action string) syscall.Signal {
	if action == "" {
		return 0
	}
	if n, err := strconv.Atoi(action); err == nil {
		if n > 0 && n < 65 {
			return syscall.Signal(n)
		}
		return 0
	}
	return unix.SignalNum("SIG" + strings.TrimPrefix(strings.ToUpper(action), "SIG"))
}
