package resreq

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expectations in testdata/corpus.txt from the current behaviour")

// A corpus case: one input line of testdata/corpus.txt and what it must
// give. Format (one case after another; '#' lines are comments):
//
//	@strict              later cases are parsed WithSchema(the test cluster)
//	@lenient             later cases are parsed without a schema (default)
//	> INPUT              the string, exactly as after "> " (blanks kept)
//	= CANONICAL          valid: its canonical form
//	* DEFAULTS           optional: Defaults(r).String()
//	~ HOST ...           optional: the hosts of testdata/cluster.txt whose
//	                     select matches (simple requirements; "~" alone: none)
//	! ERROR              invalid: the error text
type corpusCase struct {
	line     int
	strict   bool
	input    string
	want     string
	defaults *string
	hosts    *string
	err      string
}

func loadCorpus(tb testing.TB) []*corpusCase {
	tb.Helper()
	f, err := os.Open("testdata/corpus.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []*corpusCase
	var cur *corpusCase
	strict := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "@strict":
			strict = true
		case line == "@lenient":
			strict = false
		case strings.HasPrefix(line, "> ") || line == ">":
			cur = &corpusCase{line: n, strict: strict, input: strings.TrimPrefix(strings.TrimPrefix(line, ">"), " ")}
			out = append(out, cur)
		case cur == nil:
			tb.Fatalf("corpus.txt:%d: expectation before any input", n)
		case strings.HasPrefix(line, "= ") || line == "=":
			cur.want = strings.TrimPrefix(strings.TrimPrefix(line, "="), " ")
		case strings.HasPrefix(line, "* "):
			s := line[2:]
			cur.defaults = &s
		case strings.HasPrefix(line, "~"):
			s := strings.TrimSpace(line[1:])
			cur.hosts = &s
		case strings.HasPrefix(line, "! "):
			cur.err = line[2:]
		default:
			tb.Fatalf("corpus.txt:%d: cannot read %q", n, line)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// testCluster reads testdata/cluster.txt.
func testCluster(tb testing.TB) (*Schema, []string, []*Host) {
	tb.Helper()
	data, err := os.ReadFile("testdata/cluster.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var res []Resource
	type hostLine struct {
		name   string
		fields []string
	}
	var hl []hostLine
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "resource":
			r := Resource{Name: f[1]}
			switch f[2] {
			case "numeric":
				r.Kind = Numeric
			case "string":
				r.Kind = String
			case "Boolean":
				r.Kind = Boolean
			}
			for _, x := range f[3:] {
				switch x {
				case "units":
					r.Units = true
				case "consumable":
					r.Consumable = true
				case "increasing":
					r.Increasing = true
				}
			}
			res = append(res, r)
		case "host":
			hl = append(hl, hostLine{f[1], f[2:]})
		default:
			tb.Fatalf("cluster.txt:%d: cannot read %q", i+1, line)
		}
	}
	s, err := NewSchema(res...)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	var hosts []*Host
	for _, l := range hl {
		h := s.NewHost()
		if err := s.Set(h, "hname", l.name); err != nil {
			tb.Fatal(err)
		}
		for _, f := range l.fields {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				err = s.Set(h, k, true)
			} else if r, _, _ := s.Lookup(k); r.Kind == Numeric {
				x, perr := strconv.ParseFloat(v, 64)
				if perr != nil {
					tb.Fatal(perr)
				}
				err = s.Set(h, k, x)
			} else {
				err = s.Set(h, k, v)
			}
			if err != nil {
				tb.Fatalf("host %s: %v", l.name, err)
			}
		}
		names = append(names, l.name)
		hosts = append(hosts, h)
	}
	return s, names, hosts
}

func testSchema(tb testing.TB) *Schema {
	s, _, _ := testCluster(tb)
	return s
}

// testLocal is the submission host of the corpus: hostA.
var testLocal = Local{Type: "X86_64", Model: "Intel_EM64T"}

