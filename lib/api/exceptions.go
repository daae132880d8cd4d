package api

// Job.Exceptions bits: the exceptions LSF reports for a job, in its order.
const (
	ExceptionOverrun uint32 = 1 << iota
	ExceptionUnderrun
	ExceptionIdle
	ExceptionRuntimeEstExceeded
)

var exceptionNames = []string{"overrun", "underrun", "idle", "runtime_est_exceeded"}

// ExceptionNames lists the exceptions of a Job.Exceptions bit set by
// LSF's names, in LSF's order; nil for none.
func ExceptionNames(bits uint32) []string {
	var out []string
	for i, name := range exceptionNames {
		if bits&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// ExceptionBits is the bit set of exceptions named as ExceptionNames
// names them; unknown names are ignored.
func ExceptionBits(names []string) uint32 {
	var bits uint32
	for _, n := range names {
		for i, name := range exceptionNames {
			if n == name {
				bits |= 1 << i
			}
		}
	}
	return bits
}
