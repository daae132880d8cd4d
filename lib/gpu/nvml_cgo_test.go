//go:build cgo && linux

package gpu

import (
	"context"
	"os/exec"
	"testing"
)

// TestNVMLMatchesSMI runs on a host with an NVIDIA driver: NVML and the
// real nvidia-smi must describe the same devices.
func TestNVMLMatchesSMI(t *testing.T) {
	inv, ok, err := detectNVML()
	if err != nil {
		t.Fatalf("NVML is there but fails: %v", err)
	}
	if !ok {
		t.Skip("no NVIDIA driver on this host (NVML not found): the fake nvidia-smi tests are the evidence")
	}
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		t.Skip("NVML but no nvidia-smi on PATH")
	}
	smi, err := querySMI(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NVML: driver %s, %d devices", inv.Driver, len(inv.Devices))
	for _, d := range inv.Devices {
		t.Logf("  %d %s %q (%s) %d/%d MiB ut %d%% %dC MIG %q mode %s %s", d.Index, d.UUID, d.Name, d.Model(),
			d.MemUsedMB, d.MemTotalMB, d.UtilPct, d.TempC, d.MIG, d.ComputeMode, d.PState)
	}
	if len(smi.Devices) != len(inv.Devices) || smi.Driver != inv.Driver {
		t.Fatalf("nvidia-smi: driver %s, %d devices; NVML: %s, %d", smi.Driver, len(smi.Devices), inv.Driver, len(inv.Devices))
	}
	for i, a := range inv.Devices {
		b := smi.Devices[i]
		if a.Index != b.Index || a.UUID != b.UUID || a.Name != b.Name || a.MIG != b.MIG || a.ComputeMode != b.ComputeMode ||
			a.MemTotalMB < b.MemTotalMB-1 || a.MemTotalMB > b.MemTotalMB+1 {
			t.Errorf("device %d:\nNVML %+v\n smi %+v", i, a, b)
		}
	}
	d, err := Detect(context.Background(), Options{})
	if err != nil || d.Source != "nvml" {
		t.Errorf("Detect: %s, %v", d.Source, err)
	}
}
