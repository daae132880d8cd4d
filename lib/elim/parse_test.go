package elim

import (
	"maps"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		line string
		want Report
		bad  bool
	}{
		{line: "", want: Report{}},
		{line: "   ", want: Report{}},
		{line: "0", want: Report{}},
		{line: "1 scratch 120", want: Report{"scratch": "120"}},
		{line: "2 scratch 120.5 lic_a 3\n", want: Report{"scratch": "120.5", "lic_a": "3"}},
		{line: "1\tscratch\t7", want: Report{"scratch": "7"}},
		{line: "1 arch x86", want: Report{"arch": "x86"}},
		{line: "2 scratch 1", bad: true},
		{line: "1 scratch", bad: true},
		{line: "1 scratch 1 extra", bad: true},
		{line: "x scratch 1", bad: true},
		{line: "-1", bad: true},
		{line: "1 9lives 1", bad: true},
		{line: "1 scr-atch 1", bad: true},
		{line: "2 a 1 a 2", bad: true},
		{line: "1 a234567890123456789012345678901234567890 1", bad: true},
	} {
		got, err := Parse(c.line)
		if c.bad {
			if err == nil {
				t.Errorf("Parse(%q) = %v, want an error", c.line, got)
			}
			continue
		}
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("Parse(%q) = %v, %v, want %v", c.line, got, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "0", "1 scratch 120", "2 a 1 b 2", "3 a 1", "1 9 9", "x", "1 a\x00 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		r, err := Parse(line)
		if err != nil {
			return
		}
		for name, v := range r {
			if !validName(name) || v == "" {
				t.Fatalf("Parse(%q) gave %q=%q", line, name, v)
			}
		}
	})
}
