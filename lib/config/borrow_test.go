package config

import (
	"strings"
	"testing"
)

func TestBorrowConfig(t *testing.T) {
	c, err := Parse("x.toml", []byte(`
[providers.lic]
kind = "local"
[resources.lic_a]
total = 2
provider = "lic"
borrow_max = 3
[resources.lic_b]
total = 1
provider = "lic"
borrow_max = 1
idle_time = "30s"
[resources.lic_c]
total = 4
`))
	if err != nil {
		t.Fatal(err)
	}
	a, b, cc := c.Resources["lic_a"], c.Resources["lic_b"], c.Resources["lic_c"]
	if !a.Borrows() || a.Ceiling() != 5 || a.IdleTime != DefaultBorrowIdleTime {
		t.Errorf("lic_a: %+v ceiling %d", a, a.Ceiling())
	}
	if b.IdleTime != 30 || b.Ceiling() != 2 {
		t.Errorf("lic_b: %+v", b)
	}
	if cc.Borrows() || cc.Ceiling() != 4 {
		t.Errorf("lic_c: %+v", cc)
	}
	if out := c.Effective(); !strings.Contains(out, "provider = \"lic\"\nborrow_max = 3\nidle_time = \"10m\"") {
		t.Errorf("printed:\n%s", out)
	}
}

func TestBorrowConfigErrors(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"[resources.x]\ntotal = 2\nprovider = \"nope\"\nborrow_max = 1\n", "unknown provider nope"},
		{"[providers.p]\nkind = \"local\"\n[resources.x]\ntype = \"numeric\"\nprovider = \"p\"\nborrow_max = 1\n", "only a shared resource"},
		{"[providers.p]\nkind = \"local\"\n[resources.x]\ntotal = 2\nprovider = \"p\"\n", "needs borrow_max"},
		{"[resources.x]\ntotal = 2\nborrow_max = 1\n", "set provider too"},
	} {
		_, err := Parse("x.toml", []byte(tc.toml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.toml, err, tc.want)
		}
	}
}
