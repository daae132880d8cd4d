package gpu

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTracker(t *testing.T) {
	bin, err := filepath.Abs("testdata/bin")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Setenv("XCE_FAKE_GPUS", "4")
	if inv := NewTracker(ctx, Options{SkipNVML: true}, time.Hour).Latest(); len(inv.Devices) != 4 || inv.Source != "nvidia-smi" {
		t.Errorf("4 GPUs: %+v", inv)
	}
	// A hung nvidia-smi: the tracker does not wait for it, and the host
	// has no GPUs meanwhile.
	t.Setenv("XCE_FAKE_GPUS", "hang")
	old := firstWait
	firstWait = 100 * time.Millisecond
	defer func() { firstWait = old }()
	if inv := NewTracker(ctx, Options{SkipNVML: true, Timeout: 30 * time.Second}, time.Hour).Latest(); len(inv.Devices) != 0 {
		t.Errorf("hung driver: %+v", inv)
	}
	var nilTracker *Tracker
	if inv := nilTracker.Latest(); len(inv.Devices) != 0 || inv.Source != "none" {
		t.Errorf("nil tracker: %+v", inv)
	}
}
