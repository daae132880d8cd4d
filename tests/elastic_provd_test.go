package tests

import (
	"io"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// provProc is one `xced provisioner`.
type provProc struct {
	cmd *exec.Cmd
	log *syncBuf
}

// provisioner starts a provisioner daemon for m's controller with its
// directory dir and token file tok ("": the controller's
// provisioner.token).
func (m *multi) provisioner(dir, tok string, args ...string) *provProc {
	m.t.Helper()
	if tok == "" {
		tok = filepath.Join(m.dir, "state", "provisioner.token")
	}
	p := &provProc{log: &syncBuf{}}
	p.cmd = exec.Command(filepath.Join(binDir, "xced"), "provisioner", "--controller", m.addr, "--token-file", tok,
		"--dir", dir, "--log-level", "debug")
	p.cmd.Args = append(p.cmd.Args, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { stopProcess(p.cmd) })
	return p
}

// waitLog waits until the provisioner's log has want.
func (p *provProc) waitLog(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(p.log.String(), want) {
			return
		}
	}
	t.Fatalf("the provisioner's log has no %q:\n%s", want, p.log)
}

// waitReturned waits until no cpu1 host is listed and no worker runs
// under dir.
func (m *multi) waitReturned(dir string, logs ...*provProc) {
	m.t.Helper()
	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out = m.run("", "bhosts", "-w").stdout
		if !strings.Contains(out, "cpu1-") && len(workersUnder(dir)) == 0 {
			return
		}
	}
	var all strings.Builder
	for _, p := range logs {
		all.WriteString(p.log.String())
	}
	m.t.Fatalf("provisioned hosts not returned:\n%s\nworkers: %v\nprovisioners:\n%s\nxced:\n%s", out, workersUnder(dir), all.String(), m.log)
}

// A provisioner daemon serves a local-provider template end to end: the
// controller's own provisioner leaves the provider to it, it brings up the
// two hosts the jobs need under its own directory, and gives them back.
func TestElasticProvisionerDaemon(t *testing.T) {
	m := newElastic(t, `max = 2`, `slots = 1`, `idle_time = "1s"`)
	dir := filepath.Join(m.dir, "prov")
	t.Cleanup(func() { endWorkersUnder(t, m.dir) })
	maddr := freePort(t)
	p := m.provisioner(dir, "", "--metrics", maddr)
	p.waitLog(t, "provider leased; serving it")
	// Its metrics say it serves the provider.
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if r, err := http.Get("http://" + maddr + "/metrics"); err == nil {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if body = string(b); strings.Contains(body, "xce_provisioner_providers 1") {
				break
			}
		}
	}
	if !strings.Contains(body, "xce_provisioner_providers 1") || !strings.Contains(body, "xce_provisioner_connected 1") {
		t.Errorf("the provisioner's /metrics:\n%s", body)
	}
	var ids []string
	for range 4 {
		ids = append(ids, m.submit("sleep 1", "-H"))
	}
	m.must("", "bresume", ids...)
	hosts := map[string]bool{}
	for _, id := range ids {
		m.waitState(id, "DONE")
		hosts[m.execHosts(id)] = true
	}
	if len(hosts) != 2 {
		t.Errorf("the jobs ran on %v, want two cpu1 hosts\nprovisioner:\n%s", slices.Sorted(maps.Keys(hosts)), p.log)
	}
	if n := requestedHosts(p.log.String()); n != 2 {
		t.Errorf("the provisioner asked for %d hosts, want 2:\n%s", n, p.log)
	}
	if n := requestedHosts(m.log.String()); n != 0 {
		t.Errorf("the controller's own provisioner asked for %d hosts while the daemon held the provider:\n%s", n, m.log)
	}
	m.waitReturned(dir, p)
	if !strings.Contains(m.log.String(), "provider leased") {
		t.Errorf("xced's log does not show the lease:\n%s", m.log)
	}
}

