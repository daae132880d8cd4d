package main

import (
	"os"
	"runtime"
)

// A standby candidate's work is one pipeline: receive the leader's
// entries, append them to the raft log, apply them to the store. It runs
// on one processor (GOMAXPROCS 1) and takes the machine's share back when
// it is elected, before it restores the controller's state. With more,
// each entry's hand-offs between its goroutines (the connection's
// reader, raft's loop, the state machine, Badger's writer) wake idle
// threads that spin looking for work, which costs CPU the leader needs
// where candidates share a machine. A GOMAXPROCS the administrator set
// is left alone.
type standbyProcs struct{ explicit bool }

func newStandbyProcs() *standbyProcs {
	_, set := os.LookupEnv("GOMAXPROCS")
	return &standbyProcs{explicit: set}
}

// standBy limits the process to one processor.
func (p *standbyProcs) standBy() {
	if !p.explicit {
		runtime.GOMAXPROCS(1)
	}
}

// lead gives the process the default processors back.
func (p *standbyProcs) lead() {
	if !p.explicit {
		runtime.SetDefaultGOMAXPROCS()
	}
}
