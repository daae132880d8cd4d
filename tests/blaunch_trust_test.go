package tests

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Jobs that attack the way between their tasks and the controller: a
// blaunch stopped while its task writes, a task that leaves the task's
// session, and a task whose blaunch's worker and the controller restart.

// markedPids are the processes whose command line contains mark (and not
// blaunch's, whose words carry the task's).
func markedPids(mark string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(b, []byte(mark)) && !bytes.Contains(b, []byte("blaunch")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killMarked kills what a test left running with mark in its command
// line (the old code's orphans must not outlive the test).
func killMarked(t *testing.T, mark string) {
	t.Cleanup(func() {
		for range 3 {
			for _, p := range markedPids(mark) {
				syscall.Kill(p, syscall.SIGKILL)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// procField is a "Name: value kB"-style number of /proc/PID/FILE.
func procField(pid int, file, name string) int64 {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), file))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return -1
}

// A job stops its own blaunch while the task on another host writes
// 96 MiB: the task blocks on its pipe, the controller's and the workers'
// memory stay within a few MiB of what they were, and once blaunch is
// continued every byte arrives.
func TestBlaunchStoppedBackpressure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a controller and two workers")
	}
	m := newMulti(t)
	m.worker("h1", 1)
	m.worker("h2", 1)
	m.waitHosts(map[string]string{"h1": "ok", "h2": "ok"})
	size := 96<<20 + os.Getpid()%4096 // its own number: the marker of the writer
	mark := "head\x00-c\x00" + strconv.Itoa(size) + "\x00"
	killMarked(t, mark)
	script := `other=$(echo $LSB_MCPU_HOSTS | awk '{print $3}')
mkfifo bp.fifo
wc -c < bp.fifo > bp.count &
blaunch $other 'touch bp.started; while [ ! -e bp.go ]; do sleep 0.1; done; head -c ` + strconv.Itoa(size) + ` /dev/zero; touch bp.wrote' > bp.fifo &
bl=$!
while [ ! -e bp.started ]; do sleep 0.1; done
kill -STOP $bl
touch bp.stopped
while [ ! -e bp.cont ]; do sleep 0.2; done
kill -CONT $bl
wait $bl; echo "rc=$?"
wait
`
	id := m.submit(script, "-n", "2", "-R", "span[ptile=1]", "-o", "bp.out")
	waitFile(t, filepath.Join(m.work, "bp.stopped"))
	pids := map[string]int{"controller": m.cmd.Process.Pid}
	for n, w := range m.workers {
		pids["worker "+n] = w.cmd.Process.Pid
	}
	before := map[string]int64{}
	var marks []rssMark
	for n, p := range pids {
		before[n] = procField(p, "status", "VmRSS")
		marks = append(marks, markRSS(n, p))
	}
	os.WriteFile(filepath.Join(m.work, "bp.go"), nil, 0o644)

	// The writer stalls (no progress over a second) before it is done.
	var writer int
	blocked := false
	var last int64 = -1
	for end := time.Now().Add(90 * time.Second); time.Now().Before(end) && !blocked; time.Sleep(time.Second) {
		if _, err := os.Stat(filepath.Join(m.work, "bp.wrote")); err == nil {
			t.Fatalf("the task wrote all %d bytes while its blaunch was stopped: its output was queued, not held back", size)
		}
		if p := markedPids(mark); len(p) == 1 {
			writer = p[0]
		}
		if writer == 0 {
			continue
		}
		w := procField(writer, "io", "wchar")
		blocked = w > 0 && w == last
		last = w
	}
	if !blocked {
		t.Fatalf("the task's writer (pid %d) never blocked", writer)
	}
	if last >= int64(size) {
		t.Errorf("the writer wrote %d bytes of %d while its blaunch was stopped", last, size)
	}
	sort.Slice(marks, func(i, j int) bool { return marks[i].name < marks[j].name })
	reportRSS(t, "a stopped blaunch's task writes 96 MiB", marks...)
	for n, p := range pids {
		after := procField(p, "status", "VmRSS")
		if grew := after - before[n]; grew > 48<<10 {
			t.Errorf("%s: RSS grew by %d KiB (from %d KiB) while the stopped blaunch's task wrote", n, grew, before[n])
		}
	}

	os.WriteFile(filepath.Join(m.work, "bp.cont"), nil, 0o644)
	m.waitState(id, "DONE")
	b, _ := os.ReadFile(filepath.Join(m.work, "bp.out"))
	if out := jobOutput(t, string(b)); !strings.Contains(out, "rc=0\n") {
		t.Errorf("blaunch, continued: %q", out)
	}
	count, _ := os.ReadFile(filepath.Join(m.work, "bp.count"))
	if strings.TrimSpace(string(count)) != strconv.Itoa(size) {
		t.Errorf("blaunch passed on %q bytes, want %d", strings.TrimSpace(string(count)), size)
	}
}

// A task that starts `setsid sleep &` (out of its session and group)
// leaves nothing running once the job has ended.
func TestBlaunchSetsidChild(t *testing.T) {
	c := newCluster(t)
	n := "5" + strconv.Itoa(os.Getpid()%10000+10000)
	mark := "sleep\x00" + n + "\x00"
	killMarked(t, mark)
	id := c.submit("", "-o", "sid.out", "blaunch 'setsid sleep "+n+" </dev/null >/dev/null 2>&1 & sleep 1'")
	c.waitState(id, "DONE")
	if !blWaitProcs(t, mark, 0) {
		t.Errorf("the task's setsid child outlived its job: %v", markedPids(mark))
	}
}

// The controller and the worker of blaunch's host crash while a task on
// another host writes: the task is killed (nobody can hear it any more),
// and its host's worker says so once, not once per piece of output.
func TestBlaunchRestartNoOrphan(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a controller and two workers")
	}
	m := newMulti(t)
	m.worker("h1", 1)
	m.worker("h2", 1)
	m.waitHosts(map[string]string{"h1": "ok", "h2": "ok"})
	mark := "orphan-mark-" + strconv.Itoa(os.Getpid())
	killMarked(t, mark)
	id := m.submit(`other=$(echo $LSB_MCPU_HOSTS | awk '{print $3}')
blaunch $other 'while :; do head -c 65536 /dev/zero; sleep 0.01; done; : `+mark+`' > /dev/null
sleep 1000`, "-n", "2", "-R", "span[ptile=1]", "-o", "orphan.out")
	m.waitState(id, "RUN")
	if !blWaitProcs(t, mark, 1) {
		t.Fatal("the task did not start")
	}
	hosts := strings.Split(m.execHosts(id), ":")
	if len(hosts) != 2 {
		t.Fatalf("exec_host %q", m.execHosts(id))
	}
	for i, h := range hosts {
		if _, name, ok := strings.Cut(h, "*"); ok {
			hosts[i] = name
		}
	}
	from, to := hosts[0], hosts[1] // blaunch's host, the task's
	m.crash()
	m.workers[from].crash()
	time.Sleep(2 * time.Second) // the task writes on meanwhile
	m.start()
	m.worker(from, 1)
	m.waitHosts(map[string]string{"h1": "closed_Full", "h2": "closed_Full"}) // back, with the job
	if !blWaitProcs(t, mark, 0) {
		t.Errorf("the task on %s outlived the restart of the controller and of its blaunch's worker", to)
	}
	log := m.workers[to].log.String()
	if n := strings.Count(log, "lost"); n > 2 {
		t.Errorf("the worker of %s logged %d lines of lost output (want one per job):\n%.2000s", to, n, log)
	}
}

// linkProxy forwards TCP connections to addr, and cuts those it carries
// when told: a link lost while both ends stay up.
type linkProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newLinkProxy(t *testing.T, addr string) *linkProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &linkProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return p
}

