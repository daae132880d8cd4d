package resreq

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

func compileSel(t *testing.T, s *Schema, text string) *Selector {
	t.Helper()
	r, err := Parse(text, WithSchema(s))
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	sel, err := s.Compile(r.Simple.Select, testLocal)
	if err != nil {
		t.Fatalf("Compile(%q): %v", text, err)
	}
	return sel
}

// TestUndefinedResources pins the behaviour for resources a host does not
// define: Booleans are 0, numeric and string resources make the condition
// unknown, and an unknown condition never selects, even negated.
func TestUndefinedResources(t *testing.T) {
	s := testSchema(t)
	h := s.NewHost() // defines nothing
	for _, c := range []struct {
		sel  string
		want bool
	}{
		{"select[!bigmem]", true},
		{"select[bigmem]", false},
		{"select[mem > 0]", false},
		{"select[!(mem > 0)]", false},
		{"select[mem != 5]", false},
		{"select[mem > 0 || !bigmem]", true},
		{"select[!bigmem || mem > 0]", true},
		{"select[mem > 0 && bigmem]", false},
		{"select[!defined(mem)]", true},
		{"select[defined(mem) && mem > 1]", false},
		{"select[!defined(verilog) || verilog > 1]", true},
		{"select[hname == hostA]", false},
		{"select[hname != hostA]", false},
		{"select[type == any]", true},
		{"select[type != any]", false},
		{"select[1]", true},
		{"select[0]", false},
		{"select[mem - mem == 0]", false},
	} {
		if got := compileSel(t, s, c.sel).Match(h); got != c.want {
			t.Errorf("%s on an empty host = %v, want %v", c.sel, got, c.want)
		}
	}
}

