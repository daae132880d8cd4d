package grpcapi

import (
	"errors"
	"fmt"
	"testing"
)

func TestLeaderOf(t *testing.T) {
	for _, leader := range []string{"hostb:7000", ""} {
		got, ok := LeaderOf(NotLeader(leader))
		if !ok || got != leader {
			t.Errorf("LeaderOf(NotLeader(%q)) = %q, %v", leader, got, ok)
		}
		got, ok = LeaderOf(fmt.Errorf("submit: %w", NotLeader(leader)))
		if !ok || got != leader {
			t.Errorf("wrapped: LeaderOf = %q, %v", got, ok)
		}
	}
	if _, ok := LeaderOf(errors.New("other")); ok {
		t.Error("a plain error is not a standby's answer")
	}
}
