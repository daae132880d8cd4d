package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fieldsOf returns the fields of the line of out whose first field is
// name (nil when there is none).
func fieldsOf(out, name string) []string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return f
		}
	}
	return nil
}

// A host configured in xce.toml is listed by bhosts, lshosts and lsload
// from the start, as LSF lists every host of lsf.cluster: unavail with
// unknown load and attributes until its worker joins; bsub -m takes its
// name, digits and all.
func TestClusterConfiguredHostsListed(t *testing.T) {
	m := newMulti(t, "\n[hosts.node01]\nslots = 2\n\n[hosts.gpu017]\nslots = 2\n\n[hosts.c3-14]\nslots = 2")
	bh := m.must("", "bhosts", "-w")
	for _, h := range []string{"node01", "gpu017", "c3-14"} {
		if f := fieldsOf(bh, h); len(f) < 2 || f[1] != "unavail" {
			t.Errorf("bhosts -w: %s is %q, want unavail:\n%s", h, f, bh)
		}
	}
	ls := m.must("", "lshosts", "-w")
	if f := fieldsOf(ls, "node01"); len(f) < 5 || f[1] != "UNKNOWN_AUTO_DETECT" || f[2] != "UNKNOWN_AUTO_DETECT" || f[4] != "-" {
		t.Errorf("lshosts -w: node01 is %q, want unknown type, model and ncpus:\n%s", f, ls)
	}
	// LSF's lsload prints an unavailable host's name and status only.
	ld := m.must("", "lsload")
	if f := fieldsOf(ld, "gpu017"); len(f) != 2 || f[1] != "unavail" {
		t.Errorf("lsload: gpu017 is %q, want unavail:\n%s", f, ld)
	}
	if f := fieldsOf(m.must("", "lsload", "c3-14"), "c3-14"); len(f) < 2 || f[1] != "unavail" {
		t.Errorf("lsload c3-14: %q", f)
	}
	for _, term := range []string{"node01", "gpu017", "c3-14", "node01+2", "others+1"} {
		if r := m.run("", "bsub", "-m", term, "-H", "true"); r.code != 0 {
			t.Errorf("bsub -m %s: %d %s", term, r.code, r.stderr)
		}
	}
	if r := m.run("", "bsub", "-m", "node0", "true"); r.code == 0 || !strings.Contains(r.stderr, "node0: Bad host name, host group name or cluster name") {
		t.Errorf("bsub -m node0: %d %q", r.code, r.stderr)
	}
	// A real GPU job script is accepted while the GPU hosts are down,
	// and pends (here: no host is up).
	gpuJob := m.submit("#!/bin/sh\n#BSUB -gpu \"num=1:mode=exclusive_process\"\n#BSUB -o /dev/null\nnvidia-smi\n")
	if why := m.pendReason(gpuJob); !strings.Contains(why, "Unable to reach slave batch server: 3 hosts") {
		t.Errorf("GPU job script: pending reason %q", why)
	}
	m.worker("node01", 2)
	m.waitHosts(map[string]string{"node01": "ok", "gpu017": "unavail"})
	// On an execution host without XCE_CONTROLLERS, a command says what
	// to set.
	r := m.runEnv([]string{"XCE_DIR=" + m.workers["node01"].dir, "XCE_CONTROLLERS=", "LSF_ENVDIR=" + t.TempDir()}, "bjobs")
	if r.code == 0 || !strings.Contains(r.stderr, "set XCE_CONTROLLERS=") {
		t.Errorf("bjobs on an execution host without XCE_CONTROLLERS: %d %q", r.code, r.stderr)
	}
	if f := fieldsOf(m.must("", "lshosts", "-w"), "node01"); len(f) < 2 || f[1] == "UNKNOWN_AUTO_DETECT" {
		t.Errorf("lshosts -w after node01 joined: %q", f)
	}

	// A host added to xce.toml is listed after badmin reconfig; one
	// removed that never joined goes.
	conf := m.args[len(m.args)-1]
	text, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	text = []byte(strings.Replace(string(text), "[hosts.c3-14]", "[hosts.n2-07]", 1))
	if err := os.WriteFile(conf, text, 0o644); err != nil {
		t.Fatal(err)
	}
	m.must("", "badmin", "reconfig")
	bh = m.must("", "bhosts", "-w")
	if f := fieldsOf(bh, "n2-07"); len(f) < 2 || f[1] != "unavail" {
		t.Errorf("bhosts -w after reconfig: n2-07 is %q, want unavail:\n%s", f, bh)
	}
	if f := fieldsOf(bh, "c3-14"); f != nil {
		t.Errorf("bhosts -w after reconfig still lists c3-14:\n%s", bh)
	}
	if f := fieldsOf(bh, "node01"); len(f) < 2 || f[1] != "ok" {
		t.Errorf("bhosts -w after reconfig: node01 is %q:\n%s", f, bh)
	}
}

// Two workers started with the same --name: the first keeps the host, the
// second is refused with a message that says why; once the first is
// really gone, a worker of that name joins again.
func TestClusterDuplicateWorkerName(t *testing.T) {
	m := newMulti(t)
	first := m.worker("node01", 2)
	m.waitHosts(map[string]string{"node01": "ok"})
	second := &workerProc{t: t, name: "node01", dir: filepath.Join(m.dir, "w-node01-again"), slots: 2, addr: m.addr, token: first.token}
	second.start()
	t.Cleanup(second.stop)
	const why = "host node01 is already connected"
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(second.log.String(), why) {
		if time.Now().After(deadline) {
			t.Fatalf("the second worker was not refused; its log:\n%s\nxced:\n%s", second.log.String(), m.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Some more of its retries, then the first still holds the host and
	// joined once.
	time.Sleep(3 * time.Second)
	if n := strings.Count(m.log.String(), `msg="worker joined" host=node01`); n != 1 {
		t.Errorf("node01 joined %d times, want 1; xced:\n%s", n, m.log)
	}
	if !strings.Contains(second.log.String(), "another worker runs with this name") {
		t.Errorf("the refusal does not say what to do:\n%s", second.log.String())
	}
	m.waitHosts(map[string]string{"node01": "ok"})
	id := m.submit("true", "-m", "node01")
	m.waitState(id, "DONE")
	// The first goes for good: the second, still retrying, takes over.
	first.crash()
	deadline = time.Now().Add(60 * time.Second)
	for strings.Count(m.log.String(), `msg="worker joined" host=node01`) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the second worker did not join after the first went; xced:\n%s", m.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	m.waitHosts(map[string]string{"node01": "ok"})
}