func TestArithmetic(t *testing.T) {
	s := testSchema(t)
	h := s.NewHost()
	must(t, s.Set(h, "mem", 3000.0))
	must(t, s.Set(h, "ncpus", 4))
	must(t, s.Set(h, "r15s", 0.5))
	for _, c := range []struct {
		sel  string
		want bool
	}{
		{"select[mem / ncpus == 750]", true},
		{"select[mem - 1000 * 2 == 1000]", true},
		{"select[(mem - 1000) * 2 == 4000]", true},
		{"select[-mem == -3000]", true},
		{"select[2 * r15s + 1 == 2]", true},
		{"select[mem > 2.9GB]", true},
		{"select[mem > 3GB]", false},
		{"select[mem >= 3072000KB]", true},
		{"select[mem < 0.003TB]", true},
		{"select[(mem > 1) + (ncpus > 1) == 2]", true},
		{"select[mem > 1 == 1]", true},
		{"select[mem / 0 > 1]", true},
		{"select[ncpus > 2 || mem > 1 && ncpus > 10]", true},
		{"select[(ncpus > 2 || mem > 1) && ncpus > 10]", false},
	} {
		if got := compileSel(t, s, c.sel).Match(h); got != c.want {
			t.Errorf("%s = %v, want %v", c.sel, got, c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	s := testSchema(t)
	for _, c := range []struct{ sel, err string }{
		{"select[foo > 1]", "unknown resource name 'foo'"},
		{"select[os == rhel7]", "unknown resource name 'os'"},
		{"select[verilog == 'x']", "verilog is a numeric resource; it cannot be compared with a string"},
		{"select[verilog > 1GB]", "a number with a unit in verilog > 1GB must be compared with a resource that takes units, such as mem"},
	} {
		r, err := Parse(c.sel) // lenient: the schema decides at compile time
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.sel, err)
		}
		_, err = s.Compile(r.Simple.Select, testLocal)
		if err == nil || err.Error() != c.err {
			t.Errorf("Compile(%q) = %v, want %q", c.sel, err, c.err)
		}
	}
	r := MustParse("select[type==local]")
	if _, err := s.Compile(r.Simple.Select, Local{}); err == nil {
		t.Error("type==local compiled without a submission host")
	}
	// Unknown kinds at parse time are resolved by the schema.
	r = MustParse("select[nodepool == gpu && os_version == '4.2']")
	sel, err := s.Compile(r.Simple.Select, testLocal)
	must(t, err)
	h := s.NewHost()
	must(t, s.Set(h, "nodepool", "gpu"))
	must(t, s.Set(h, "os_version", "4.2"))
	if !sel.Match(h) {
		t.Error("string resources unknown to the parser do not match")
	}
	var nilSel *Selector
	if !nilSel.Match(h) {
		t.Error("a nil selector must match")
	}
	empty, err := s.Compile(nil, Local{})
	must(t, err)
	if !empty.Match(h) {
		t.Error("no select must match")
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	s, _, hosts := testCluster(t)
	sel := compileSel(t, s, "select[(type==X86_64 || type==LINUX86) && mem>2GB && !fs && defined(verilog) && hname != 'host06-x12' && (r15s + r1m) / 2 < 1]")
	n := testing.AllocsPerRun(100, func() {
		for _, h := range hosts {
			sel.Match(h)
		}
	})
	if n != 0 {
		t.Errorf("Match allocates %v times per run", n)
	}
}

func TestSchema(t *testing.T) {
	for _, c := range []struct {
		r   Resource
		err string
	}{
		{Resource{Name: "mem", Kind: Numeric}, `resource "mem" is defined twice or redefines a built-in resource`},
		{Resource{Name: "swap", Kind: Numeric}, `resource name "swap" is reserved`},
		{Resource{Name: "select", Kind: Boolean}, `resource name "select" is reserved`},
		{Resource{Name: "a-b", Kind: Boolean}, `resource name "a-b": use letters, digits and '_', starting with a letter or '_'`},
		{Resource{Name: "x", Kind: String, Units: true}, `resource "x": only a numeric resource can take units or be consumable`},
		{Resource{Name: "x"}, `resource "x": kind must be numeric, string or Boolean`},
	} {
		_, err := NewSchema(c.r)
		if err == nil || err.Error() != c.err {
			t.Errorf("NewSchema(%+v) = %v, want %q", c.r, err, c.err)
		}
	}
	s := testSchema(t)
	r, i, ok := s.Lookup("swap")
	if !ok || r.Name != "swp" || r.Kind != Numeric {
		t.Errorf("Lookup(swap) = %+v %d %v", r, i, ok)
	}
	h := s.NewHost()
	if err := s.Set(h, "type", 3.0); err == nil {
		t.Error("Set(type, 3.0) accepted")
	}
	if err := s.Set(h, "nosuch", 3.0); err == nil {
		t.Error("Set(nosuch) accepted")
	}
	if len(s.Resources()) != len(builtins)+20 {
		t.Errorf("Resources() has %d resources", len(s.Resources()))
	}
}

func TestOrder(t *testing.T) {
	s, names, hosts := testCluster(t)
	sorted := func(order string) []string {
		t.Helper()
		var o *Order
		if order != "" {
			o = MustParse(order).Simple.Order
		}
		ord, err := s.CompileOrder(o)
		must(t, err)
		idx := []int{0, 1, 2, 3, 4}
		slices.SortStableFunc(idx, func(a, b int) int { return ord.Compare(hosts[a], hosts[b]) })
		var out []string
		for _, i := range idx {
			out = append(out, names[i])
		}
		return out
	}
	for _, c := range []struct {
		order string
		want  []string
	}{
		// Default r15s:pg: least loaded first.
		{"", []string{"hostC", "hostE", "hostA", "host06-x12", "hostB"}},
		{"order[mem]", []string{"hostC", "hostA", "hostB", "host06-x12", "hostE"}},
		{"order[-mem]", []string{"hostE", "host06-x12", "hostB", "hostA", "hostC"}},
		{"order[ut]", []string{"hostC", "hostE", "hostA", "host06-x12", "hostB"}},
		{"order[-slots]", []string{"host06-x12", "hostB", "hostE", "hostA", "hostC"}},
		{"order[slots]", []string{"hostC", "hostA", "hostB", "hostE", "host06-x12"}},
		// Ties on maxslots broken by mem; hosts without tmp come last.
		{"order[tmp]", []string{"hostC", "hostA", "hostB", "host06-x12", "hostE"}},
		{"order[-tmp]", []string{"host06-x12", "hostB", "hostA", "hostC", "hostE"}},
		{"order[!-slots:mem]", []string{"host06-x12", "hostB", "hostE", "hostA", "hostC"}},
	} {
		if got := sorted(c.order); !slices.Equal(got, c.want) {
			t.Errorf("%q sorts %v, want %v", c.order, got, c.want)
		}
	}
	if _, err := s.CompileOrder(&Order{Keys: []OrderKey{{Name: "type"}}}); err == nil {
		t.Error("order[type] compiled")
	}
	if _, err := s.CompileOrder(&Order{Keys: []OrderKey{{Name: "nosuch"}}}); err == nil {
		t.Error("order[nosuch] compiled")
	}
}

func TestAmountAt(t *testing.T) {
	usage := func(s string) UsageSet { return MustParse(s).Simple.Rusage.Or[0] }
	m := time.Minute
	for _, c := range []struct {
		rusage  string
		res     string
		elapsed time.Duration
		want    float64
	}{
		{"rusage[mem=4000]", "mem", 0, 4000},
		{"rusage[mem=4000]", "mem", 1000 * time.Hour, 4000},
		{"rusage[mem=4GB]", "mem", 0, 4096},
		{"rusage[mem=512KB]", "mem", 0, 0.5},
		{"rusage[mem=4000:duration=10]", "mem", 9 * m, 4000},
		{"rusage[mem=4000:duration=10]", "mem", 10 * m, 0},
		{"rusage[mem=50:duration=100:decay=1]", "mem", 0, 50},
		{"rusage[mem=50:duration=100:decay=1]", "mem", 50 * m, 25},
		{"rusage[mem=50:duration=100:decay=1]", "mem", 100 * m, 0},
		{"rusage[mem=50:duration=100:decay=0]", "mem", 50 * m, 50},
		{"rusage[mem=20:swp=50:duration=1h, license=1:duration=2]", "swp", 59 * m, 50},
		{"rusage[mem=20:swp=50:duration=1h, license=1:duration=2]", "swp", 60 * m, 0},
		{"rusage[mem=20:swp=50:duration=1h, license=1:duration=2]", "license", 1 * m, 1},
		{"rusage[mem=20:swp=50:duration=1h, license=1:duration=2]", "license", 2 * m, 0},
		{"rusage[mem=8GB:duration=3600s]", "mem", 3599 * time.Second, 8192},
		{"rusage[mem=(500 300 200):duration=(10 20):decay=(0 1)]", "mem", 5 * m, 500},
		{"rusage[mem=(500 300 200):duration=(10 20):decay=(0 1)]", "mem", 10 * m, 300},
		{"rusage[mem=(500 300 200):duration=(10 20):decay=(0 1)]", "mem", 20 * m, 250},
		{"rusage[mem=(500 300 200):duration=(10 20):decay=(0 1)]", "mem", 30 * m, 200},
		{"rusage[mem=(500 300 200):duration=(10 20):decay=(0 1)]", "mem", 1000 * m, 200},
		{"rusage[mem=(500 300 200):duration=(10 20 30)]", "mem", 59 * m, 200},
		{"rusage[mem=(500 300 200):duration=(10 20 30)]", "mem", 60 * m, 0},
		{"rusage[mem=(800 400):duration=(1h 1h):decay=(1 1)]", "mem", 90 * m, 200},
		{"rusage[mem=4000:duration=0]", "mem", 0, 0},
	} {
		got, ok := usage(c.rusage).AmountAt(c.res, c.elapsed)
		if !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %s after %v = %v %v, want %v", c.rusage, c.res, c.elapsed, got, ok, c.want)
		}
	}
	if _, ok := usage("rusage[mem=1]").AmountAt("swp", 0); ok {
		t.Error("AmountAt reports a resource the usage does not name")
	}
	if got := usage("rusage[mem=1, lic=1:duration=1]").Names(); !slices.Equal(got, []string{"mem", "lic"}) {
		t.Errorf("Names() = %v", got)
	}
}

func TestSyntaxError(t *testing.T) {
	_, err := Parse("select[mem>] ")
	var se *SyntaxError
	if !errors.As(err, &se) || se.Col != 12 || se.Msg != "expected a number or a resource name after '>'" {
		t.Fatalf("Parse error = %#v", err)
	}
	if err.Error() != "column 12: expected a number or a resource name after '>'" {
		t.Errorf("Error() = %q", err.Error())
	}
	if !errors.Is(err, ErrBadResReq) || ErrBadResReq.Error() != "Bad resource requirement syntax" {
		t.Error("a syntax error must wrap ErrBadResReq")
	}
	// Columns count characters, not bytes.
	_, err = Parse("select[hname=='hé' && mem>]")
	if !errors.As(err, &se) || se.Col != 27 {
		t.Errorf("column with a multi-byte character: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
