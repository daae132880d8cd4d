package api

import (
	"slices"
	"testing"
)

func TestExceptionNames(t *testing.T) {
	all := []string{"overrun", "underrun", "idle", "runtime_est_exceeded"}
	if got := ExceptionNames(ExceptionBits(all)); !slices.Equal(got, all) {
		t.Errorf("round trip: %v", got)
	}
	if got := ExceptionNames(ExceptionIdle | ExceptionOverrun); !slices.Equal(got, []string{"overrun", "idle"}) {
		t.Errorf("order: %v", got)
	}
	if ExceptionNames(0) != nil || ExceptionBits([]string{"nosuch"}) != 0 {
		t.Error("empty")
	}
}
