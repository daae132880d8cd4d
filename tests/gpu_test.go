package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newGPUCluster starts the single-host default with the fake nvidia-smi
// (lib/gpu/testdata/bin) first on xced's PATH, describing a host with
// gpus GPUs ("0", "4" or "8").
func newGPUCluster(t *testing.T, gpus string, args ...string) *cluster {
	t.Helper()
	bin, err := filepath.Abs("../lib/gpu/testdata/bin")
	if err != nil {
		t.Fatal(err)
	}
	return newClusterEnv(t, []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "XCE_FAKE_GPUS=" + gpus}, args...)
}

// jobOutput waits for a job to finish and returns its -o file.
func (c *cluster) jobOutput(id, path string) string {
	c.t.Helper()
	c.waitState(id, "DONE", "EXIT")
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && len(b) > 0 || time.Now().After(deadline) {
			return string(b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cvd is the CUDA_VISIBLE_DEVICES line a job printed.
func cvd(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "CVD="); ok {
			return v
		}
	}
	return "(none)"
}

func TestGPUPlacement(t *testing.T) {
	c := newGPUCluster(t, "4")
	out := filepath.Join(c.work, "p.out")
	id := c.submit("", "-gpu", "num=2", "-o", out, "sh", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES; echo ORDER=$CUDA_DEVICE_ORDER")
	got := c.jobOutput(id, out)
	if v := cvd(got); v != "0,1" {
		t.Errorf("CUDA_VISIBLE_DEVICES = %q, want 0,1\n%s", v, got)
	}
	if !strings.Contains(got, "ORDER=PCI_BUS_ID") {
		t.Errorf("no CUDA_DEVICE_ORDER=PCI_BUS_ID:\n%s", got)
	}
}
