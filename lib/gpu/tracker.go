package gpu

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Tracker keeps a host's latest inventory: detected once when it starts
// and read again every interval (memory used, utilisation, temperature
// change; the device list normally does not). A host without GPUs is
// not asked again: a driver that was not there at start is not looked
// for (LSF_GPU_HARDWARE_CHANGE's default).
type Tracker struct {
	mu  sync.Mutex
	inv Inventory
}

// firstWait is how long NewTracker waits for the first detection: a hung
// driver (nvidia-smi answers within Options.Timeout or is killed) must not
// hold up the worker's start; its GPUs come when it answers.
var firstWait = 3 * time.Second

// NewTracker detects the host's GPUs now and, until ctx ends, again
// every interval (0: 10 s) where it found some. Detection errors are
// logged; the inventory is then the last good one (none at first). It
// waits for the first answer at most a few seconds.
func NewTracker(ctx context.Context, o Options, interval time.Duration) *Tracker {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	t := &Tracker{inv: Inventory{Source: "none"}}
	first := make(chan struct{})
	go func() {
		inv, err := Detect(ctx, o)
		if err != nil {
			slog.Warn("GPU detection", "err", err)
		}
		t.mu.Lock()
		t.inv = inv
		t.mu.Unlock()
		close(first)
		slog.Info("GPUs detected", "source", inv.Source, "count", len(inv.Devices), "driver", inv.Driver)
		if len(inv.Devices) > 0 {
			if inv.Source == "nvidia-smi" {
				o.SkipNVML = true
			}
			t.refresh(ctx, o, interval)
		}
	}()
	select {
	case <-first:
	case <-ctx.Done():
	case <-time.After(firstWait):
		slog.Warn("GPU detection has not answered yet; the host has no GPUs until it does", "waited", firstWait)
	}
	return t
}

func (t *Tracker) refresh(ctx context.Context, o Options, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		inv, err := Detect(ctx, o)
		if err != nil || len(inv.Devices) == 0 {
			if err != nil && ctx.Err() == nil {
				slog.Warn("GPU load", "err", err)
			}
			continue
		}
		t.mu.Lock()
		t.inv = inv
		t.mu.Unlock()
	}
}

// Latest is the latest inventory (a copy). A nil Tracker has none.
func (t *Tracker) Latest() Inventory {
	if t == nil {
		return Inventory{Source: "none"}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	inv := t.inv
	inv.Devices = append([]Device(nil), t.inv.Devices...)
	return inv
}
