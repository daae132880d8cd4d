package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Interactive jobs on another host than bsub's: the worker of the job's
// host relays the terminal through the controller. The workers here all
// run on this machine under names of their own, so the job's host shows
// in what the job is told (LSB_HOSTS) and in bsub's "Starting on" line.

// syncBuf is a buffer written by a process and read while it runs.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// bsubProc is a bsub running in the background.
type bsubProc struct {
	t        *testing.T
	cmd      *exec.Cmd
	out, err syncBuf
	done     chan struct{}
	code     int
}

// startBsub starts bsub with env (XCE_DIR and the like) and stdin.
func startBsub(t *testing.T, dir string, env []string, stdin string, args ...string) *bsubProc {
	t.Helper()
	p := &bsubProc{t: t, done: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(binDir, "bsub"), args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(append(os.Environ(), "PATH="+binDir+":"+os.Getenv("PATH")), env...)
	if stdin != "" {
		p.cmd.Stdin = strings.NewReader(stdin)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for bsub to end (within a minute) and returns its exit code.
func (p *bsubProc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(60 * time.Second):
		p.t.Fatalf("bsub did not end\nstdout %q\nstderr %q", p.out.String(), p.err.String())
		return -1
	}
}

// waitOut waits until bsub's stdout holds s.
func (p *bsubProc) waitOut(s string) {
	p.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(p.out.String(), s) {
			return
		}
		select {
		case <-p.done:
			p.t.Fatalf("bsub ended (%d) before printing %q\nstdout %q\nstderr %q", p.code, s, p.out.String(), p.err.String())
		default:
		}
	}
	p.t.Fatalf("bsub never printed %q\nstdout %q\nstderr %q", s, p.out.String(), p.err.String())
}

// jobID is the job bsub submitted.
func (p *bsubProc) jobID() string {
	p.t.Helper()
	m := regexp.MustCompile(`Job <(\d+)> is submitted`).FindStringSubmatch(p.out.String())
	if m == nil {
		p.t.Fatalf("no job id in %q", p.out.String())
	}
	return m[1]
}

func (m *multi) env() []string { return []string{"XCE_DIR=" + filepath.Join(m.dir, "state")} }

// bsub -I to a named host: its input piped to the job there, its output
// and exit status back; the job runs where it was sent.
func TestClusterInteractive(t *testing.T) {
	m := newMulti(t)
	m.worker("hA", 1)
	m.worker("hB", 1)
	m.waitHosts(map[string]string{"hA": "ok", "hB": "ok"})
	p := startBsub(t, m.work, m.env(), "hi\nthere\n", "-I", "-m", "hB", "cat; echo host=$LSB_HOSTS; exit 4")
	if code := p.wait(); code != 4 {
		t.Fatalf("exit %d, want the job's 4\nstdout %q\nstderr %q\nxced:\n%s", code, p.out.String(), p.err.String(), m.log)
	}
	if !strings.HasSuffix(p.out.String(), "\nhi\nthere\nhost=hB\n") {
		t.Errorf("stdout %q", p.out.String())
	}
	if want := "<<Waiting for dispatch ...>>\n<<Starting on hB>>\n"; p.err.String() != want {
		t.Errorf("stderr %q, want %q", p.err.String(), want)
	}

	// -Ip: a pseudo-terminal there.
	p = startBsub(t, m.work, m.env(), "", "-Ip", "-m", "hA", "test -t 0 && test -t 1 && echo on-a-terminal-of-$LSB_HOSTS")
	if code := p.wait(); code != 0 || !strings.Contains(p.out.String(), "on-a-terminal-of-hA") {
		t.Fatalf("-Ip: exit %d stdout %q stderr %q", code, p.out.String(), p.err.String())
	}
}

// SIGINT to a waiting bsub -I reaches the remote job; bsub gone (killed)
// hangs the remote job up, which ends.
func TestClusterInteractiveSignals(t *testing.T) {
	m := newMulti(t)
	m.worker("hA", 2)
	m.waitHosts(map[string]string{"hA": "ok"})

	p := startBsub(t, m.work, m.env(), "", "-I", "-m", "hA",
		"trap 'echo got-int; exit 7' INT; echo ready; while :; do sleep 0.1; done")
	p.waitOut("ready")
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(); code != 7 || !strings.Contains(p.out.String(), "got-int") {
		t.Fatalf("after SIGINT: exit %d stdout %q stderr %q", code, p.out.String(), p.err.String())
	}

	p = startBsub(t, m.work, m.env(), "", "-I", "-m", "hA", "echo ready; sleep 600")
	p.waitOut("ready")
	id := p.jobID()
	p.cmd.Process.Kill()
	<-p.done
	m.waitState(id, "EXIT")
}

// The job's host going away: bsub says so and exits.
func TestClusterInteractiveHostLost(t *testing.T) {
	m := newMulti(t)
	w := m.worker("hA", 1)
	m.waitHosts(map[string]string{"hA": "ok"})
	p := startBsub(t, m.work, m.env(), "", "-I", "-m", "hA", "echo ready; sleep 600")
	p.waitOut("ready")
	w.crash()
	if code := p.wait(); code != 255 || !strings.Contains(p.err.String(), "<<Connection to the job lost: lost contact with host hA") {
		t.Fatalf("exit %d stdout %q stderr %q", code, p.out.String(), p.err.String())
	}
}

// bsub -Is to another host in a real terminal: a shell there, typed at
// as a person would; window size changes and Ctrl-C reach its
// terminal; exit's status is bsub's.
func TestClusterInteractiveShellInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: this end-to-end test of bsub -Is needs it (apt-get install tmux)")
	}
	m := newMulti(t)
	m.worker("hA", 1)
	m.worker("w2", 1)
	m.waitHosts(map[string]string{"hA": "ok", "w2": "ok"})
	s := &tmuxScreen{t: t, sock: filepath.Join(m.dir, "tmux.sock")}
	t.Cleanup(func() { exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	cmd := "env XCE_DIR=" + filepath.Join(m.dir, "state") + " PS1='job$ ' " + filepath.Join(binDir, "bsub") +
		" -Is -m w2 /bin/sh; echo bsub-exited-$?; sleep 600"
	s.tmux("new-session", "-d", "-s", "top", "-x", "100", "-y", "30", "-c", m.work, cmd)
	s.waitText("<<Starting on w2>>", "job$")
	s.keys(`echo "on-$LSB_HOSTS"; stty size`, "Enter")
	s.waitText("on-w2", "30 100")
	s.tmux("resize-window", "-t", "top", "-x", "120", "-y", "40")
	s.keys("clear; stty size", "Enter")
	s.waitText("40 120")
	s.keys("sleep 600", "Enter")
	time.Sleep(300 * time.Millisecond)
	s.tmux("send-keys", "-t", "top", "C-c")
	s.keys(`echo "status-$?"`, "Enter")
	s.waitText("status-130")
	s.keys("exit 3", "Enter")
	s.waitText("bsub-exited-3")
}

// Under HA (bsub reaches the leader over TCP), bsub -I runs on a worker
// and its terminal is relayed.
func TestHAInteractive(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 1)
	h.leader()
	p := startBsub(t, h.work, h.env, "hi\n", "-I", "cat; echo host=$LSB_HOSTS; exit 5")
	if code := p.wait(); code != 5 || !strings.HasSuffix(p.out.String(), "\nhi\nhost=hA\n") {
		t.Fatalf("exit %d stdout %q stderr %q\n%s", code, p.out.String(), p.err.String(), h.logs())
	}
}
