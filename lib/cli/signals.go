package cli

import (
	"fmt"

	"golang.org/x/sys/unix"

	"xce/lib/api"
)

// signalList is what bkill -l prints.
var signalList = []string{"HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
	"PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ",
	"VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS"}

// parseSignal reads a signal name (with or without SIG) or number.
func parseSignal(s string) (unix.Signal, error) {
	if sig := api.ParseSignal(s); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("%s: Illegal signal value", s)
}
