package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestJSONCarriesRaftLines(t *testing.T) {
	var b bytes.Buffer
	l, err := New(&b, Options{Format: "json", Level: "info"})
	if err != nil {
		t.Fatal(err)
	}
	l.Info("xced ready", "host", "a")
	h := HCLog(l, "raft", hclog.Warn)
	h.Info("heartbeat missed") // below raft's floor
	h.Named("transport").Warn("peer gone", "peer", "b:1")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", b.String())
	}
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q is not JSON: %v", line, err)
		}
	}
	if strings.Count(lines[1], `"component"`) != 1 {
		t.Errorf("component repeated: %s", lines[1])
	}
	var m map[string]any
	json.Unmarshal([]byte(lines[1]), &m)
	if m["level"] != "WARN" || m["msg"] != "peer gone" || m["component"] != "raft.transport" || m["peer"] != "b:1" {
		t.Errorf("raft's line = %v", m)
	}
}

func TestDebugOpensRaft(t *testing.T) {
	var b bytes.Buffer
	l, _ := New(&b, Options{Level: "debug"})
	HCLog(l, "raft", hclog.Warn).Info("entering follower state")
	if !strings.Contains(b.String(), `msg="entering follower state"`) || !strings.Contains(b.String(), "component=raft") {
		t.Errorf("text line = %q", b.String())
	}
}

func TestBadFlags(t *testing.T) {
	if _, err := New(&bytes.Buffer{}, Options{Format: "xml"}); err == nil || !strings.Contains(err.Error(), "text or json") {
		t.Errorf("format: %v", err)
	}
	if _, err := New(&bytes.Buffer{}, Options{Level: "loud"}); err == nil || !strings.Contains(err.Error(), "debug, info") {
		t.Errorf("level: %v", err)
	}
}
