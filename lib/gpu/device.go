package gpu

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Device is one GPU as the host's driver reports it. Numbers the driver
// does not give ("[N/A]", "[Not Supported]") are -1.
type Device struct {
	Index int
	UUID  string
	// Name is the vendor's model name ("Tesla V100-SXM2-16GB"); Model
	// gives LSF's spelling.
	Name                  string
	MemTotalMB, MemUsedMB int64 // MiB
	UtilPct, MemUtilPct   int   // GPU and memory utilisation, %
	TempC                 int
	// MIG is the current MIG mode: "Enabled", "Disabled", or "" where the
	// device has none.
	MIG string
	// ComputeMode is "Default", "Exclusive_Process", "Exclusive_Thread"
	// or "Prohibited" ("" unknown).
	ComputeMode string
	PState      string // "P0" ... ("" unknown)
}

// Model is the device's LSF model name (lshosts -gpu's gpu_model).
func (d *Device) Model() string { return ModelName(d.Name) }

// Inventory is what Detect found on a host.
type Inventory struct {
	// Source is "nvml", "nvidia-smi" or "none".
	Source  string
	Driver  string // driver version ("" unknown)
	Devices []Device
}

// Options tune Detect.
type Options struct {
	// SkipNVML goes straight to nvidia-smi.
	SkipNVML bool
	// Timeout bounds one nvidia-smi run (a hung driver must not hang the
	// worker); 0 means 10 s.
	Timeout time.Duration
}

// nvmlDetect reads the devices through NVML; ok is false where NVML is
// not there (no driver, no libnvidia-ml, a build without cgo).
// nvml_cgo.go sets it.
var nvmlDetect func() (inv Inventory, ok bool, err error)

// Detect finds the host's NVIDIA GPUs: through NVML, NVIDIA's library,
// loaded at run time, so that a host without the driver still starts;
// else through nvidia-smi found on PATH; else none. A host without GPUs
// (no library, no command, or "No devices were found") is 0 devices and
// no error. The error is for the log only: the inventory returned is
// always usable (Source "none" when nothing answered properly).
func Detect(ctx context.Context, o Options) (Inventory, error) {
	var nvmlErr error
	if nvmlDetect != nil && !o.SkipNVML {
		inv, ok, err := nvmlDetect()
		if ok && err == nil {
			return inv, nil
		}
		nvmlErr = err
	}
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return Inventory{Source: "none"}, nvmlErr
	}
	inv, err := querySMI(ctx, path, o.Timeout)
	if err != nil {
		return Inventory{Source: "none"}, errors.Join(nvmlErr, err)
	}
	return inv, nil
}

// smiFields are the nvidia-smi --query-gpu fields read, in this order.
var smiFields = []string{"index", "uuid", "name", "memory.total", "memory.used", "utilization.gpu",
	"utilization.memory", "temperature.gpu", "mig.mode.current", "compute_mode", "pstate", "driver_version"}

// querySMI runs nvidia-smi --query-gpu and parses its CSV.
func querySMI(ctx context.Context, path string, timeout time.Duration) (Inventory, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--query-gpu="+strings.Join(smiFields, ","), "--format=csv,noheader,nounits")
	cmd.WaitDelay = time.Second // a child that keeps the pipe open
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return Inventory{}, fmt.Errorf("%s: no answer within %v", path, timeout)
	}
	if err != nil {
		// Without GPUs nvidia-smi says so and exits non-zero (6).
		if strings.Contains(string(out), "No devices were found") {
			return Inventory{Source: "nvidia-smi"}, nil
		}
		msg := strings.TrimSpace(string(out))
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return Inventory{}, fmt.Errorf("%s: %w: %s", path, err, firstLine(msg))
	}
	inv, err := ParseSMI(string(out), smiFields)
	if err != nil {
		return Inventory{}, fmt.Errorf("%s: %w", path, err)
	}
	return inv, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// ParseSMI reads nvidia-smi --query-gpu=FIELDS --format=csv,noheader
// [,nounits] output, one device a line, with fields in the given order.
// It tolerates spaces, units (MiB, %, W), "[N/A]", "[Not Supported]" and
// similar bracketed words, blank lines and a header line.
func ParseSMI(out string, fields []string) (Inventory, error) {
	inv := Inventory{Source: "nvidia-smi"}
	for ln, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "index") || strings.Contains(line, "No devices were found") {
			continue
		}
		vals := strings.Split(line, ",")
		if len(vals) != len(fields) {
			return Inventory{}, fmt.Errorf("line %d: %d fields, expected %d (%s): %q", ln+1, len(vals), len(fields), strings.Join(fields, ","), line)
		}
		d := Device{Index: -1, MemTotalMB: -1, MemUsedMB: -1, UtilPct: -1, MemUtilPct: -1, TempC: -1}
		for i, f := range fields {
			v := strings.TrimSpace(vals[i])
			if strings.HasPrefix(v, "[") || v == "N/A" {
				v = "" // [N/A], [Not Supported], [Unknown Error], ...
			}
			switch f {
			case "index":
				n := smiInt(v)
				if n < 0 {
					return Inventory{}, fmt.Errorf("line %d: index %q is not a number", ln+1, vals[i])
				}
				d.Index = int(n)
			case "uuid":
				d.UUID = v
			case "name":
				d.Name = v
			case "memory.total":
				d.MemTotalMB = smiInt(v)
			case "memory.used":
				d.MemUsedMB = smiInt(v)
			case "utilization.gpu":
				d.UtilPct = int(smiInt(v))
			case "utilization.memory":
				d.MemUtilPct = int(smiInt(v))
			case "temperature.gpu":
				d.TempC = int(smiInt(v))
			case "mig.mode.current":
				d.MIG = v
			case "compute_mode":
				d.ComputeMode = v
			case "pstate":
				d.PState = v
			case "driver_version":
				inv.Driver = v
			}
		}
		if d.Index < 0 {
			d.Index = len(inv.Devices)
		}
		inv.Devices = append(inv.Devices, d)
	}
	return inv, nil
}

// smiInt reads "16160", "16160 MiB", "35 %", "35.0"; -1 when empty or
// not a number.
func smiInt(v string) int64 {
	v = strings.TrimSpace(v)
	if i := strings.IndexAny(v, " \t"); i >= 0 {
		v = v[:i]
	}
	v = strings.TrimRight(v, "%CWMiB")
	if v == "" {
		return -1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return -1
	}
	return int64(f + 0.5)
}
