package resreq

import (
	"reflect"
	"testing"
)

// FuzzParse checks that Parse never panics and that every string it
// accepts round-trips: parse → print → parse gives the same tree, and
// printing that tree gives the same text. Accepted selects must compile.
func FuzzParse(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.input)
	}
	schema := testSchema(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, opts := range [][]Option{nil, {WithSchema(schema)}} {
			r, err := Parse(s, opts...)
			if err != nil {
				if _, ok := err.(*SyntaxError); !ok {
					t.Fatalf("Parse(%q): error %T, want *SyntaxError", s, err)
				}
				continue
			}
			text := r.String()
			r2, err := Parse(text, opts...)
			if err != nil {
				t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, text, err)
			}
			if !reflect.DeepEqual(r, r2) {
				t.Fatalf("round trip changed the tree:\ninput   %q\nprinted %q\nreprint %q", s, text, r2.String())
			}
			if text2 := r2.String(); text2 != text {
				t.Fatalf("printing is not stable: %q then %q", text, text2)
			}
			if opts != nil {
				compileAll(t, schema, r)
			}
			_ = Defaults(r).String()
		}
	})
}

// compileAll compiles every select and order of r; with a schema, parsed
// requirements must compile.
func compileAll(t *testing.T, s *Schema, r *ResReq) {
	t.Helper()
	var simples []*Simple
	switch {
	case r.Simple != nil:
		simples = append(simples, r.Simple)
	case r.Compound != nil:
		for i := range r.Compound {
			simples = append(simples, &r.Compound[i].Req)
		}
	default:
		for _, a := range r.Alternatives {
			if a.Req.Simple != nil {
				simples = append(simples, a.Req.Simple)
			}
			for i := range a.Req.Compound {
				simples = append(simples, &a.Req.Compound[i].Req)
			}
		}
	}
	h := s.NewHost()
	for _, sm := range simples {
		sel, err := s.Compile(sm.Select, Local{Type: "X86_64", Model: "Intel"})
		if err != nil {
			t.Fatalf("Compile(%q): %v", ExprString(sm.Select), err)
		}
		sel.Match(h)
		if sm.Order != nil {
			if _, err := s.CompileOrder(sm.Order); err != nil {
				t.Fatalf("CompileOrder(%v): %v", sm.Order, err)
			}
		}
	}
}
