package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"xce/lib/gpu"
	"xce/lib/hostload"
)

// TestHostReportsGPUs: what the agent registers and sends as load has
// the host's GPUs (here the fake nvidia-smi's 8), and a host without
// any reports 0.
func TestHostReportsGPUs(t *testing.T) {
	bin, err := filepath.Abs("../gpu/testdata/bin")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	for _, c := range []struct {
		fake string
		n    int
	}{{"8", 8}, {"0", 0}, {"fail", 0}} {
		t.Setenv("XCE_FAKE_GPUS", c.fake)
		ctx, cancel := context.WithCancel(context.Background())
		a := &agent{cfg: Config{Host: "h", Slots: 1}, sampler: hostload.New(hostload.Paths{}),
			gpus: gpu.NewTracker(ctx, gpu.Options{SkipNVML: true}, time.Hour)}
		h := a.host()
		cancel()
		if int(h.Ngpus) != c.n || len(h.Gpus) != c.n {
			t.Errorf("XCE_FAKE_GPUS=%s: ngpus %d, %d devices; want %d", c.fake, h.Ngpus, len(h.Gpus), c.n)
		}
		if c.n == 8 && (h.Gpus[7].Model != "TeslaV100_SXM2_32GB" || h.Gpus[7].ComputeMode != "Exclusive_Process" || h.GpuDriver != "550.54.15") {
			t.Errorf("device 7: %v, driver %q", h.Gpus[7], h.GpuDriver)
		}
	}
}
