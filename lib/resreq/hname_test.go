package resreq

import "testing"

// TestHostNameValues: host names in a select are names, digits and
// dashes included (node01, gpu017, c3-14); as in LSF a name with '-'
// must be quoted (unquoted, c3-14 is arithmetic and is refused).
func TestHostNameValues(t *testing.T) {
	s := testSchema(t)
	for _, name := range []string{"node01", "gpu017", "c3-14"} {
		h := s.NewHost()
		must(t, s.Set(h, "hname", name))
		v := name
		if name == "c3-14" {
			v = "'" + name + "'"
		}
		for _, c := range []struct {
			sel  string
			want bool
		}{
			{"select[hname == " + v + "]", true},
			{"select[hname == '" + name + "']", true},
			{"select[hname != " + v + "]", false},
			{"select[hname == '" + name + "0']", false},
		} {
			if got := compileSel(t, s, c.sel).Match(h); got != c.want {
				t.Errorf("%s on %s = %v, want %v", c.sel, name, got, c.want)
			}
		}
	}
	if _, err := Parse("select[hname == c3-14]"); err == nil {
		t.Error("select[hname == c3-14] (unquoted '-') is accepted")
	}
}
