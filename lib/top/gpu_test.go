package top

import (
	"testing"

	"xce/lib/api"
)

func TestGPUCell(t *testing.T) {
	h := &api.Host{Ngpus: 2}
	if got := gpuCell(h); got != "2" {
		t.Errorf("without a device list: %q", got)
	}
	h.Gpus = []*api.GpuDevice{{Index: 0, JobIds: []string{"3"}}, {Index: 1}}
	if got := gpuCell(h); got != "1/2" {
		t.Errorf("one of two held: %q", got)
	}
}
