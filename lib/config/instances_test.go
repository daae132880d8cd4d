package config

import (
	"slices"
	"strings"
	"testing"

	"xce/lib/resreq"
)

func TestInstances(t *testing.T) {
	c, err := Parse("x.toml", []byte(`
[resources.fpga]
instances = true
[hosts.a]
instances = { fpga = ["fpga0", "fpga1"] }
`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.IsInstance("fpga") || !c.Resources["fpga"].Consumable || !slices.Equal(c.InstanceResources(), []string{"fpga"}) {
		t.Errorf("fpga is not a consumable instance resource: %+v", c.Resources["fpga"])
	}
	if r, _, ok := c.Schema().Lookup("fpga"); !ok || r.Kind != resreq.Numeric || !r.Consumable {
		t.Errorf("the schema's fpga: %+v %v", r, ok)
	}
	if _, err := resreq.Parse("rusage[fpga=1]", resreq.WithSchema(c.Schema())); err != nil {
		t.Errorf("rusage[fpga=1]: %v", err)
	}
	again, err := Parse("y.toml", []byte(c.Effective()))
	if err != nil || !again.IsInstance("fpga") || !slices.Equal(again.Hosts["a"].Instances["fpga"], []string{"fpga0", "fpga1"}) {
		t.Errorf("Effective does not give the instances back: %v\n%s", err, c.Effective())
	}
	if got := ParseInstances(" fpga0, fpga1,,-"); !slices.Equal(got, []string{"fpga0", "fpga1"}) {
		t.Errorf("ParseInstances = %q", got)
	}
	for text, want := range map[string]string{
		"[resources.fpga]\ninstances = true\ntype = \"string\"\n":                                                    "resources.fpga.instances",
		"[resources.fpga]\ninstances = true\ntotal = 4\n":                                                            "resources.fpga.instances",
		"[resources.fpga]\n[hosts.a]\ninstances = { fpga = [\"f0\"] }\n":                                             "hosts.a.instances.fpga",
		"[resources.fpga]\ninstances = true\n[hosts.a]\ninstances = { fpga = [\"f0\", \"f0\"] }\n":                   "hosts.a.instances.fpga",
		"[resources.fpga]\ninstances = true\n[hosts.a]\ninstances = { fpga = [\"f0,f1\"] }\n":                        "hosts.a.instances.fpga",
		"[resources.fpga]\ninstances = true\n[hosts.a]\ninstances = { fpga = [\"f0\"] }\nresources = { fpga = 2 }\n": "hosts.a.resources.fpga",
	} {
		if _, err := Parse("x.toml", []byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want one naming %s", text, err, want)
		}
	}
}
