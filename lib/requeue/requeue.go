// Package requeue owns LSF's requeue exit values: the lists of exit codes
// that send a finished job back to pending (bsub -Q, the queue's and the
// application profile's REQUEUE_EXIT_VALUES).
//
// The syntax is "[all [~code ...] | code ...] [EXCLUDE(code ...)]": codes
// are 0-255; "all" is every non-zero code, "~code" takes one out of it;
// codes in EXCLUDE(...) requeue too (LSF then keeps the job off the host
// it ran on, which a single host cannot do; see Values.Excluded).
package requeue

import (
	"fmt"
	"strconv"
	"strings"
)

// Values is a parsed list.
type Values struct {
	all      bool
	codes    map[int]bool
	except   map[int]bool // ~code with all
	excluded map[int]bool // EXCLUDE(code ...)
}

// Parse reads a list; the error names the part that is wrong.
func Parse(s string) (*Values, error) {
	v := &Values{codes: map[int]bool{}, except: map[int]bool{}, excluded: map[int]bool{}}
	rest := s
	if i := strings.Index(strings.ToUpper(rest), "EXCLUDE("); i >= 0 {
		j := strings.IndexByte(rest[i:], ')')
		if j < 0 {
			return nil, fmt.Errorf("%s: Bad requeue exit value: EXCLUDE( is not closed", s)
		}
		for _, w := range strings.Fields(rest[i+len("EXCLUDE(") : i+j]) {
			n, err := code(w)
			if err != nil {
				return nil, fmt.Errorf("%s: Bad requeue exit value %q", s, w)
			}
			v.excluded[n] = true
		}
		rest = rest[:i] + " " + rest[i+j+1:]
	}
	for _, w := range strings.Fields(rest) {
		switch {
		case strings.EqualFold(w, "all"):
			v.all = true
		case strings.HasPrefix(w, "~"):
			n, err := code(w[1:])
			if err != nil || !v.all {
				return nil, fmt.Errorf("%s: Bad requeue exit value %q (~code follows all)", s, w)
			}
			v.except[n] = true
		default:
			n, err := code(w)
			if err != nil {
				return nil, fmt.Errorf("%s: Bad requeue exit value %q", s, w)
			}
			v.codes[n] = true
		}
	}
	if !v.all && len(v.codes) == 0 && len(v.excluded) == 0 {
		return nil, fmt.Errorf("%s: Bad requeue exit value: no exit code", s)
	}
	return v, nil
}

func code(w string) (int, error) {
	n, err := strconv.Atoi(w)
	if err != nil || n < 0 || n > 255 {
		return 0, fmt.Errorf("bad exit code %q", w)
	}
	return n, nil
}

// Requeues reports whether a job that exited with code goes back to
// pending.
func (v *Values) Requeues(code int) bool {
	if v == nil {
		return false
	}
	return v.codes[code] || v.excluded[code] || v.all && code != 0 && !v.except[code]
}

// Excluded reports whether code is in EXCLUDE(...).
func (v *Values) Excluded(code int) bool { return v != nil && v.excluded[code] }
