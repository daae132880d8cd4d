// Package hostlist reads one term of an LSF host list: the -m of bsub,
// bmod and brun, a queue's or a limit's HOSTS, a host group's members.
// A term is a host name, a host group name, "all" or "others", each
// optionally followed by "+N" (a preference level); lists may also
// exclude a term with "~" (and bsub -m with "!"). Nothing else is read
// out of a name: node01, gpu017 and c3-14 are names, digits and all.
// It imports nothing of ours.
package hostlist

import "strings"

// Term is one host list entry, read.
type Term struct {
	Name    string // host, group, "all" or "others"
	Pref    int    // N of "name+N"; 0 without one
	HasPref bool   // "+N" was written
	Exclude bool   // "~name" (or "!name")
}

// Parse reads one entry of a host list.
func Parse(e string) Term {
	var t Term
	if s, ok := strings.CutPrefix(e, "~"); ok {
		e, t.Exclude = s, true
	} else if s, ok := strings.CutPrefix(e, "!"); ok {
		e, t.Exclude = s, true
	}
	t.Name = e
	if i := strings.LastIndexByte(e, '+'); i > 0 && digits(e[i+1:]) {
		n := 0
		for _, r := range e[i+1:] {
			n = min(n*10+int(r-'0'), 1<<30) // a preference is a small level
		}
		t.Name, t.Pref, t.HasPref = e[:i], n, true
	}
	return t
}

// Name is Parse(e).Name: the host, group, "all" or "others" an entry
// names, without its "~"/"!" and its "+N".
func Name(e string) string { return Parse(e).Name }

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
