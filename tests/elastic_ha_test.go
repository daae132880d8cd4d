package tests

import (
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// rcWorkers lists the provisioned hosts' worker processes under dir
// (their --dir is a provider's DIR/rc/INSTANCE), as "PID ARGS...".
func rcWorkers(dir string) []string {
	var out []string
	for _, w := range workersUnder(dir) {
		if strings.Contains(w, "/rc/") {
			out = append(out, w)
		}
	}
	return out
}

// kill -9 of the HA leader while it provisions: the candidate that takes
// over gets the provider's lease once the old one's has run out, finds
// the instances the old leader recorded (and started: the local
// provider's workers, in the old leader's directory), follows them; every
// job runs, no more than max instances ever run at once, and every one
// goes back when idle: none leaked, none doubled.
func TestElasticHALeaderKilledWhileProvisioning(t *testing.T) {
	h := newHA(t, 3, `default_queue = "normal"`, "", "[resources.awshost]", `type = "boolean"`, "",
		"[providers.demo]", `kind = "local"`, "",
		"[templates.cpu1]", `provider = "demo"`, `max = 2`, `slots = 1`, `idle_time = "1s"`, `resources = { awshost = true }`, "",
		"[queues.normal]", `rc_hosts = ["all"]`)
	t.Cleanup(func() {
		for _, w := range rcWorkers(h.root) {
			t.Errorf("worker left behind: %s", w)
			pid, _ := strconv.Atoi(strings.Fields(w)[0])
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	h.worker("hA", 1) // a static host for the commands' credential; the jobs need awshost
	lead := h.leader()
	var ids []string
	for range 3 {
		ids = append(ids, h.submit("-R", "select[awshost]", "sleep 2"))
	}
	waitFor(t, "a provisioned worker before the leader is killed", func() bool { return len(rcWorkers(h.root)) > 0 })
	h.cands[lead].crash()
	// How many provisioned workers run at once, from here on.
	var mu sync.Mutex
	most := 0
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			n := len(rcWorkers(h.root))
			mu.Lock()
			most = max(most, n)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	for _, id := range ids {
		h.waitState(id, "DONE")
	}
	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out = h.run(nil, "", "bhosts", "-w").stdout
		if !strings.Contains(out, "cpu1-") && len(rcWorkers(h.root)) == 0 {
			break
		}
	}
	close(stop)
	<-stopped
	if strings.Contains(out, "cpu1-") || len(rcWorkers(h.root)) > 0 {
		t.Fatalf("provisioned hosts not returned after the failover:\n%s\n%v\n%s", out, rcWorkers(h.root), h.logs())
	}
	if most > 2 {
		t.Errorf("%d provisioned workers ran at once; max is 2\n%s", most, h.logs())
	}
	all := h.logs()
	dropped := strings.Count(all, "instance not running after restart; dropped")
	if n := requestedHosts(all); n-dropped > 2 {
		t.Errorf("%d hosts asked for across the failover, %d dropped unstarted; want at most 2 started:\n%s", n, dropped, all)
	}
}
