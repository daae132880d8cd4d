package resreq

import "strconv"

// SyntaxError is a mistake in a resource requirement string. Col is the
// 1-based column (in characters) where the mistake was found.
type SyntaxError struct {
	Col int
	Msg string
}

// Error returns "column N: what was expected".
func (e *SyntaxError) Error() string {
	return "column " + strconv.Itoa(e.Col) + ": " + e.Msg
}

// Unwrap returns ErrBadResReq, so that errors.Is(err, ErrBadResReq) holds
// for every syntax error.
func (e *SyntaxError) Unwrap() error { return ErrBadResReq }

type lsfError string

func (e lsfError) Error() string { return string(e) }

// ErrBadResReq is LSF's generic message for a bad requirement. Commands
// print it before the detail, as LSF does:
//
//	Bad resource requirement syntax: column 12: expected a number or a
//	resource name after '>'. Job not submitted.
var ErrBadResReq error = lsfError("Bad resource requirement syntax")
