package tests

import (
	"strings"
	"testing"
)

// TestClaimGPU: on a host with four GPUs a claim of one device holds it
// alone: bclaim list -l names it, the claim's -gpu job is given it in
// CUDA_VISIBLE_DEVICES, and an ordinary job asking for all four waits
// for free GPUs.
func TestClaimGPU(t *testing.T) {
	c := newGPUCluster(t, "4")
	if out := c.must("", "bclaim", "create", "g", "-R", "rusage[ngpus_physical=1]"); out != "Claim <g> is created\n" {
		t.Fatalf("bclaim create: %q", out)
	}
	dev := ""
	waitFor(t, "the claim to hold a device", func() bool {
		for _, l := range strings.Split(c.must("", "bclaim", "list", "-l", "g"), "\n") {
			if v, ok := strings.CutPrefix(l, " Instances: ngpus_physical="); ok {
				dev = v
			}
		}
		return dev != ""
	})
	mine, file := c.gpuJob("mine", "num=1", "-claim", "g")
	c.waitState(mine, "RUN")
	if got := cvd(c.waitFile(file)); got != dev {
		t.Errorf("the claim's job got CUDA_VISIBLE_DEVICES %q, want the claim's device %q", got, dev)
	}
	all, _ := c.gpuJob("all", "num=4")
	if why := c.pendReason(all); !strings.Contains(why, "free GPUs") || c.stat(all) != "PEND" {
		t.Errorf("a job for all four GPUs: %s, reason %q; want it to wait for free GPUs", c.stat(all), why)
	}
	c.must("", "bkill", mine, all)
}
