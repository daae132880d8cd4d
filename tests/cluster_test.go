package tests

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"xce/lib/testenv"
)

// A real cluster on this machine: a controller serving workers on a
// loopback port (its own host runs no jobs) and workers under their own
// names, each with its own directory.

// multi is a controller and its workers.
type multi struct {
	*cluster
	addr    string
	workers map[string]*workerProc
}

// workerProc is one `xced worker`.
type workerProc struct {
	t     testing.TB
	name  string
	dir   string
	slots int
	addr  string
	token string
	cmd   *exec.Cmd
	log   *bytes.Buffer
	args  []string // more flags
}

// freePort is a loopback address nothing listens on now.
func freePort(t testing.TB) string {
	t.Helper()
	givenPortsMu.Lock()
	defer givenPortsMu.Unlock()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		// The kernel may hand a port out again once it is closed: two
		// calls before either user listens (a candidate's raft address
		// and another's --metrics) could get the same one, and a
		// candidate's handshake then reaches an HTTP server (EOF).
		if !givenPorts[addr] {
			givenPorts[addr] = true
			return addr
		}
	}
}

// givenPorts are the addresses freePort has returned in this process.
var (
	givenPortsMu sync.Mutex
	givenPorts   = map[string]bool{}
)

// shortHost is this host's name as xced names it.
func shortHost(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.IndexByte(h, '.'); i > 0 {
		h = h[:i]
	}
	return h
}

// newMulti starts a controller whose host only schedules, with the
// cluster settings given (TOML lines of [cluster]), and no workers yet.
func newMulti(t *testing.T, clusterLines ...string) *multi {
	t.Helper()
	addr := freePort(t)
	conf, err := os.CreateTemp("", "xce-cluster-*.toml")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conf, "[cluster]\n%s\n\n[hosts.%s]\nserver = false\n", strings.Join(clusterLines, "\n"), shortHost(t))
	conf.Close()
	t.Cleanup(func() { os.Remove(conf.Name()) })
	m := &multi{addr: addr, workers: map[string]*workerProc{}}
	m.cluster = newCluster(t, "--listen", addr, "--config", conf.Name())
	t.Cleanup(func() {
		for _, w := range m.workers {
			w.stop()
		}
	})
	return m
}

// worker starts (or starts again) the worker of host name.
func (m *multi) worker(name string, slots int) *workerProc {
	m.t.Helper()
	w := m.workers[name]
	if w == nil {
		w = &workerProc{t: m.t, name: name, dir: filepath.Join(m.dir, "w-"+name), slots: slots, addr: m.addr,
			token: filepath.Join(m.dir, "state", "cluster.token")}
		m.workers[name] = w
	}
	w.start()
	return w
}

func (w *workerProc) start() {
	w.t.Helper()
	w.cmd = exec.Command(filepath.Join(binDir, "xced"), "worker", "--controller", w.addr, "--token-file", w.token,
		"--dir", w.dir, "--name", w.name, "--slots", fmt.Sprint(w.slots), "--load-interval", "1s")
	// Its jobs' and tasks' cgroups under a scratch parent of its own.
	parent := "xce-e2e-" + strings.ReplaceAll(strings.Trim(w.dir, "/"), "/", "_")
	w.cmd.Env = append(os.Environ(), "XCE_CGROUP_PARENT="+parent)
	w.t.Cleanup(func() {
		// The worker first: until it has gone it makes its cgroups
		// again, and the harnesses stop their workers in cleanups of
		// their own that run after this one.
		w.stop()
		testenv.RemoveCgroupTree(parent)
	})
	w.cmd.Args = append(w.cmd.Args, w.args...)
	w.log = &bytes.Buffer{}
	w.cmd.Stdout, w.cmd.Stderr = w.log, w.log
	if err := w.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
}

