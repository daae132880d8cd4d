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
