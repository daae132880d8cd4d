package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newElastic starts a controller whose host runs no jobs, with a local
// provider and the template lines given (TOML under [templates.cpu1]);
// queue normal may use every template.
func newElastic(t *testing.T, templateLines ...string) *multi {
	t.Helper()
	return newMulti(t, `default_queue = "normal"

[providers.demo]
kind = "local"

[templates.cpu1]
provider = "demo"
`+strings.Join(templateLines, "\n")+`

[queues.normal]
rc_hosts = ["all"]
`)
}

// requestedHosts adds up the hosts xced's log says it asked for.
func requestedHosts(log string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `msg="requesting hosts"`) {
			continue
		}
		_, after, _ := strings.Cut(line, " count=")
		var c int
		fmt.Sscan(after, &c)
		n += c
	}
	return n
}

// workersUnder lists the running `xced worker` processes whose command
// line names a directory under dir.
func workersUnder(dir string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) > 1 && args[1] == "worker" && strings.Contains(string(b), dir) {
			st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil || strings.Contains(string(st), ") Z ") {
				continue // ended, not reaped yet
			}
			// A worker's child between fork and exec (a shepherd being
			// started) still shows its parent's command line: it is the
			// same worker, not a second one.
			if f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:])); len(f) > 1 {
				if pb, err := os.ReadFile(filepath.Join("/proc", f[1], "cmdline")); err == nil && bytes.Equal(pb, b) {
					continue
				}
			}
			out = append(out, e.Name()+" "+strings.Join(args, " "))
		}
	}
	return out
}

