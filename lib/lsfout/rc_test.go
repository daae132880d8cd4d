package lsfout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

func TestWriteHostsRC(t *testing.T) {
	at := time.Date(2023, 11, 6, 23, 2, 26, 0, time.UTC).UnixNano()
	hosts := []*api.Host{
		{Name: "cpu4-2", State: api.HostState_HOST_OK, MaxSlots: 4, RcStatus: "Allocated", ProvStatus: "running", RcUpdatedAt: at, RcInstanceId: "cpu4-2"},
		{Name: "static1", State: api.HostState_HOST_OK, MaxSlots: 2},
	}
	var b bytes.Buffer
	if err := WriteHostsRC(&b, hosts, HostsOptions{Wide: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got:\n%s", b.String())
	}
	head := strings.Fields(lines[0])
	if got := strings.Join(head[len(head)-4:], " "); got != "RC_STATUS PROV_STATUS UPDATED_AT INSTANCE_ID" {
		t.Errorf("header %q", lines[0])
	}
	if f := strings.Fields(lines[1]); strings.Join(f[len(f)-4:], " ") != "Allocated running 2023-11-06T23:02:26UTC cpu4-2" {
		t.Errorf("provisioned host %q", lines[1])
	}
	if f := strings.Fields(lines[2]); strings.Join(f[len(f)-4:], " ") != "- - - -" {
		t.Errorf("static host %q", lines[2])
	}
}

func TestWriteSupply(t *testing.T) {
	v := &api.SupplyView{
		Templates: []*api.RCTemplateView{{Name: "cpu4", Provider: "demo", Max: 2, Slots: 4, Booting: 1, Allocated: 1, Demand: 0, IdleTimeSec: 600}},
		Instances: []*api.RCInstance{{Id: "cpu4-2", Template: "cpu4", RcStatus: "Allocated", ProvStatus: "running", RequestId: "req-1"}},
		Errors:    []*api.RCError{{Provider: "demo", Template: "cpu4", Message: "quota exceeded"}},
	}
	var b bytes.Buffer
	WriteSupply(&b, v)
	for _, want := range []string{"TEMPLATE", "cpu4             demo", "10m0s", "INSTANCE_ID", "req-1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("rc view lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	WriteSupplyErrors(&b, v)
	if !strings.Contains(b.String(), "provider demo template cpu4: quota exceeded") {
		t.Errorf("rc error:\n%s", b.String())
	}
}

// badmin rc view with every section: loans of shared resources and the
// providers' lease owners (who serves each provider, until when).
func TestWriteSupplyGolden(t *testing.T) {
	at := time.Date(2026, 3, 4, 10, 2, 11, 0, time.UTC).UnixNano()
	v := &api.SupplyView{
		Templates: []*api.RCTemplateView{{Name: "cpu4", Provider: "demo", Max: 2, Slots: 4, Booting: 1, Allocated: 1, Demand: 1, IdleTimeSec: 600, MaxTtlSec: 7200}},
		Instances: []*api.RCInstance{
			{Id: "cpu4-2", Template: "cpu4", RcStatus: "Allocated", ProvStatus: "running", RequestId: "req-1", UpdatedAt: at},
			{Id: "cpu4-3", Template: "cpu4", RcStatus: "Preprovision_Started", ProvStatus: "booting", RequestId: "req-1", UpdatedAt: at},
		},
		Requests: []*api.RCRequest{{Id: "req-1", Template: "cpu4", Count: 2, State: "requested", CreatedAt: at}},
		Borrows: []*api.RCBorrow{
			{Id: "loan-4", Resource: "lic_x", Provider: "lics", Amount: 2, State: "granted", UpdatedAt: at},
			{Id: "loan-5", Resource: "lic_x", Provider: "lics", Amount: 1, State: "returning", UpdatedAt: at, Error: "licence server down"},
		},
		Leases: []*api.RCLease{
			{Provider: "demo", Owner: "xced@hostA", Expires: at + 3e9},
			{Provider: "lics", Owner: "provisioner@hostB:4711:1a2b", Expires: at + 2e9},
		},
	}
	var b bytes.Buffer
	if err := WriteSupply(&b, v); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "rc_view", b.String())
}