// crash ends the worker with SIGKILL; its jobs keep running.
func (w *workerProc) crash() {
	if w.cmd != nil {
		w.cmd.Process.Kill()
		w.cmd.Wait()
		w.cmd = nil
	}
}

func (w *workerProc) stop() {
	stopProcess(w.cmd)
	w.cmd = nil
}

// waitHosts waits until bhosts shows each host with its status.
func (m *multi) waitHosts(want map[string]string) {
	m.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		out = m.run("", "bhosts", "-w", "-X").stdout // host by host, condensed compute units too
		ok := true
		for h, st := range want {
			found := false
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) > 1 && f[0] == h && f[1] == st {
					found = true
				}
			}
			ok = ok && found
		}
		if ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	var logs strings.Builder
	for _, w := range m.workers {
		fmt.Fprintf(&logs, "worker %s:\n%s\n", w.name, w.log)
	}
	m.t.Fatalf("hosts: want %v, bhosts -w:\n%s\nxced:\n%s\n%s", want, out, m.log, logs.String())
}

// crashRestart kills worker w with SIGKILL (its jobs run on) and starts
// it again once the controller has seen it go, then waits until it is
// back.
func (m *multi) crashRestart(w *workerProc) {
	m.t.Helper()
	w.crash()
	m.waitHosts(map[string]string{w.name: "unreach"})
	time.Sleep(500 * time.Millisecond)
	m.worker(w.name, w.slots)
	m.waitHosts(map[string]string{w.name: "ok"})
}

// waitStarted waits until the job's history has its start (the worker
// reported the job's process).
func (m *multi) waitStarted(id string) {
	m.t.Helper()
	var hist string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if hist = m.must("", "bhist", "-l", id); strings.Contains(hist, "Starting (Pid") {
			return
		}
	}
	m.t.Fatalf("job %s did not start:\n%s", id, hist)
}

// execHosts is a job's EXEC_HOST as bjobs -w prints it.
func (m *multi) execHosts(id string) string {
	return strings.TrimSpace(m.must("", "bjobs", "-a", "-noheader", "-o", "exec_host", id))
}

