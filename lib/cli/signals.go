package cli

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// signalList is what bkill -l prints.
var signalList = []string{"HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
	"PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ",
	"VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS"}

// parseSignal reads a signal name (with or without SIG) or number.
func parseSignal(s string) (unix.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 || n > 64 {
			return 0, fmt.Errorf("%s: Illegal signal value", s)
		}
		return unix.Signal(n), nil
	}
	name := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if sig := unix.SignalNum("SIG" + name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("%s: Illegal signal value", s)
}
