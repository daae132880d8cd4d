// Package elim runs a host's external load information managers (LSF's
// ELIMs) and keeps the values they report: every executable named
// elim.* in the configured directory is started (as the worker's user,
// root), and each line it writes on its standard output is one report in
// LSF's protocol:
//
//	N name1 value1 ... nameN valueN
//
// An elim is run only when root owns it and its directory and neither
// group nor others may write either (a symlink is refused), because what
// it runs, it runs as root. One that exits is restarted with a backoff; a
// malformed report is logged and ignored; a resource the configuration
// does not define is ignored with one warning; a value not reported again
// within the stale age goes stale (Values gives it as "", lsload shows
// "-").
package elim

import (
	"fmt"
	"strconv"
	"strings"
)

// Report is one line of an elim's output: resource name to value, as
// written (numeric values are checked by the reader that knows the
// resource's type).
type Report map[string]string

// Parse reads one report line, "N name1 value1 ... nameN valueN". N
// must match the pairs that follow; names are LSF resource names (a
// letter or _, then letters, digits and _, at most 39 characters);
// values are any non-blank word. A blank line is an empty report.
func Parse(line string) (Report, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return Report{}, nil
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%q: the report must start with the number of resources", f[0])
	}
	if len(f)-1 != 2*n {
		return nil, fmt.Errorf("the report announces %d resources but has %d words after the number", n, len(f)-1)
	}
	r := make(Report, n)
	for i := 1; i < len(f); i += 2 {
		name, val := f[i], f[i+1]
		if !validName(name) {
			return nil, fmt.Errorf("%q: not a resource name", name)
		}
		if _, dup := r[name]; dup {
			return nil, fmt.Errorf("%s: reported twice", name)
		}
		r[name] = val
	}
	return r, nil
}

// validName is LSF's rule for resource names.
func validName(s string) bool {
	if s == "" || len(s) > 39 {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
