package trace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"xce/lib/resreq"
)

// rusageMem returns the memory (MB) a resource requirement's rusage
// section reserves per slot (its first alternative), 0 when it names none
// or does not parse: the simulator reads ResReq itself, and MemMB only
// repeats this part of it.
func rusageMem(s string) float64 {
	r, err := resreq.Parse(s)
	if err != nil || r == nil || r.Simple == nil || r.Simple.Rusage == nil || len(r.Simple.Rusage.Or) == 0 {
		return 0
	}
	v, _ := r.Simple.Rusage.Or[0].AmountAt("mem", 0)
	return max(v, 0)
}

// dependsOn returns the job a dependency expression waits for when it
// names exactly one whole job (done(12), ended(12), exit(12), started(12),
// post_done(12), or a bare 12); 0 otherwise (a compound condition, a job
// name or an array element is more than Job.DependsOn holds).
func dependsOn(expr string) int64 {
	s := strings.TrimSpace(expr)
	if open := strings.IndexByte(s, '('); open > 0 && strings.HasSuffix(s, ")") {
		switch strings.TrimSpace(s[:open]) {
		case "done", "ended", "exit", "started", "post_done", "post_err":
			s = strings.TrimSpace(s[open+1 : len(s)-1])
		default:
			return 0
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// eachLine hands fn every line of r with its number (1-based); a line
// longer than readLine takes is counted, named in t.Malformed and skipped.
func eachLine(r io.Reader, name string, t *Trace, fn func(b []byte, line int)) error {
	br := bufio.NewReaderSize(r, 256<<10)
	line := 0
	for {
		b, err := readLine(br)
		if err == errLongLine {
			line++
			t.Malformed = append(t.Malformed, Problem{name, line, "line longer than 1 MiB"})
			continue
		}
		if len(b) > 0 || err == nil {
			line++
			fn(b, line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
	}
}
