package testenv

import (
	"syscall"
	"time"
)

// CPUTime is the user and system CPU time this process has used, and
// that of the children it has reaped: what a benchmark that starts
// processes has spent in all.
func CPUTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	return RusageCPU(&self) + RusageCPU(&kids)
}

// RusageCPU is the user and system CPU time in ru.
func RusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}
