package store

import (
	"errors"
	"testing"
)

// A reading well above the floor is kept for a while (statfs on every
// submission costs); a new floor, or a reading near it, is never served
// from it.
func TestCheckSpaceRoomyReading(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	free, err := FreeSpace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if free < 2*roomyMargin {
		t.Skipf("%d MB free here: too little to read as roomy", free>>20)
	}
	s.SetMinFree(1)
	if err := s.CheckSpace(); err != nil || s.roomy.Load() == 0 {
		t.Fatalf("far above the floor: %v, roomy %d", err, s.roomy.Load())
	}
	// A floor above the free space is seen at once.
	s.SetMinFree(free * 2)
	var full *SpaceError
	if err := s.CheckSpace(); !errors.As(err, &full) {
		t.Fatalf("below the floor: %v", err)
	}
	// Near the floor, nothing is kept: every call reads the disk.
	s.SetMinFree(free - roomyMargin/2)
	if err := s.CheckSpace(); err != nil {
		t.Fatalf("just above the floor: %v", err)
	}
	if s.roomy.Load() != 0 {
		t.Error("a reading near the floor was kept")
	}
}
