package config

import (
	"slices"
	"strings"
	"testing"
)

func TestElimDir(t *testing.T) {
	c, err := Parse("x.toml", []byte(`
[cluster]
elim_dir = "/etc/xce/elim"
[resources.scratch]
[resources.lic]
total = 4
[hosts.a]
[hosts.b]
elim_dir = "/opt/elim"
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ElimDir("a"); got != "/etc/xce/elim" {
		t.Errorf("ElimDir(a) = %q", got)
	}
	if got := c.ElimDir("b"); got != "/opt/elim" {
		t.Errorf("ElimDir(b) = %q", got)
	}
	if c.Cluster.ElimStaleAfter != DefaultElimStaleAfter {
		t.Errorf("elim_stale_after = %v", c.Cluster.ElimStaleAfter)
	}
	if got := c.ElimResources(); !slices.Equal(got, []string{"scratch"}) {
		t.Errorf("ElimResources = %v", got)
	}
	again, err := Parse("y.toml", []byte(c.Effective()))
	if err != nil || again.ElimDir("b") != "/opt/elim" || again.Cluster.ElimDir != "/etc/xce/elim" {
		t.Errorf("Effective does not give the elim dirs back: %v\n%s", err, c.Effective())
	}
	_, err = Parse("x.toml", []byte("[cluster]\nelim_dir = \"rel\"\n[hosts.a]\nelim_dir = \"x\"\n"))
	for _, want := range []string{"cluster.elim_dir", "hosts.a.elim_dir"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %s", err, want)
		}
	}
}