// A parallel job across three hosts gets LSF's parallel environment: one
// LSB_HOSTS entry per slot, host and count pairs in LSB_MCPU_HOSTS, a host
// file of one line per slot; bhosts, lshosts and lsload list the workers.
//
// A queue's per-host slot limit holds on each host only: a job of such a
// queue spreads over the hosts (it once pended for ever, the limit counted
// over the whole cluster).
func TestClusterParallelJob(t *testing.T) {
	m := newMulti(t, `default_queue = "normal"`, "\n[queues.normal]\n\n[queues.perhost]\nmax_slots_per_host = 1")
	for _, h := range []string{"hA", "hB", "hC"} {
		m.worker(h, 2)
	}
	m.waitHosts(map[string]string{"hA": "ok", "hB": "ok", "hC": "ok"})
	script := `echo "hosts=$LSB_HOSTS"
echo "mcpu=$LSB_MCPU_HOSTS"
echo "numproc=$LSB_DJOB_NUMPROC"
echo "hostfile=$(tr '\n' ' ' < $LSB_DJOB_HOSTFILE)"
`
	id := m.submit(script, "-n", "6", "-R", "span[ptile=2]", "-o", "par.out")
	m.waitState(id, "DONE")
	out, err := os.ReadFile(filepath.Join(m.work, "par.out"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"hosts=hA hA hB hB hC hC\n", "mcpu=hA 2 hB 2 hC 2\n", "numproc=6\n", "hostfile=hA hA hB hB hC hC \n"} {
		if !strings.Contains(got, want) {
			t.Errorf("job output lacks %q:\n%s", want, got)
		}
	}
	if eh := m.execHosts(id); eh != "2*hA:2*hB:2*hC" {
		t.Errorf("exec_host %q", eh)
	}
	spread := m.submit("true", "-q", "perhost", "-n", "3")
	m.waitState(spread, "DONE")
	if eh := m.execHosts(spread); eh != "hA:hB:hC" {
		t.Errorf("a 3-slot job of a queue of 1 slot per host ran on %q", eh)
	}
	ls := m.must("", "lshosts")
	for _, h := range []string{"hA", "hB", "hC"} {
		if !strings.Contains(ls, h+" ") {
			t.Errorf("lshosts lacks %s:\n%s", h, ls)
		}
	}
	if ld := m.must("", "lsload", "hB"); !strings.Contains(ld, "hB") || !strings.Contains(ld, "ok") {
		t.Errorf("lsload hB:\n%s", ld)
	}
	// A host the cluster does not know.
	if r := m.run("", "bhosts", "nohost"); r.code == 0 || !strings.Contains(r.stderr, "nohost: Bad host name") {
		t.Errorf("bhosts nohost: %d %q", r.code, r.stderr)
	}
}

// The controller killed while jobs finish on the workers: the workers keep
// the reports until the controller is back, and every job ends with its
// real exit code, once.
func TestClusterControllerCrash(t *testing.T) {
	m := newMulti(t)
	m.worker("hA", 2)
	m.worker("hB", 2)
	m.waitHosts(map[string]string{"hA": "ok", "hB": "ok"})
	var ids []string
	for i := 0; i < 4; i++ {
		ids = append(ids, m.submit("", "-o", fmt.Sprintf("crash%d.out", i), fmt.Sprintf("sleep 2; exit %d", i+1)))
	}
	for _, id := range ids {
		m.waitState(id, "RUN")
	}
	m.crash()
	time.Sleep(3 * time.Second) // the jobs end meanwhile
	m.start()
	for i, id := range ids {
		m.waitState(id, "EXIT")
		if code := strings.TrimSpace(m.must("", "bjobs", "-a", "-noheader", "-o", "exit_code", id)); code != fmt.Sprint(i+1) {
			t.Errorf("job %s: exit code %q, want %d", id, code, i+1)
		}
		hist := m.must("", "bhist", "-l", id)
		if n := strings.Count(hist, "Exited with exit code"); n != 1 {
			t.Errorf("job %s ended %d times:\n%s", id, n, hist)
		}
	}
}

// A worker killed mid-job and started again finds its job (through the
// controller) and reports how it really ended.
func TestClusterWorkerCrash(t *testing.T) {
	m := newMulti(t)
	w := m.worker("hA", 2)
	m.waitHosts(map[string]string{"hA": "ok"})
	id := m.submit("", "-o", "wcrash.out", "sleep 3; echo done; exit 7")
	// Mid-job: the worker has reported the job started (RUN alone is the
	// dispatch, which may precede the shepherd).
	m.waitStarted(id)
	m.crashRestart(w)
	m.waitState(id, "EXIT")
	if code := strings.TrimSpace(m.must("", "bjobs", "-a", "-noheader", "-o", "exit_code", id)); code != "7" {
		t.Errorf("exit code %q, want 7", code)
	}
	out, _ := os.ReadFile(filepath.Join(m.work, "wcrash.out"))
	if !strings.Contains(string(out), "done\n") {
		t.Errorf("output:\n%s", out)
	}
}

// A worker killed while it launches a job (at RUN, which is the dispatch:
// before, during or after it starts the shepherd) leaves the job neither
// lost nor run twice: the shepherd starts the job only once the worker
// has recorded it, so the restarted worker either finds it or finds it
// never started, and the controller dispatches it again. Either way the
// job ends once, with its own exit code.
func TestClusterWorkerCrashAtLaunch(t *testing.T) {
	m := newMulti(t)
	w := m.worker("hA", 2)
	m.waitHosts(map[string]string{"hA": "ok"})
	id := m.submit("", "-o", "lcrash.out", "echo run; sleep 1; exit 7")
	m.waitState(id, "RUN")
	m.crashRestart(w)
	m.waitState(id, "EXIT")
	if code := strings.TrimSpace(m.must("", "bjobs", "-a", "-noheader", "-o", "exit_code", id)); code != "7" {
		t.Errorf("exit code %q, want 7\n%s", code, m.must("", "bhist", "-l", id))
	}
	// The job ran once; if the crash came before its go, that once is
	// the second dispatch.
	time.Sleep(300 * time.Millisecond)
	if out, _ := os.ReadFile(filepath.Join(m.work, "lcrash.out")); strings.Count(string(out), "run\n") != 1 {
		t.Errorf("output:\n%s", out)
	}
}

// A host that stops answering: unreach at once, unavail after the grace
// (its jobs UNKWN), and after the failure timeout its rerunnable job runs
// elsewhere exactly once while the other one ends EXIT with the reason.
// When the host comes back, what is left of the rerun job there is
// terminated, and its late end changes nothing.
func TestClusterHostFailure(t *testing.T) {
	m := newMulti(t, `host_unavail_grace = "2s"`, `host_failure_timeout = "5s"`)
	a := m.worker("hA", 3)
	m.waitHosts(map[string]string{"hA": "ok"})
	runs := filepath.Join(m.work, "runs")
	rerun := m.submit("", "-r", "-o", "rerun.out", "echo run >> "+runs+"; echo restart=$LSB_RESTART; sleep 30")
	plain := m.submit("", "-o", "plain.out", "sleep 30")
	m.waitState(rerun, "RUN")
	m.waitState(plain, "RUN")
	m.worker("hB", 2)
	m.waitHosts(map[string]string{"hA": "ok", "hB": "ok"})
	t0 := time.Now()
	a.crash() // the host's jobs go on running, out of the controller's reach
	t.Logf("crash took %s", time.Since(t0))
	m.waitHosts(map[string]string{"hA": "unreach"})
	m.waitHosts(map[string]string{"hA": "unavail"})
	m.waitState(plain, "UNKWN")
	m.waitState(plain, "EXIT")
	m.waitState(rerun, "RUN")
	if eh := m.execHosts(rerun); eh != "hB" {
		t.Errorf("rerun job on %q, want hB", eh)
	}
	long := m.must("", "bjobs", "-l", plain)
	if !strings.Contains(strings.ReplaceAll(long, "\n                     ", ""), "TERM_REMOVE_HUNG_JOB") {
		t.Errorf("bjobs -l of the removed job:\n%s", long)
	}
	hist := m.must("", "bhist", "-l", rerun)
	if !strings.Contains(strings.ReplaceAll(hist, "\n                     ", ""), "its execution host hA failed") {
		t.Errorf("bhist -l of the rerun job:\n%s", hist)
	}
	// The host comes back: its stale instances are terminated, and the
	// rerun job keeps running where it runs now.
	m.worker("hA", 3)
	m.waitHosts(map[string]string{"hA": "ok"})
	time.Sleep(2 * time.Second)
	if st := m.stat(rerun); st != "RUN" {
		t.Errorf("rerun job %s after the host returned", st)
	}
	if eh := m.execHosts(rerun); eh != "hB" {
		t.Errorf("rerun job on %q after the host returned", eh)
	}
	b, _ := os.ReadFile(runs)
	if n := strings.Count(string(b), "run\n"); n != 2 {
		t.Errorf("the rerunnable job started %d times, want 2 (once, then once elsewhere)", n)
	}
	m.must("", "bkill", rerun)
	m.waitState(rerun, "EXIT")
}

// bpeek of a job running on another host reads it through that host's
// worker.
func TestClusterPeek(t *testing.T) {
	m := newMulti(t)
	m.worker("hA", 1)
	m.waitHosts(map[string]string{"hA": "ok"})
	id := m.submit("", "echo hello from hA; sleep 30")
	m.waitState(id, "RUN")
	var out string
	for i := 0; i < 100 && !strings.Contains(out, "hello"); i++ {
		time.Sleep(50 * time.Millisecond)
		out = m.run("", "bpeek", id).stdout
	}
	if out != "<< output from stdout >>\nhello from hA\n" {
		t.Errorf("bpeek: %q", out)
	}
	m.must("", "bkill", id)
	m.waitState(id, "EXIT")
}

// badmin hclose and hopen work on a remote host.
func TestClusterHostClose(t *testing.T) {
	m := newMulti(t)
	m.worker("hA", 1)
	m.worker("hB", 1)
	m.waitHosts(map[string]string{"hA": "ok", "hB": "ok"})
	m.must("", "badmin", "hclose", "hA")
	m.waitHosts(map[string]string{"hA": "closed_Adm"})
	id := m.submit("", "sleep 30")
	m.waitState(id, "RUN")
	if eh := m.execHosts(id); eh != "hB" {
		t.Errorf("job on %q with hA closed", eh)
	}
	m.must("", "badmin", "hopen", "hA")
	m.waitHosts(map[string]string{"hA": "ok", "hB": "closed_Full"})
	// The commands see the real cluster.
	if out := m.must("", "bjobs", "-noheader", "-o", "jobid", "-m", "hB"); strings.TrimSpace(out) != id {
		t.Errorf("bjobs -m hB: %q", out)
	}
	if r := m.run("", "bjobs", "-m", "hA"); !strings.Contains(r.stderr, "No unfinished job found") {
		t.Errorf("bjobs -m hA: %q %q", r.stdout, r.stderr)
	}
	if out := m.must("", "bhosts", "-l", "hB"); !strings.Contains(out, "HOST  hB") || !strings.Contains(out, "closed_Full") {
		t.Errorf("bhosts -l hB:\n%s", out)
	}
	if out := m.must("", "bhosts", "-o", "host_name status", "-json"); !strings.Contains(out, `"HOST_NAME":"hA"`) || !strings.Contains(out, `"HOST_NAME":"hB"`) {
		t.Errorf("bhosts -json:\n%s", out)
	}
	if out := m.must("", "lsid"); !strings.Contains(out, "My master name is "+shortHost(t)) {
		t.Errorf("lsid:\n%s", out)
	}
	m.must("", "bkill", "-m", "hB", "0")
	m.waitState(id, "EXIT")
}

// A worker without the cluster's token is refused, and the refusal is
// logged on both sides; the worker exits rather than retrying.
func TestClusterWrongToken(t *testing.T) {
	m := newMulti(t)
	bad := filepath.Join(m.dir, "bad.token")
	if err := os.WriteFile(bad, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command(filepath.Join(binDir, "xced"), "worker", "--controller", m.addr, "--token-file", bad,
		"--dir", filepath.Join(m.dir, "w-bad"), "--name", "hBad")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("the worker with a wrong token exited 0:\n%s", log.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the worker with a wrong token kept running:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "refused") {
		t.Errorf("the worker's log does not say it was refused:\n%s", log.String())
	}
	if !strings.Contains(m.log.String(), "bad cluster token") {
		t.Errorf("the controller's log does not say it refused a token:\n%s", m.log.String())
	}
	if out := m.run("", "bhosts", "-w").stdout; strings.Contains(out, "hBad") {
		t.Errorf("the refused worker's host is listed:\n%s", out)
	}
	// A token file others can read is not used at all.
	open := filepath.Join(m.dir, "open.token")
	b, _ := os.ReadFile(filepath.Join(m.dir, "state", "cluster.token"))
	os.WriteFile(open, b, 0o644)
	os.Chmod(open, 0o644)
	out, err := exec.Command(filepath.Join(binDir, "xced"), "worker", "--controller", m.addr, "--token-file", open,
		"--dir", filepath.Join(m.dir, "w-open"), "--name", "hOpen").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "open.token") {
		t.Errorf("a group-readable token file was accepted (%v):\n%s", err, out)
	}
	if fi, err := os.Stat(filepath.Join(m.dir, "state", "cluster.token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cluster.token: %v %v, want mode 0600", fi.Mode(), err)
	}
}

// A host that stops answering without closing its connection (a
// partition; here its worker is stopped with SIGSTOP): the controller's
// keepalives find it, the host goes unreach and then unavail with its job
// UNKWN; when it answers again its job is reconciled and ends with its
// real exit code. host_failure_timeout = 0 keeps the job waiting for it.
func TestClusterPartition(t *testing.T) {
	m := newMulti(t, `host_unavail_grace = "2s"`, `host_failure_timeout = "0s"`)
	w := m.worker("hA", 1)
	m.waitHosts(map[string]string{"hA": "ok"})
	id := m.submit("", "-o", "part.out", "sleep 4; exit 6")
	m.waitState(id, "RUN")
	w.cmd.Process.Signal(syscall.SIGSTOP)
	stopped := true
	defer func() {
		if stopped {
			w.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	m.waitHosts(map[string]string{"hA": "unavail"})
	m.waitState(id, "UNKWN")
	if out := m.must("", "bhosts", "-l", "hA"); strings.Contains(out, "r15s") && !strings.Contains(out, "unavail") {
		t.Errorf("bhosts -l of the unavailable host:\n%s", out)
	}
	time.Sleep(4 * time.Second) // the job ends while its host is away
	w.cmd.Process.Signal(syscall.SIGCONT)
	stopped = false
	m.waitHosts(map[string]string{"hA": "ok"})
	m.waitState(id, "EXIT")
	if code := strings.TrimSpace(m.must("", "bjobs", "-a", "-noheader", "-o", "exit_code", id)); code != "6" {
		t.Errorf("exit code %q, want 6", code)
	}
	hist := m.must("", "bhist", "-l", id)
	for _, want := range []string{"Unknown; unable to reach the execution host", "Exited with exit code 6"} {
		if !strings.Contains(strings.ReplaceAll(hist, "\n                     ", ""), want) {
			t.Errorf("bhist -l lacks %q:\n%s", want, hist)
		}
	}
}

// A rerunnable job whose only host failed waits for it; when the host
// returns, the instance still running there is terminated first, and only
// then does the job run again there, once, with the old instance's end
// not taken for the new one's.
func TestClusterRerunSameHost(t *testing.T) {
	m := newMulti(t, `host_unavail_grace = "1s"`, `host_failure_timeout = "2s"`)
	a := m.worker("hA", 2)
	m.waitHosts(map[string]string{"hA": "ok"})
	runs := filepath.Join(m.work, "runs")
	id := m.submit("", "-r", "-o", "same.out", "echo run >> "+runs+"; echo $$ >> "+runs+".pids; sleep 30")
	m.waitStarted(id)
	a.crash()
	m.waitState(id, "PEND") // requeued: its host failed
	m.worker("hA", 2)
	m.waitState(id, "RUN")
	time.Sleep(3 * time.Second) // the old instance's end (terminate interval 1s) has come by now
	if st := m.stat(id); st != "RUN" {
		t.Fatalf("the rerun job is %s after its old instance ended, want RUN\n%s\nxced:\n%s\nworker:\n%s", st, m.must("", "bhist", "-l", id), m.log, m.workers["hA"].log)
	}
	b, _ := os.ReadFile(runs)
	if n := strings.Count(string(b), "run\n"); n != 2 {
		t.Errorf("the job started %d times, want 2", n)
	}
	p, _ := os.ReadFile(runs + ".pids")
	if pids := strings.Fields(string(p)); len(pids) != 2 {
		t.Errorf("pids %q", p)
	} else if _, err := os.Stat("/proc/" + pids[0]); err == nil {
		t.Errorf("the old instance (pid %s) still runs beside the rerun", pids[0])
	}
	m.must("", "bkill", id)
	m.waitState(id, "EXIT")
}
