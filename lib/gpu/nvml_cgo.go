//go:build cgo && linux

package gpu

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVML through NVIDIA's own Go binding (github.com/NVIDIA/go-nvml): it
// dlopens libnvidia-ml.so.1 at run time, so the binary has no link-time
// dependency on the driver, and a host without it gets
// ERROR_LIBRARY_NOT_FOUND from Init, which means "fall back".
func init() { nvmlDetect = detectNVML }

func detectNVML() (Inventory, bool, error) {
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return Inventory{}, false, nil // no driver: not an error
		}
		return Inventory{}, false, fmt.Errorf("nvml init: %s", nvml.ErrorString(ret))
	}
	defer nvml.Shutdown()
	inv := Inventory{Source: "nvml"}
	if v, ret := nvml.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		inv.Driver = v
	}
	n, ret := nvml.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return Inventory{}, false, fmt.Errorf("nvml device count: %s", nvml.ErrorString(ret))
	}
	for i := range n {
		h, ret := nvml.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return Inventory{}, false, fmt.Errorf("nvml device %d: %s", i, nvml.ErrorString(ret))
		}
		d := Device{Index: i, MemTotalMB: -1, MemUsedMB: -1, UtilPct: -1, MemUtilPct: -1, TempC: -1}
		if v, ret := h.GetUUID(); ret == nvml.SUCCESS {
			d.UUID = v
		}
		if v, ret := h.GetName(); ret == nvml.SUCCESS {
			d.Name = v
		}
		if m, ret := h.GetMemoryInfo(); ret == nvml.SUCCESS {
			d.MemTotalMB, d.MemUsedMB = int64(m.Total>>20), int64(m.Used>>20)
		}
		if u, ret := h.GetUtilizationRates(); ret == nvml.SUCCESS {
			d.UtilPct, d.MemUtilPct = int(u.Gpu), int(u.Memory)
		}
		if t, ret := h.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
			d.TempC = int(t)
		}
		if cur, _, ret := h.GetMigMode(); ret == nvml.SUCCESS {
			d.MIG = "Disabled"
			if cur == nvml.DEVICE_MIG_ENABLE {
				d.MIG = "Enabled"
			}
		}
		if m, ret := h.GetComputeMode(); ret == nvml.SUCCESS {
			d.ComputeMode = computeModes[m]
		}
		if p, ret := h.GetPerformanceState(); ret == nvml.SUCCESS && p <= 15 {
			d.PState = fmt.Sprintf("P%d", int(p))
		}
		inv.Devices = append(inv.Devices, d)
	}
	return inv, true, nil
}

// computeModes spell NVML's compute modes as nvidia-smi does.
var computeModes = map[nvml.ComputeMode]string{
	nvml.COMPUTEMODE_DEFAULT:           "Default",
	nvml.COMPUTEMODE_EXCLUSIVE_THREAD:  "Exclusive_Thread",
	nvml.COMPUTEMODE_PROHIBITED:        "Prohibited",
	nvml.COMPUTEMODE_EXCLUSIVE_PROCESS: "Exclusive_Process",
}
