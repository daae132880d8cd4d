// Package trace owns workload traces: reading the formats a site has its
// history in (the Standard Workload Format of the Parallel Workloads
// Archive, XCE's own accounting log, IBM LSF's lsb.acct) into one list of
// jobs, and generating synthetic ones from published workload models. It
// decides nothing about scheduling: lib/sim replays what it reads.
package trace

import (
	"fmt"
	"time"
)

// Format names a trace format, as `xced simulate --trace-format` takes it.
type Format string

const (
	SWF     Format = "swf"     // Standard Workload Format
	Acct    Format = "acct"    // XCE's accounting log (what bacct reads)
	LSBAcct Format = "lsbacct" // IBM LSF's lsb.acct, JOB_FINISH records
)

// Job is one job of a trace. Times are offsets from the trace's start
// (SWF counts in seconds from its first submission).
type Job struct {
	ID     int64         // job id (SWF job number)
	Index  int64         // array index, 0 when not an element
	Submit time.Duration // submission time
	Run    time.Duration // how long it really ran
	Slots  int           // -n
	// Limit is the requested run time (-W); 0 when none.
	Limit time.Duration
	// MemMB is the memory requested per slot (rusage[mem]), in MB; 0
	// when none.
	MemMB float64
	User  string
	Group string // user group (-G); "" when none
	Queue string // "" is the default queue
	// ResReq is the resource requirement string (-R) where the trace
	// has one (acct, lsbacct); "" otherwise.
	ResReq string
	// DependsOn is the job that must be done first (SWF field 17), 0
	// when none; Think is how long after its end this one is submitted
	// (SWF field 18).
	DependsOn int64
	Think     time.Duration
	// Line is where the job was read (1-based), for messages.
	Line int
}

// Problem is an input line that was skipped, and why.
type Problem struct {
	File string
	Line int
	Why  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Why) }

// Trace is what Read returns: the jobs in submission order (ties: the
// order in the file), and the lines it skipped.
type Trace struct {
	Format    Format
	Jobs      []Job
	Malformed []Problem // lines that could not be read
	// Skipped counts jobs the trace holds but that cannot be replayed as
	// recorded (a negative run time, a cancelled job that never ran),
	// with why, as Problems.
	Skipped []Problem
}

// Read reads a trace file; format "" detects it from the content. It
// fails only when the file cannot be read or its format is unknown; a
// malformed line is skipped and named in Trace.Malformed.
func Read(path string, format Format) (*Trace, error) {
	panic("lib/trace: Read is built by the trace helper")
}