func (p *linkProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// The link of blaunch's host to the controller is cut while both stay
// up: the task on the other host is killed (nobody can hear it), and
// blaunch ends, saying why, rather than waiting for an end that cannot
// reach it.
func TestBlaunchHostLinkCut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a controller and two workers")
	}
	m := newMulti(t)
	proxies := map[string]*linkProxy{}
	for _, h := range []string{"h1", "h2"} {
		proxies[h] = newLinkProxy(t, m.addr)
		w := &workerProc{t: t, name: h, dir: filepath.Join(m.dir, "w-"+h), slots: 1, addr: proxies[h].ln.Addr().String(),
			token: filepath.Join(m.dir, "state", "cluster.token")}
		m.workers[h] = w
		w.start()
	}
	m.waitHosts(map[string]string{"h1": "ok", "h2": "ok"})
	mark := "linkcut-mark-" + strconv.Itoa(os.Getpid())
	killMarked(t, mark)
	id := m.submit(`other=$(echo $LSB_MCPU_HOSTS | awk '{print $3}')
blaunch $other 'sleep 1000; : `+mark+`'
echo "blaunch rc=$?" > linkcut.rc
sleep 1000`, "-n", "2", "-R", "span[ptile=1]", "-o", "linkcut.out")
	m.waitState(id, "RUN")
	if !blWaitProcs(t, mark, 1) {
		t.Fatal("the task did not start")
	}
	hosts := strings.Split(m.execHosts(id), ":")
	if len(hosts) != 2 {
		t.Fatalf("exec_host %q", m.execHosts(id))
	}
	from := hosts[0] // blaunch's host
	if _, name, ok := strings.Cut(from, "*"); ok {
		from = name
	}
	proxies[from].cut()
	if !blWaitProcs(t, mark, 0) {
		t.Errorf("the task outlived the cut of its blaunch's host's link")
	}
	time.Sleep(100 * time.Millisecond) // the line written
	rc, _ := os.ReadFile(waitFile(t, filepath.Join(m.work, "linkcut.rc")))
	if !strings.Contains(string(rc), "rc=255") {
		t.Errorf("blaunch after the cut: %q", rc)
	}
	m.run("", "bkill", id)
}
