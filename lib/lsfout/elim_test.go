package lsfout

import (
	"bytes"
	"strings"
	"testing"

	"xce/lib/api"
)

func TestLSLoadElimColumns(t *testing.T) {
	hosts := []*api.Host{
		{Name: "a", State: api.HostState_HOST_OK, ElimValues: map[string]string{"scratch": "120", "lic": "3"}},
		{Name: "b", State: api.HostState_HOST_OK, ElimValues: map[string]string{"scratch": ""}},
	}
	var b bytes.Buffer
	if err := WriteLSLoad(&b, hosts, LoadOptions{Long: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasSuffix(lines[0], "   lic scratch") {
		t.Errorf("header %q lacks the reported resources", lines[0])
	}
	if !strings.HasSuffix(lines[1], "     3     120") || !strings.HasSuffix(lines[2], "     -       -") {
		t.Errorf("rows:\n%s", b.String())
	}
	b.Reset()
	if err := WriteLSLoad(&b, hosts, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "scratch") {
		t.Errorf("lsload without -l shows reported resources:\n%s", b.String())
	}
}

// elimHosts are hosts reporting resources: a, b and c report scratch, b
// a string and c a stale one; a's scratch is partly reserved.
func elimHosts() []*api.Host {
	hs := longHosts()[:3]
	hs[0].ElimValues = map[string]string{"scratch": "500", "lic_avail": "3"}
	hs[0].Reserved = map[string]float64{"scratch": 120}
	hs[1].ElimValues = map[string]string{"scratch": "500", "fs_state": "degraded"}
	hs[2].ElimValues = map[string]string{"scratch": "", "lic_avail": "12.5"}
	return hs
}

// Goldens of the reported resources in bhosts -l, lshosts -s and
// lsload -s.
func TestReportedGoldens(t *testing.T) {
	for name, f := range map[string]func(*bytes.Buffer) error{
		"hosts_long_elim": func(b *bytes.Buffer) error { return WriteHostsLong(b, elimHosts(), testShared()[:1]) },
		"lshosts_shared_elim": func(b *bytes.Buffer) error {
			return WriteResourceValues(b, testShared(), (*api.SharedResource).GetTotal, ReportedRows(elimHosts(), nil, false), "-")
		},
		"lsload_shared_elim": func(b *bytes.Buffer) error {
			left := func(s *api.SharedResource) float64 { return max(0, s.GetTotal()-s.GetReserved()) }
			return WriteResourceValues(b, nil, left, ReportedRows(elimHosts(), []string{"scratch"}, true), "-")
		},
	} {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkGolden(t, name, b.String())
	}
}
