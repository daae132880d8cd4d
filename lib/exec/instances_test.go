package exec

import (
	"slices"
	"testing"

	"xce/lib/api"
)

func TestInstanceEnv(t *testing.T) {
	hosts := []*api.HostSlots{
		{Host: "a", Slots: 2, Instances: []*api.InstanceAlloc{{Resource: "fpga", Names: []string{"fpga1", "fpga0"}}}},
		{Host: "b", Slots: 1},
		{Host: "c", Slots: 1, Instances: []*api.InstanceAlloc{{Resource: "nic", Names: []string{"mlx0"}}, {Resource: "fpga", Names: []string{"fpga3"}}}},
	}
	want := []string{"XCE_ALLOC_FPGA=fpga1,fpga0,fpga3", "XCE_ALLOC_NIC=mlx0"}
	if got := instanceEnv(hosts); !slices.Equal(got, want) {
		t.Errorf("instanceEnv = %q, want %q", got, want)
	}
	if got := instanceEnv(hosts[1:2]); got != nil {
		t.Errorf("no instances: %q", got)
	}
}
