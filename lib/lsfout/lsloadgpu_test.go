package lsfout

import (
	"bytes"
	"testing"

	"xce/lib/api"
)

// lsload -gpu: a host per row with its GPU count and the average use of
// its shared-mode devices; hosts without GPUs are left out; an
// unavailable one shows its status only.
func TestLSLoadGPU(t *testing.T) {
	dev := func(i int32, mode string, ut, mut int32) *api.GpuDevice {
		return &api.GpuDevice{Index: i, ComputeMode: mode, UtilPct: ut, MemUtilPct: mut}
	}
	hosts := []*api.Host{
		{Name: "cpu001", State: api.HostState_HOST_OK},
		{Name: "gpu017", State: api.HostState_HOST_OK, Ngpus: 4, Gpus: []*api.GpuDevice{
			dev(0, "Default", 50, 20), dev(1, "Default", 25, 11), dev(2, "Exclusive_Process", 100, 90), dev(3, "Default", 0, 0)}},
		{Name: "gpu018-with-a-long-name", State: api.HostState_HOST_CLOSED, StatusDetail: "closed_Full", Ngpus: 2, Gpus: []*api.GpuDevice{
			dev(0, "Exclusive_Process", 10, 10), dev(1, "Exclusive_Process", 10, 10)}},
		{Name: "gpu019", State: api.HostState_HOST_OK, Ngpus: 1, Gpus: []*api.GpuDevice{dev(0, "Default", -1, -1)}},
		{Name: "gpu020", State: api.HostState_HOST_UNAVAIL, Ngpus: 8},
	}
	var b bytes.Buffer
	if err := WriteLSLoadGPU(&b, hosts, false); err != nil {
		t.Fatal(err)
	}
	b.WriteString("---- -w\n")
	if err := WriteLSLoadGPU(&b, hosts, true); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "lsload_gpu", b.String())
}
