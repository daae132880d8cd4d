package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkerFormat(t *testing.T) {
	dir := t.TempDir()
	// A directory of the layout before the record: accepted and stamped.
	if err := checkWorkerFormat(dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, workerFormatFile)); err != nil || string(b) != "1\n" {
		t.Fatalf("recorded %q, %v", b, err)
	}
	if err := checkWorkerFormat(dir); err != nil {
		t.Fatalf("this release's own directory: %v", err)
	}
	// A later release's: refused with both formats named.
	os.WriteFile(filepath.Join(dir, workerFormatFile), []byte("7\n"), 0o644)
	err := checkWorkerFormat(dir)
	if err == nil || !strings.Contains(err.Error(), "worker state format 7 is newer than this xced (1)") {
		t.Fatalf("format 7: %v", err)
	}
}
