package resreq

import "testing"

const typical = "select[type==X86_64 && mem>4000] order[r15s:pg] rusage[mem=4000:duration=10] span[hosts=1]"

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(typical); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseWithSchema(b *testing.B) {
	s := testSchema(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(typical, WithSchema(s)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkString(b *testing.B) {
	r := MustParse(typical)
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String()
	}
}

func BenchmarkMatch(b *testing.B) {
	s, names, hosts := testCluster(b)
	r := MustParse(typical)
	sel, err := s.Compile(r.Simple.Select, testLocal)
	if err != nil {
		b.Fatal(err)
	}
	h := hosts[0]
	if !sel.Match(h) {
		b.Fatalf("%s does not match %s", names[0], sel)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !sel.Match(h) {
			b.Fatal("no match")
		}
	}
}

func BenchmarkMatchComplex(b *testing.B) {
	s, _, hosts := testCluster(b)
	r := MustParse("select[((2*r15s + 3*r1m + r15m) / 6 < 1.0) && !fs && (cpuf > 4.0) && (type==X86_64 || type==LINUX86) && defined(verilog) && mem>2GB]")
	sel, err := s.Compile(r.Simple.Select, testLocal)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, h := range hosts {
			sel.Match(h)
		}
	}
}