func runCase(c *corpusCase, s *Schema, names []string, hosts []*Host) (got corpusCase) {
	got = *c
	var opts []Option
	if c.strict {
		opts = append(opts, WithSchema(s))
	}
	r, err := Parse(c.input, opts...)
	if err != nil {
		got.want, got.err, got.defaults, got.hosts = "", err.Error(), nil, nil
		return got
	}
	got.err = ""
	got.want = r.String()
	if c.defaults != nil {
		d := Defaults(r).String()
		got.defaults = &d
	}
	if c.hosts != nil {
		var m string
		if !r.IsSimple() {
			m = "(not simple)"
		} else if sel, err := s.Compile(r.Simple.Select, testLocal); err != nil {
			m = "(compile: " + err.Error() + ")"
		} else {
			var hit []string
			for i, h := range hosts {
				if sel.Match(h) {
					hit = append(hit, names[i])
				}
			}
			m = strings.Join(hit, " ")
		}
		got.hosts = &m
	}
	return got
}

func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	s, names, hosts := testCluster(t)
	if len(cases) < 200 {
		t.Errorf("corpus has %d cases, want at least 200", len(cases))
	}
	var valid, invalid int
	var results []corpusCase
	for _, c := range cases {
		got := runCase(c, s, names, hosts)
		results = append(results, got)
		if got.err != "" {
			invalid++
		} else {
			valid++
		}
		if *update {
			continue
		}
		where := fmt.Sprintf("corpus.txt:%d: %q", c.line, c.input)
		switch {
		case c.err != "" && got.err == "":
			t.Errorf("%s: parsed as %q, want error %q", where, got.want, c.err)
		case c.err == "" && got.err != "":
			t.Errorf("%s: error %q, want %q", where, got.err, c.want)
		case c.err != got.err:
			t.Errorf("%s:\n got error %q\nwant error %q", where, got.err, c.err)
		case c.want != got.want:
			t.Errorf("%s:\n got %q\nwant %q", where, got.want, c.want)
		}
		if c.defaults != nil && got.defaults != nil && *c.defaults != *got.defaults {
			t.Errorf("%s: defaults\n got %q\nwant %q", where, *got.defaults, *c.defaults)
		}
		if c.hosts != nil && got.hosts != nil && *c.hosts != *got.hosts {
			t.Errorf("%s: matching hosts\n got %q\nwant %q", where, *got.hosts, *c.hosts)
		}
		if got.err == "" {
			// The canonical form is a fixed point.
			var opts []Option
			if c.strict {
				opts = append(opts, WithSchema(s))
			}
			r2, err := Parse(got.want, opts...)
			if err != nil || r2.String() != got.want {
				t.Errorf("%s: canonical form %q does not read back (%v)", where, got.want, err)
			}
		} else {
			var opts []Option
			if c.strict {
				opts = append(opts, WithSchema(s))
			}
			_, err := Parse(c.input, opts...)
			var se *SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, ErrBadResReq) {
				t.Errorf("%s: error %T is not a *SyntaxError wrapping ErrBadResReq", where, err)
			}
		}
	}
	t.Logf("corpus: %d strings, %d valid, %d invalid", len(cases), valid, invalid)
	if *update {
		writeCorpus(t, results)
	}
}

// writeCorpus rewrites corpus.txt with the expectations of results,
// keeping comments and directives.
func writeCorpus(t *testing.T, results []corpusCase) {
	data, err := os.ReadFile("testdata/corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	byLine := map[int]corpusCase{}
	for _, r := range results {
		byLine[r.line] = r
	}
	var out []string
	for i, line := range lines {
		if strings.HasPrefix(line, "= ") || line == "=" || strings.HasPrefix(line, "! ") ||
			strings.HasPrefix(line, "* ") || strings.HasPrefix(line, "~") {
			continue
		}
		out = append(out, line)
		r, ok := byLine[i+1]
		if !ok {
			continue
		}
		if r.err != "" {
			out = append(out, "! "+r.err)
			continue
		}
		out = append(out, strings.TrimRight("= "+r.want, " "))
		if r.defaults != nil {
			out = append(out, "* "+*r.defaults)
		}
		if r.hosts != nil {
			out = append(out, strings.TrimRight("~ "+*r.hosts, " "))
		}
	}
	if err := os.WriteFile("testdata/corpus.txt", []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
