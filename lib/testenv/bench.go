package testenv

import (
	"slices"
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

// Median is the middle of vs (the mean of the middle two for an even
// count; 0 for none), vs left as it was.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