// endWorkersUnder fails the test for each worker still running under
// dir, and kills it: a worker left running would be taken by a later
// test's local provider for its own instance of the same name.
func endWorkersUnder(t *testing.T, dir string) {
	for _, w := range workersUnder(dir) {
		t.Errorf("worker left behind: %s", w)
		if pid, err := strconv.Atoi(strings.Fields(w)[0]); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// The Show: a controller that runs no jobs itself and a template
// of max = 2: five pending jobs bring up exactly two hosts, all five run,
// the hosts go back after idle_time, and no worker is left.
func TestElasticLocal(t *testing.T) {
	m := newElastic(t, `max = 2`, `slots = 1`, `idle_time = "1s"`)
	t.Cleanup(func() { endWorkersUnder(t, m.dir) })
	// Five jobs that become pending together (held, then released).
	var ids []string
	for range 5 {
		ids = append(ids, m.submit("sleep 1", "-H"))
	}
	m.must("", "bresume", ids...)
	// A job waiting for supply says so, before the request goes out or
	// after (a fast provider leaves little time to see either; the
	// wording of each is lib/provision's test).
	const waiting = "Waiting for 2 hosts of template cpu1 ("
	var why string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(30 * time.Millisecond) {
		why = m.run("", "bjobs", "-p", "-u", "all").stdout
		if strings.Contains(why, waiting) || strings.Contains(m.must("", "bjobs", "-noheader", "-o", "stat", ids[0]), "RUN") {
			break
		}
	}
	if !strings.Contains(why, waiting) || !strings.Contains(why, "provider demo)") {
		t.Errorf("bjobs -p of jobs waiting for supply:\n%s\nxced:\n%s", why, m.log)
	}
	hosts := map[string]bool{}
	var rc string
	for _, id := range ids {
		m.waitState(id, "DONE")
		hosts[m.execHosts(id)] = true
		if !strings.Contains(rc, "Allocated") {
			rc = m.run("", "bhosts", "-rconly", "-w").stdout
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for h := range hosts {
			if !yield(h) {
				return
			}
		}
	})
	if len(names) != 2 || !strings.HasPrefix(names[0], "cpu1-") || !strings.HasPrefix(names[1], "cpu1-") {
		t.Fatalf("the five jobs ran on %v, want two cpu1 hosts\nxced:\n%s", names, m.log)
	}
	// The hosts go back once idle_time has passed without jobs.
	var out string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out = m.run("", "bhosts", "-w").stdout
		if !strings.Contains(out, "cpu1-") && len(workersUnder(m.dir)) == 0 {
			break
		}
	}
	if strings.Contains(out, "cpu1-") {
		t.Fatalf("provisioned hosts not returned:\n%s\nxced:\n%s", out, m.log)
	}
	// While they ran, bhosts -rconly showed them with LSF's columns.
	if !strings.Contains(rc, "RC_STATUS") || !strings.Contains(rc, "INSTANCE_ID") || !strings.Contains(rc, "Allocated") || !strings.Contains(rc, "cpu1-") {
		t.Errorf("bhosts -rconly -w while the hosts ran:\n%s", rc)
	}
	// Every record is gone with its host; the template is listed.
	view := m.must("", "badmin", "rc", "view")
	if !strings.Contains(view, "cpu1") || strings.Contains(view, "INSTANCE_ID") {
		t.Errorf("badmin rc view after the return:\n%s", view)
	}
	// Never more than two instances were asked for.
	if n := requestedHosts(m.log.String()); n != 2 {
		t.Errorf("%d hosts asked for; want 2:\n%s", n, m.log)
	}
}

// badmin hdrain of a busy static host: no new jobs, closed_Drain while its
// job runs, drained once empty; hdecommission is refused until then, and
// then the host leaves and its worker stops.
func TestElasticDrainDecommission(t *testing.T) {
	m := newMulti(t)
	w := m.worker("hA", 1)
	m.waitHosts(map[string]string{"hA": "ok"})
	id := m.submit("sleep 2")
	m.waitStarted(id)
	m.must("", "badmin", "hdrain", "hA")
	m.waitHosts(map[string]string{"hA": "closed_Drain"})
	if r := m.run("", "badmin", "hdecommission", "hA"); r.code == 0 || !strings.Contains(r.stderr, "still runs 1 job") {
		t.Errorf("hdecommission of a busy host: %d %q", r.code, r.stderr)
	}
	next := m.submit("true")
	m.waitState(id, "DONE")
	m.waitHosts(map[string]string{"hA": "drained"})
	if st := m.stat(next); st != "PEND" {
		t.Errorf("a job started on a drained host: %s", st)
	}
	m.must("", "badmin", "hdecommission", "hA")
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case <-done:
		w.cmd = nil
	case <-time.After(20 * time.Second):
		t.Fatalf("the decommissioned host's worker did not stop:\n%s", w.log)
	}
	if out := m.run("", "bhosts", "-w").stdout; strings.Contains(out, "hA") {
		t.Errorf("bhosts still lists hA:\n%s", out)
	}
}

// kill -9 of the controller while hosts are being asked for and used: on
// restart the provisioner finds its instances by their records, none is
// asked for twice, every job runs, and the hosts still go back.
func TestElasticControllerCrash(t *testing.T) {
	m := newElastic(t, `max = 2`, `slots = 1`, `idle_time = "1s"`)
	t.Cleanup(func() { endWorkersUnder(t, m.dir) })
	var ids []string
	for range 4 {
		ids = append(ids, m.submit("sleep 2", "-H"))
	}
	m.must("", "bresume", ids...)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(workersUnder(m.dir)) > 0 {
			break
		}
	}
	m.crash()
	before := m.log.String()
	m.start()
	for _, id := range ids {
		m.waitState(id, "DONE")
	}
	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out = m.run("", "bhosts", "-w").stdout
		if !strings.Contains(out, "cpu1-") && len(workersUnder(m.dir)) == 0 {
			break
		}
	}
	if strings.Contains(out, "cpu1-") {
		t.Fatalf("provisioned hosts not returned:\n%s\nxced:\n%s", out, m.log)
	}
	// An instance recorded but not yet started when xced died is dropped
	// at the restart and asked for again: not a double.
	all := before + m.log.String()
	dropped := strings.Count(all, "instance not running after restart; dropped")
	if n := requestedHosts(all); n-dropped > 2 {
		t.Errorf("%d hosts asked for across the crash, %d dropped unstarted; want at most 2 started:\n%s", n, dropped, all)
	}
}
