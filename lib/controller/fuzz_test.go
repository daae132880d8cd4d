package controller

import (
	"strings"
	"testing"
)

// FuzzParseDependency: whatever -w says, the parser answers with a tree
// or an error (no panic, no stack overflow), and a tree's nesting stays
// within maxDepDepth.
func FuzzParseDependency(f *testing.F) {
	for _, s := range []string{
		"done(1)", "done(1) && (ended(\"a*\") || !exit(2, > 3))", "numdone(5, >= *)", "numrun(7, 2)",
		"post_done(x) || post_err(\"y[1]\")", "12[3]", "!(!(!1))", "exit(1,", "done(\"", "((((1))))", "a&&b||c",
		strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseDependency(s)
		if err != nil {
			return
		}
		var depth func(*depNode) int
		depth = func(n *depNode) int {
			d := 0
			for _, k := range n.kids {
				if n.op == "!" {
					d = max(d, depth(k)+1)
				} else {
					d = max(d, depth(k))
				}
			}
			return d
		}
		if d := depth(n); d > maxDepDepth {
			t.Fatalf("%q: %d levels of '!'", s, d)
		}
		for _, k := range []*depNode{n} {
			if k.op == "" && k.arg == "" {
				t.Fatalf("%q: a condition without a job", s)
			}
		}
	})
}
