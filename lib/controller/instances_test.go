package controller

import (
	"slices"
	"testing"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/sched"
)

// TestWithInstances: a host's instances come from its elim when it
// reports them (a stale report: none), else from the configuration, and
// the resource's value is their number; an unavailable host has none.
func TestWithInstances(t *testing.T) {
	conf, err := config.Parse("x.toml", []byte("[resources.fpga]\ninstances = true\n[hosts.a]\ninstances = { fpga = [\"f0\", \"f1\"] }\n[hosts.b]\n"))
	if err != nil {
		t.Fatal(err)
	}
	schema := conf.Schema()
	_, idx, _ := schema.Lookup("fpga")
	for _, tc := range []struct {
		host      string
		elim      map[string]string
		connected bool
		want      []string
	}{
		{"a", nil, true, []string{"f0", "f1"}},
		{"b", map[string]string{"fpga": "x0,x1,x2"}, true, []string{"x0", "x1", "x2"}},
		{"a", map[string]string{"fpga": "x0"}, true, []string{"x0"}},
		{"a", map[string]string{"fpga": ""}, true, nil},
		{"b", nil, true, nil},
		{"a", nil, false, nil},
	} {
		h := withInstances(conf, schema, sched.Host{Name: tc.host, Values: schema.NewHost()}, &api.Host{ElimValues: tc.elim}, tc.connected)
		got, listed := h.Instances["fpga"]
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %v connected=%v: instances %v, want %v", tc.host, tc.elim, tc.connected, got, tc.want)
		}
		if listed && h.Values.Num[idx] != float64(len(tc.want)) {
			t.Errorf("%s %v: fpga = %v, want %d", tc.host, tc.elim, h.Values.Num[idx], len(tc.want))
		}
	}
}
