package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A highly available controller on this machine: three candidates on
// loopback ports, each with its own directory and the same token, and
// workers that know them all. Commands reach the leader as a user's would
// on a worker host: XCE_CONTROLLERS names the candidates, and the local
// worker's socket gives the credential.

type ha struct {
	t       testing.TB
	root    string
	conf    string
	token   string
	addrs   []string
	cands   []*candProc
	workers []*workerProc
	work    string
	env     []string
}

type candProc struct {
	t    testing.TB
	addr string
	dir  string
	conf string
	cmd  *exec.Cmd
	log  *bytes.Buffer
	args []string // more of xced's flags
	env  []string // more of xced's environment
}

func newHA(t testing.TB, n int, clusterLines ...string) *ha {
	t.Helper()
	return newHAArgs(t, n, nil, clusterLines...)
}

// newHAArgs is newHA with more flags for candidate i's xced (nil: none).
func newHAArgs(t testing.TB, n int, args func(i int) []string, clusterLines ...string) *ha {
	t.Helper()
	root, err := os.MkdirTemp("", "xce-ha-")
	if err != nil {
		t.Fatal(err)
	}
	h := &ha{t: t, root: root, work: filepath.Join(root, "work")}
	os.MkdirAll(h.work, 0o755)
	for range n {
		h.addrs = append(h.addrs, freePort(t))
	}
	h.conf = filepath.Join(root, "xce.toml")
	quoted := make([]string, n)
	for i, a := range h.addrs {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	toml := fmt.Sprintf("[cluster]\ncontrollers = [%s]\n%s\n", strings.Join(quoted, ", "), strings.Join(clusterLines, "\n"))
	if err := os.WriteFile(h.conf, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	// One token for the cluster, in every candidate's directory.
	tok := make([]byte, 32)
	f, _ := os.Open("/dev/urandom")
	f.Read(tok)
	f.Close()
	h.token = filepath.Join(root, "cluster.token")
	if err := os.WriteFile(h.token, []byte(fmt.Sprintf("%x\n", tok)), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, a := range h.addrs {
		c := &candProc{t: t, addr: a, dir: filepath.Join(root, fmt.Sprintf("c%d", i)), conf: h.conf}
		if args != nil {
			c.args = args(i)
		}
		os.MkdirAll(c.dir, 0o700)
		b, _ := os.ReadFile(h.token)
		if err := os.WriteFile(filepath.Join(c.dir, "cluster.token"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		h.cands = append(h.cands, c)
	}
	t.Cleanup(func() {
		h.runQuiet("bkill", "-r", "-u", "all", "0")
		for _, w := range h.workers {
			w.stop()
		}
		for _, c := range h.cands {
			c.stop()
		}
		time.Sleep(100 * time.Millisecond)
		os.RemoveAll(root)
	})
	for _, c := range h.cands {
		c.start()
	}
	// Until a worker gives the commands a credential socket of its own,
	// the first candidate's serves.
	h.env = []string{"XCE_DIR=" + h.cands[0].dir, "XCE_CONTROLLERS=" + strings.Join(h.addrs, ","), "LSF_ENVDIR=" + filepath.Join(root, "noconf")}
	return h
}

func (c *candProc) start() {
	c.t.Helper()
	c.cmd = exec.Command(filepath.Join(binDir, "xced"), "--dir", c.dir, "--config", c.conf, "--listen", c.addr,
		"--terminate-interval", "1s", "--runlimit-grace", "2s")
	c.cmd.Args = append(c.cmd.Args, c.args...)
	if c.env != nil {
		c.cmd.Env = append(os.Environ(), c.env...)
	}
	if p := profileEnv("cand-" + filepath.Base(c.dir)); p != "" {
		c.cmd.Env = append(append(os.Environ(), c.env...), p)
	}
	if c.log == nil {
		c.log = &bytes.Buffer{}
	}
	fmt.Fprintf(c.log, "--- start %s\n", time.Now().Format(time.TimeOnly))
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := c.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
}

func (c *candProc) crash() {
	if c.cmd != nil {
		c.cmd.Process.Kill()
		c.cmd.Wait()
		c.cmd = nil
	}
}

func (c *candProc) stop() {
	stopProcess(c.cmd)
	c.cmd = nil
}

// worker starts a worker that knows every candidate.
func (h *ha) worker(name string, slots int) *workerProc {
	h.t.Helper()
	w := &workerProc{t: h.t, name: name, dir: filepath.Join(h.root, "w-"+name), slots: slots,
		addr: strings.Join(h.addrs, ","), token: h.token}
	h.workers = append(h.workers, w)
	w.start()
	if len(h.workers) == 1 {
		// The commands' credential comes from the first worker's socket
		// (it is up once the worker is).
		h.env[0] = "XCE_DIR=" + w.dir
		sock := filepath.Join(w.dir, "xced.sock")
		for i := 0; i < 400; i++ {
			if _, err := os.Stat(sock); err == nil {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	return w
}

func (h *ha) logs() string {
	var b strings.Builder
	for _, c := range h.cands {
		fmt.Fprintf(&b, "candidate %s:\n%s\n", c.addr, c.log)
	}
	for _, w := range h.workers {
		fmt.Fprintf(&b, "worker %s:\n%s\n", w.name, w.log)
	}
	return b.String()
}

func (h *ha) run(env []string, stdin, name string, args ...string) result {
	h.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Dir = h.work
	cmd.Env = append(append(append(os.Environ(), "PATH="+binDir+":"+os.Getenv("PATH")), h.env...), env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	return result{out.String(), errb.String(), code}
}

func (h *ha) runQuiet(name string, args ...string) {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = append(os.Environ(), h.env...)
	cmd.Run()
}

func (h *ha) must(name string, args ...string) string {
	h.t.Helper()
	r := h.run(nil, "", name, args...)
	if r.code != 0 {
		h.t.Fatalf("%s %v: exit %d\n%s%s\n%s", name, args, r.code, r.stdout, r.stderr, h.logs())
	}
	return r.stdout
}

func (h *ha) submit(args ...string) string {
	h.t.Helper()
	m := submittedRE.FindStringSubmatch(h.must("bsub", args...))
	if m == nil {
		h.t.Fatalf("bsub %v: no job id", args)
	}
	return m[1]
}

// leader waits for a leader and returns its index among the candidates
// (lsid's master line names it on the candidates' line).
func (h *ha) leader() int {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		r := h.run(nil, "", "lsid")
		out = r.stdout + r.stderr
		for i, c := range h.cands {
			if c.cmd != nil && strings.Contains(r.stdout, c.addr+" (leader)") {
				return i
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("no leader: lsid says\n%s\n%s", out, h.logs())
	return -1
}

func (h *ha) waitState(id string, want ...string) string {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var st string
	for time.Now().Before(deadline) {
		r := h.run(nil, "", "bjobs", "-a", "-noheader", "-o", "stat", id)
		st = strings.TrimSpace(r.stdout)
		for _, w := range want {
			if st == w {
				return st
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("job %s: state %q, want %v\n%s", id, st, want, h.logs())
	return ""
}

// allJobIDs lists every job id bjobs -a shows, once per line it shows.
func (h *ha) allJobIDs() []string {
	out := h.must("bjobs", "-a", "-u", "all", "-noheader", "-o", "jobid")
	return strings.Fields(out)
}

// The leader killed with SIGKILL under a storm of submissions: another
// candidate takes over within seconds, every submission that was
// acknowledged is there exactly once, and submitting goes on.
func TestHALeaderCrashUnderSubmissions(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 2)
	l := h.leader()

	var mu sync.Mutex
	acked := map[string]int{}
	var failed int
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := h.run([]string{"XCE_FAILOVER_TIMEOUT=30s"}, "", "bsub", "-H", "true")
				mu.Lock()
				if m := submittedRE.FindStringSubmatch(r.stdout); r.code == 0 && m != nil {
					acked[m[1]]++
				} else {
					failed++
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(2 * time.Second)
	killed := time.Now()
	h.cands[l].crash()
	mu.Lock()
	before := len(acked)
	mu.Unlock()
	// The first submission acknowledged after the kill.
	var took time.Duration
	for took == 0 {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		if len(acked) > before+4 {
			took = time.Since(killed)
		}
		mu.Unlock()
		if time.Since(killed) > 40*time.Second {
			close(stop)
			wg.Wait()
			t.Fatalf("no submission acknowledged 40 s after the leader's kill\n%s", h.logs())
		}
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("failover: submissions acknowledged again %v after the kill; %d acknowledged, %d refused", took.Round(time.Millisecond), len(acked), failed)

	l2 := h.leader()
	if l2 == l {
		t.Fatalf("the killed candidate leads")
	}
	seen := map[string]int{}
	for _, id := range h.allJobIDs() {
		seen[id]++
	}
	for id, n := range acked {
		if n != 1 {
			t.Errorf("job id %s acknowledged %d times", id, n)
		}
		if seen[id] != 1 {
			t.Errorf("acknowledged job %s is listed %d times on the new leader", id, seen[id])
		}
	}
	// The old leader comes back as a standby and catches up.
	h.cands[l].start()
	h.submit("-H", "true")
	if got := h.leader(); got != l2 {
		t.Logf("leadership moved again to %s", h.cands[got].addr)
	}
}

// The leader killed while jobs are being dispatched: each runs once, and
// every one ends with its own exit code.
func TestHALeaderCrashDuringDispatch(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 3)
	h.worker("hB", 3)
	l := h.leader()
	marks := filepath.Join(h.work, "marks")
	os.MkdirAll(marks, 0o777)
	os.Chmod(marks, 0o777)
	var ids []string
	for i := 0; i < 12; i++ {
		ids = append(ids, h.submit("-o", "/dev/null", fmt.Sprintf("echo x >> %s/$LSB_JOBID; sleep 1; exit %d", marks, i%3)))
	}
	time.Sleep(500 * time.Millisecond)
	h.cands[l].crash()
	for i, id := range ids {
		st := h.waitState(id, "DONE", "EXIT")
		want := "DONE"
		if i%3 != 0 {
			want = "EXIT"
		}
		if st != want {
			t.Errorf("job %s ended %s, want %s", id, st, want)
		}
		b, err := os.ReadFile(filepath.Join(marks, id))
		if err != nil || strings.Count(string(b), "x") != 1 {
			t.Errorf("job %s ran %d times (%v)", id, strings.Count(string(b), "x"), err)
		}
	}
}

// A leader cut off from the others (they are stopped) stops taking
// writes; the two, back, elect a leader and the cluster goes on. A
// leader frozen while the others elect another does not act when it
// wakes: it follows.
func TestHAPartitionedLeader(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 2)
	l := h.leader()
	id := h.submit("-H", "true")
	var others []*candProc
	for i, c := range h.cands {
		if i != l {
			others = append(others, c)
		}
	}
	for _, c := range others {
		c.cmd.Process.Signal(syscall.SIGSTOP)
	}
	time.Sleep(2 * time.Second)
	r := h.run([]string{"XCE_FAILOVER_TIMEOUT=3s"}, "", "bsub", "-H", "true")
	if r.code == 0 {
		t.Errorf("a minority leader took a submission: %s", r.stdout)
	}
	for _, c := range others {
		c.cmd.Process.Signal(syscall.SIGCONT)
	}
	h.leader()
	id2 := h.submit("-H", "true")

	// Freeze the leader now; the others elect one among themselves.
	l = h.leader()
	h.cands[l].cmd.Process.Signal(syscall.SIGSTOP)
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := h.run([]string{"XCE_FAILOVER_TIMEOUT=5s"}, "", "bsub", "-H", "true")
		if r.code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new leader while the old one is frozen\n%s", h.logs())
		}
	}
	id3 := h.submit("-H", "true")
	h.cands[l].cmd.Process.Signal(syscall.SIGCONT)
	time.Sleep(2 * time.Second)
	ids := h.allJobIDs()
	sort.Strings(ids)
	for _, want := range []string{id, id2, id3} {
		found := 0
		for _, got := range ids {
			if got == want {
				found++
			}
		}
		if found != 1 {
			t.Errorf("job %s listed %d times: %v", want, found, ids)
		}
	}
}

// badmin mbdrestart moves the leadership; a running job keeps running
// through it and ends with its exit code; an advance reservation made
// before is still there under the new leader; lsid and badmin showstatus
// show the candidates.
func TestHALeadershipTransfer(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 2)
	l := h.leader()
	id := h.submit("-o", "/dev/null", "sleep 3; exit 4")
	h.waitState(id, "RUN")
	tomorrow := time.Now().Add(24 * time.Hour).Truncate(time.Minute)
	iso := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	h.must("brsvadd", "-n", "1", "-m", "hA", "-u", me.Username, "-N", "kept", "-b", iso(tomorrow), "-e", iso(tomorrow.Add(time.Hour)))
	status := h.must("badmin", "showstatus")
	if !strings.Contains(status, "Master candidates:") || !strings.Contains(status, h.cands[l].addr+":") {
		t.Errorf("showstatus:\n%s", status)
	}
	if out := h.must("badmin", "mbdrestart"); !strings.Contains(out, "MBD restart initiated") {
		t.Errorf("mbdrestart: %q", out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for h.leader() == l {
		if time.Now().After(deadline) {
			t.Fatalf("the leadership did not move\n%s", h.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st := h.waitState(id, "EXIT"); st != "EXIT" {
		t.Fatal(st)
	}
	if out := h.must("brsvs", "kept"); !strings.Contains(out, "hA:0/1") {
		t.Errorf("the reservation under the new leader:\n%s", out)
	}
	// On a candidate's host XCE_DIR alone is enough: its lsf.conf names
	// the candidates, and a standby's redirect is followed.
	standby := h.cands[h.leader()].dir
	for _, c := range h.cands {
		if c.dir != standby {
			standby = c.dir
			break
		}
	}
	if r := h.run([]string{"XCE_DIR=" + standby, "XCE_CONTROLLERS="}, "", "bjobs", "-a", "-noheader", "-o", "jobid", id); r.code != 0 || strings.TrimSpace(r.stdout) != id {
		t.Errorf("bjobs through a standby's socket: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if code := strings.TrimSpace(h.must("bjobs", "-a", "-noheader", "-o", "exit_code", id)); code != "4" {
		t.Errorf("exit code %q, want 4", code)
	}
	if n := strings.Count(h.must("bhist", "-l", id), "Exited with exit code"); n != 1 {
		t.Errorf("the job ended %d times", n)
	}
}

// waitFollowers waits until the leader sees n candidates up (itself and
// n-1 followers).
func (h *ha) waitFollowers(n int) {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		out = h.run(nil, "", "lsid").stdout
		if strings.Count(out, "(follower)")+strings.Count(out, "(leader)") == n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("the candidates did not come back: %s\n%s", out, h.logs())
}

// The leader stopped with SIGTERM (a planned restart, an upgrade) hands
// over without a visible gap: every command sent meanwhile, reads and
// submissions alike, succeeds, and job ids go on one by one instead of
// jumping to the end of the block the old leader had reserved.
func TestHALeaderStopIsSeamless(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 2)
	l := h.leader()
	h.waitFollowers(3)
	last, _ := strconv.Atoi(h.submit("-o", "/dev/null", "true"))
	stopped := make(chan struct{})
	go func() { h.cands[l].stop(); close(stopped) }()
	var failures []string
	calls := 0
	for moved := false; !moved || calls < 6; calls++ {
		if r := h.run(nil, "", "bjobs", "-a", "-noheader", "-o", "jobid"); r.code != 0 {
			failures = append(failures, fmt.Sprintf("bjobs: exit %d: %s", r.code, r.stderr))
		}
		r := h.run(nil, "", "bsub", "-o", "/dev/null", "true")
		m := submittedRE.FindStringSubmatch(r.stdout)
		if r.code != 0 || m == nil {
			failures = append(failures, fmt.Sprintf("bsub: exit %d: %s%s", r.code, r.stdout, r.stderr))
		} else {
			id, _ := strconv.Atoi(m[1])
			if id != last+1 {
				failures = append(failures, fmt.Sprintf("job id %d after %d", id, last))
			}
			last = id
		}
		select {
		case <-stopped:
			moved = true
		default:
		}
		if calls > 2000 {
			t.Fatalf("the old leader did not stop\n%s", h.logs())
		}
	}
	if len(failures) > 0 {
		t.Errorf("%d of %d rounds of commands saw a failure across the handover:\n%s\n%s", len(failures), calls, strings.Join(failures, "\n"), h.logs())
	}
	if nl := h.leader(); nl == l {
		t.Errorf("the stopped candidate %d still leads", l)
	}
}
