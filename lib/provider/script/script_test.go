package script

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xce/lib/config"
	"xce/lib/provider"
)

func writeScripts(t *testing.T, scripts map[string]string) string {
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Scripts that follow LSF's provider interface: each reads -f FILE and
// answers JSON; the state lives in the script directory.
func TestScriptProvider(t *testing.T) {
	dir := writeScripts(t, map[string]string{
		"requestMachines.sh": `[ "$1" = -f ] || exit 2
cp "$2" "$(dirname "$0")/request.json"
echo '{"requestId":"req-77","message":"ok"}'`,
		"getRequestStatus.sh": `grep -q '"requestId":"req-77"' "$2" || exit 3
echo '{"requests":[{"requestId":"req-77","status":"running","machines":[
 {"machineId":"i-1","name":"cpu-1","status":"running","result":"succeed"},
 {"machineId":"i-2","name":"cloud-xyz","status":"pending","result":"executing"}]}]}'`,
		"requestReturnMachines.sh": `cp "$2" "$(dirname "$0")/return.json"; echo '{"requestId":"ret-1"}'`,
		"getReturnRequests.sh":     `echo '{"requests":[{"machine":"cpu-1","gracePeriod":0}]}'`,
		"getAvailableTemplates.sh": `echo '{"templates":[{"templateId":"cpu","maxNumber":4,"attributes":{"ncpus":["Numeric","4"]}}]}'`,
	})
	s := &Script{Dir: dir}
	ctx := context.Background()
	insts := []provider.Instance{{ID: "cpu-1", Host: "cpu-1"}, {ID: "cpu-2", Host: "cpu-2"}}
	id, err := s.Request(ctx, &config.Template{Name: "cpu"}, insts)
	if err != nil || id != "req-77" {
		t.Fatalf("request: %q %v", id, err)
	}
	in, _ := os.ReadFile(filepath.Join(dir, "request.json"))
	if !strings.Contains(string(in), `"templateId":"cpu"`) || !strings.Contains(string(in), `"machineCount":2`) {
		t.Errorf("requestMachines input: %s", in)
	}
	ms, err := s.Status(ctx, id, insts)
	if err != nil || len(ms) != 2 || ms[0].Status != provider.Running || ms[1].Status != provider.Booting || ms[1].Host != "cpu-2" {
		t.Fatalf("status: %+v %v", ms, err)
	}
	// A machine listed under another name before the one named takes
	// the instance no machine names, not the named one's.
	order := writeScripts(t, map[string]string{"getRequestStatus.sh": `echo '{"requests":[{"requestId":"r","machines":[
 {"machineId":"i-9","name":"cloud-abc","status":"running","result":"succeed"},
 {"machineId":"i-1","name":"cpu-1","status":"running","result":"succeed"}]}]}'`})
	ms, err = (&Script{Dir: order}).Status(ctx, "r", insts)
	if err != nil || len(ms) != 2 || ms[0].Host != "cpu-2" || ms[1].Host != "cpu-1" {
		t.Errorf("status of a renamed machine listed first: %+v %v", ms, err)
	}
	if err := s.Return(ctx, insts[:1]); err != nil {
		t.Fatal(err)
	}
	if ret, _ := os.ReadFile(filepath.Join(dir, "return.json")); !strings.Contains(string(ret), `"name":"cpu-1"`) {
		t.Errorf("requestReturnMachines input: %s", ret)
	}
	if back, err := s.Reclaimed(ctx, insts); err != nil || len(back) != 1 || back[0] != "cpu-1" {
		t.Errorf("reclaimed %v %v", back, err)
	}
	if ts, err := s.Templates(ctx); err != nil || ts["cpu"] != 4 {
		t.Errorf("templates %v %v", ts, err)
	}
}

// A script that fails, one that prints no JSON and one that hangs are
// errors that say so; the hanging one is killed at the deadline.
func TestScriptErrors(t *testing.T) {
	dir := writeScripts(t, map[string]string{
		"requestMachines.sh":       `echo "quota exceeded for account" >&2; exit 3`,
		"getRequestStatus.sh":      `echo not json`,
		"requestReturnMachines.sh": `sleep 30 & wait`,
	})
	s := &Script{Dir: dir, Timeout: 300 * time.Millisecond}
	ctx := context.Background()
	insts := []provider.Instance{{ID: "a", Host: "a"}}
	if _, err := s.Request(ctx, &config.Template{Name: "cpu"}, insts); err == nil || !strings.Contains(err.Error(), "quota exceeded for account") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("failing script: %v", err)
	}
	if _, err := s.Status(ctx, "r", insts); err == nil || !strings.Contains(err.Error(), "printed no JSON") {
		t.Errorf("no JSON: %v", err)
	}
	if err := s.Return(ctx, insts); err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("hanging script: %v", err)
	}
	// The provider's own timeout bounds a call whose context allows more
	// (the provisioner gives every call 60 s).
	long, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	if err := s.Return(long, insts); err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("hanging script under a longer deadline: %v", err)
	}
}
