package requeue

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in       string
		requeue  []int
		not      []int
		excluded []int
		err      string
	}{
		{in: "30", requeue: []int{30}, not: []int{0, 1, 29}},
		{in: "55 34 78", requeue: []int{55, 34, 78}, not: []int{0, 56}},
		{in: "30 EXCLUDE(20)", requeue: []int{30, 20}, not: []int{0, 21}, excluded: []int{20}},
		{in: "exclude(1 2)", requeue: []int{1, 2}, excluded: []int{1, 2}},
		{in: "all", requeue: []int{1, 2, 255}, not: []int{0}},
		{in: "all ~1 ~2", requeue: []int{3, 255}, not: []int{0, 1, 2}},
		{in: "ALL ~3 EXCLUDE(9)", requeue: []int{1, 9}, not: []int{3}, excluded: []int{9}},
		{in: "", err: "no exit code"},
		{in: "256", err: `"256"`},
		{in: "x", err: `"x"`},
		{in: "~3", err: "~code follows all"},
		{in: "EXCLUDE(3", err: "not closed"},
		{in: "EXCLUDE(a)", err: `"a"`},
	} {
		v, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		for _, c := range tc.requeue {
			if !v.Requeues(c) {
				t.Errorf("%q: %d does not requeue", tc.in, c)
			}
		}
		for _, c := range tc.not {
			if v.Requeues(c) {
				t.Errorf("%q: %d requeues", tc.in, c)
			}
		}
		for _, c := range tc.excluded {
			if !v.Excluded(c) {
				t.Errorf("%q: %d is not excluded", tc.in, c)
			}
		}
	}
	var none *Values
	if none.Requeues(1) || none.Excluded(1) {
		t.Error("a nil list requeues")
	}
}
