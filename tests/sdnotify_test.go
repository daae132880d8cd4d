package tests

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// notifySocket is a fake systemd: the unixgram socket a Type=notify
// service's NOTIFY_SOCKET names, whose datagrams arrive on msgs.
type notifySocket struct {
	path string
	msgs chan string
}

func newNotifySocket(t *testing.T) *notifySocket {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	n := &notifySocket{path: path, msgs: make(chan string, 1000)}
	go func() {
		buf := make([]byte, 4096)
		for {
			k, err := conn.Read(buf)
			if err != nil {
				close(n.msgs)
				return
			}
			for _, line := range strings.Split(strings.TrimSpace(string(buf[:k])), "\n") {
				select {
				case n.msgs <- line:
				default: // a test that stopped reading
				}
			}
		}
	}()
	return n
}

// wait returns when want arrives, calling at(want) then, and fails the
// test if it has not within d.
func (n *notifySocket) wait(t *testing.T, want string, d time.Duration, at func()) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-n.msgs:
			if !ok {
				t.Fatalf("the notify socket closed before %s", want)
			}
			if m == want {
				if at != nil {
					at()
				}
				return
			}
		case <-deadline:
			t.Fatalf("no %s on the notify socket within %v", want, d)
		}
	}
}

// TestSystemdNotify runs xced as systemd's Type=notify with a watchdog
// would: READY=1 comes once the commands' socket is served, WATCHDOG=1
// keeps coming from the scheduling loop, STOPPING=1 comes at SIGTERM.
func TestSystemdNotify(t *testing.T) {
	n := newNotifySocket(t)
	c := newClusterEnv(t, []string{"NOTIFY_SOCKET=" + n.path, "WATCHDOG_USEC=1000000"})
	sock := filepath.Join(c.dir, "state", "xced.sock")
	n.wait(t, "READY=1", 30*time.Second, func() {
		if _, err := os.Stat(sock); err != nil {
			t.Errorf("READY=1 before the socket is there: %v", err)
		}
	})
	// Half of WATCHDOG_USEC apart: several within a few seconds.
	for range 3 {
		n.wait(t, "WATCHDOG=1", 30*time.Second, nil)
	}
	c.must("", "bqueues")
	c.cmd.Process.Signal(os.Interrupt)
	n.wait(t, "STOPPING=1", 30*time.Second, nil)
	c.stop()
}

// TestSystemdNotifyWorker: xced worker pings the watchdog while it looks
// for a controller, says READY=1 only once registered with one, and
// STOPPING=1 at SIGTERM.
func TestSystemdNotifyWorker(t *testing.T) {
	m := newMulti(t)
	n := newNotifySocket(t)
	dir := filepath.Join(m.dir, "w-sd")
	start := func(addr string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(binDir, "xced"), "worker", "--controller", addr,
			"--token-file", filepath.Join(m.dir, "state", "cluster.token"), "--dir", dir, "--name", "sdnode", "--slots", "1")
		cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+n.path, "WATCHDOG_USEC=1000000")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	// No controller at this address: alive, not ready.
	cmd := start(freePort(t))
	for range 3 {
		select {
		case msg := <-n.msgs:
			if msg != "WATCHDOG=1" {
				t.Fatalf("a worker without a controller said %q", msg)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no WATCHDOG=1 from a worker looking for its controller")
		}
	}
	stopProcess(cmd)

	cmd = start(m.addr)
	defer stopProcess(cmd)
	n.wait(t, "READY=1", 30*time.Second, nil)
	m.waitHosts(map[string]string{"sdnode": "ok"})
	n.wait(t, "WATCHDOG=1", 30*time.Second, nil)
	cmd.Process.Signal(os.Interrupt)
	n.wait(t, "STOPPING=1", 30*time.Second, nil)
}
