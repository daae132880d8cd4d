package config

import (
	"testing"
	"time"
)

func TestElasticConfig(t *testing.T) {
	c, err := Parse("x.toml", []byte(`
[cluster]
default_queue = "normal"
[resources.awshost]
type = "boolean"
[providers.demo]
kind = "local"
[templates.cpu4]
provider = "demo"
max = 2
slots = 4
mem = "8GB"
resources = { awshost = true }
max_ttl = "2h"
price = 0.25
[templates.other]
provider = "demo"
max = 1
[queues.normal]
rc_hosts = ["awshost"]
rc_account = "teamA"
[queues.short]
`))
	if err != nil {
		t.Fatal(err)
	}
	tp := c.Templates["cpu4"]
	if tp.Name != "cpu4" || tp.Slots != 4 || tp.Mem != 8<<20 || tp.IdleTime != DefaultIdleTime ||
		tp.BootTimeout != DefaultBootTimeout || time.Duration(tp.MaxTTL)*time.Second != 2*time.Hour {
		t.Errorf("template: %+v", tp)
	}
	if o := c.Templates["other"]; o.Slots != 1 || len(o.Attributes()) != 0 {
		t.Errorf("defaults: %+v", o)
	}
	if got := tp.Attributes(); len(got) != 1 || got[0] != "awshost" {
		t.Errorf("attributes %v", got)
	}
	n, s := c.Queues["normal"], c.Queues["short"]
	if !n.AllowsTemplate(tp) || n.AllowsTemplate(c.Templates["other"]) || s.AllowsTemplate(tp) {
		t.Error("rc_hosts: normal allows cpu4 only (its awshost), short none")
	}
	if n.RCAccount != "teamA" || c.Providers["demo"].Kind != "local" {
		t.Errorf("queue %+v", n)
	}
}
