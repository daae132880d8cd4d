package hostlist

import "testing"

// hostTerms is the table every host-list reader in the project is checked
// against: real host names end in digits and contain dashes.
var hostTerms = []struct {
	in   string
	want Term
}{
	{"node01", Term{Name: "node01"}},
	{"gpu017", Term{Name: "gpu017"}},
	{"c3-14", Term{Name: "c3-14"}},
	{"host+2", Term{Name: "host", Pref: 2, HasPref: true}},
	{"group+1", Term{Name: "group", Pref: 1, HasPref: true}},
	{"others+1", Term{Name: "others", Pref: 1, HasPref: true}},
	{"node01+3", Term{Name: "node01", Pref: 3, HasPref: true}},
	{"all", Term{Name: "all"}},
	{"~node01", Term{Name: "node01", Exclude: true}},
	{"!gpu017", Term{Name: "gpu017", Exclude: true}},
	{"a+b", Term{Name: "a+b"}},
	{"a+", Term{Name: "a+"}},
	{"+5", Term{Name: "+5"}},
	{"a+-1", Term{Name: "a+-1"}},
}

func TestParse(t *testing.T) {
	for _, c := range hostTerms {
		if got := Parse(c.in); got != c.want {
			t.Errorf("Parse(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if got := Name(c.in); got != c.want.Name {
			t.Errorf("Name(%q) = %q, want %q", c.in, got, c.want.Name)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range hostTerms {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, e string) {
		tm := Parse(e)
		if len(tm.Name) > len(e) || tm.Pref < 0 {
			t.Fatalf("Parse(%q) = %+v", e, tm)
		}
		if !tm.HasPref && !tm.Exclude && tm.Name != e {
			t.Fatalf("Parse(%q) changed a plain name: %+v", e, tm)
		}
	})
}
