// Package trace owns workload traces: reading the formats a site has its
// history in (the Standard Workload Format of the Parallel Workloads
// Archive, XCE's own accounting log, IBM LSF's lsb.acct) into one list of
// jobs, and generating synthetic ones from published workload models. It
// decides nothing about scheduling: lib/sim replays what it reads.
package trace

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"xce/lib/store"
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
	// when none. Where ResReq is set, MemMB is its rusage[mem], already
	// in it: a simulator that submits ResReq must not add MemMB again.
	MemMB float64
	// MemLimitMB is the memory limit (-M), in MB; 0 when none (acct
	// only: SWF and lsb.acct do not record it).
	MemLimitMB float64
	User       string
	Group      string // user group (-G); "" when none
	Queue      string // "" is the default queue
	// ResReq is the resource requirement string (-R) where the trace
	// has one (acct, lsbacct); "" otherwise.
	ResReq string
	// DependsOn is the job that must be done first (SWF field 17), 0
	// when none; Think is how long after its end this one is submitted
	// (SWF field 18).
	DependsOn int64
	Think     time.Duration
	// CPU is the CPU time the job used, all its processes together; 0
	// when the trace does not say (a simulator then counts its run time
	// on each slot).
	CPU time.Duration
	// Line is where the job was read (1-based), for messages; 0 for a
	// job read from a job store (acct).
	Line int
}

// Problem is an input line that was skipped, and why.
type Problem struct {
	File string
	Line int
	Why  string
}

// String is "file:line: why", or "file: why" where there are no lines
// (a job store).
func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Why)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Why)
}

// Trace is what Read returns: the jobs in submission order (ties: the
// order in the file; for acct, by job id and index), and the lines it
// skipped.
type Trace struct {
	Format    Format
	Jobs      []Job
	Malformed []Problem // lines that could not be read
	// Skipped counts jobs the trace holds but that cannot be replayed as
	// recorded (a negative run time, a cancelled job that never ran),
	// with why, as Problems.
	Skipped []Problem
	// Header holds the SWF header's "; Key: value" comments (MaxProcs,
	// MaxNodes, UnixStartTime, ...); a key given more than once keeps
	// every value, one per line. For acct and lsbacct, whose times are
	// made relative to their first submission, it holds only
	// UnixStartTime, that submission (unix seconds). Never nil.
	Header map[string]string
}

// HeaderInt returns a numeric header field, as in HeaderInt("MaxProcs").
func (t *Trace) HeaderInt(key string) (int64, bool) {
	v, ok := t.Header[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil
}

// MaxProcs is the size of the machine the trace was recorded on, in
// processors, from the SWF header (MaxProcs, else MaxNodes); 0 when the
// trace does not say.
func (t *Trace) MaxProcs() int {
	for _, k := range []string{"MaxProcs", "MaxNodes"} {
		if n, ok := t.HeaderInt(k); ok && n > 0 && n <= 1<<31-1 {
			return int(n)
		}
	}
	return 0
}

// Read reads a trace: a file (swf, lsbacct, or acct from a `xced store
// backup` file) or a state directory (acct); format "" detects it from
// the content (Detect). It fails only when the input cannot be read or
// its format is unknown (and, for a job store, when it or a backup of it
// is damaged); a malformed line is skipped and named in
// Trace.Malformed.
func Read(path string, format Format) (*Trace, error) {
	if format == "" {
		f, err := Detect(path)
		if err != nil {
			return nil, err
		}
		format = f
	}
	switch format {
	case SWF:
		return readFile(path, ReadSWF)
	case LSBAcct:
		return readFile(path, ReadLSBAcct)
	case Acct:
		return ReadAcct(path)
	}
	return nil, fmt.Errorf("%s: unknown trace format %q (swf, acct or lsbacct)", path, format)
}

func readFile(path string, read func(io.Reader, string) (*Trace, error)) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path)
}

// Detect names the format of a trace from its content: a directory is
// XCE's state directory, and a binary file starting as Badger's backup
// stream is `xced store backup`'s output (both acct); a file whose first record is a quoted
// "JOB_..." or "EVENT_..." is lsb.acct; one that starts with ';' comments
// or a line of 18 numbers is SWF. Blank lines and '#' lines are passed
// over.
func Detect(path string) (Format, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return Acct, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	if fm := detect(head[:n]); fm != "" {
		return fm, nil
	}
	return "", fmt.Errorf("%s: cannot tell the trace format from the content; give --trace-format swf, acct or lsbacct", path)
}

// detect looks at the start of a file.
func detect(head []byte) Format {
	// xced store backup's stream.
	if store.LooksLikeBackup(head) {
		return Acct
	}
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0, line[0] == '#':
			continue
		case line[0] == ';':
			return SWF
		case bytes.HasPrefix(line, []byte(`"JOB_`)), bytes.HasPrefix(line, []byte(`"EVENT_`)):
			return LSBAcct
		case swfNumeric(line):
			return SWF
		}
		return ""
	}
	return ""
}

// swfNumeric tells whether a line is 18 numbers.
func swfNumeric(line []byte) bool {
	fs := bytes.Fields(line)
	if len(fs) != swfFields {
		return false
	}
	for _, f := range fs {
		if _, ok := parseNum(f); !ok {
			return false
		}
	}
	return true
}

// sortJobs orders jobs by submission time, keeping the file's order among
// equal times. Most traces are already in order: that costs one pass.
func sortJobs(jobs []Job) {
	if slices.IsSortedFunc(jobs, cmpSubmit) {
		return
	}
	slices.SortStableFunc(jobs, cmpSubmit)
}

func cmpSubmit(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) }
