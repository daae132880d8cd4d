package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
)

// startProfile starts a CPU profile into the file XCE_CPUPROFILE names, for
// finding where the controller's time goes under a load (make bench); the
// returned function writes it out. Without the variable it does nothing.
func startProfile() (stop func(), err error) {
	path := os.Getenv("XCE_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("XCE_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("XCE_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			slog.Warn("write the CPU profile", "file", path, "err", err)
		}
	}, nil
}