// kill -9 of the provisioner while it asks for hosts: a second one (on
// the same directory, as provisioners that back each other up on one host
// are) takes the lease once the first stops renewing, finds the instances
// by their records, and nothing is leaked or asked for twice.
func TestElasticProvisionerTakeover(t *testing.T) {
	m := newElastic(t, `max = 2`, `slots = 1`, `idle_time = "1s"`)
	dir := filepath.Join(m.dir, "prov")
	t.Cleanup(func() { endWorkersUnder(t, m.dir) })
	a := m.provisioner(dir, "")
	a.waitLog(t, "provider leased; serving it")
	b := m.provisioner(dir, "")
	var ids []string
	for range 4 {
		ids = append(ids, m.submit("sleep 2", "-H"))
	}
	m.must("", "bresume", ids...)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(workersUnder(dir)) > 0 {
			break
		}
	}
	a.cmd.Process.Kill()
	a.cmd.Wait()
	b.waitLog(t, "provider leased; serving it")
	most := 0
	for _, id := range ids {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			out := m.run("", "bhosts", "-w").stdout
			most = max(most, strings.Count(out, "cpu1-"))
			if m.stat(id) == "DONE" {
				break
			}
		}
		m.waitState(id, "DONE")
	}
	m.waitReturned(dir, a, b)
	if most > 2 {
		t.Errorf("%d provisioned hosts at once, want at most 2", most)
	}
	// Asked for: what a asked, and what b asked again for instances a
	// recorded but had not started when it died (b drops those).
	logs := a.log.String() + b.log.String()
	dropped := strings.Count(b.log.String(), "instance not running after restart; dropped")
	if n := requestedHosts(logs); n-dropped > 2 {
		t.Errorf("%d hosts asked for, %d of them dropped before they started; want at most 2 that started:\n%s", n, dropped, logs)
	}
}

// A worker's cluster token does not make a provisioner: the controller
// refuses the handshake and the daemon says so and ends.
func TestElasticProvisionerWorkerTokenRefused(t *testing.T) {
	m := newElastic(t, `max = 1`)
	p := m.provisioner(filepath.Join(m.dir, "prov"), filepath.Join(m.dir, "state", "cluster.token"))
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		p.cmd = nil
		if err == nil {
			t.Fatalf("the provisioner with a worker's token exited 0:\n%s", p.log)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the provisioner with a worker's token still runs:\n%s", p.log)
	}
	if !strings.Contains(p.log.String(), "refused") {
		t.Errorf("the provisioner's log does not say it was refused:\n%s", p.log)
	}
	if !strings.Contains(m.log.String(), "bad cluster token") || !strings.Contains(m.log.String(), "role=provisioner") {
		t.Errorf("xced's log does not show the refusal:\n%s", m.log)
	}
}

// Under HA the leader runs the provisioner: a job that only a template
// can take gets its host from the leader's provider, and the host goes
// back once idle.
func TestElasticHALeaderProvisions(t *testing.T) {
	h := newHA(t, 3, `default_queue = "normal"`, "", "[providers.demo]", `kind = "local"`, "",
		"[templates.cpu1]", `provider = "demo"`, `max = 1`, `slots = 1`, `idle_time = "1s"`, "",
		"[queues.normal]", `rc_hosts = ["all"]`)
	t.Cleanup(func() { endWorkersUnder(t, h.root) })
	lead := h.leader()
	id := h.submit("true")
	h.waitState(id, "DONE")
	for i, c := range h.cands {
		if n := requestedHosts(c.log.String()); (i == lead) != (n == 1) {
			t.Errorf("candidate %d (leader %d) asked for %d hosts\n%s", i, lead, n, h.logs())
		}
	}
	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out = h.run(nil, "", "bhosts", "-w").stdout
		if !strings.Contains(out, "cpu1-") && len(workersUnder(h.root)) == 0 {
			return
		}
	}
	t.Fatalf("the provisioned host was not returned:\n%s\n%s", out, h.logs())
}
