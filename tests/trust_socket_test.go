package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"
)

// The controller's socket, attacked as a local user would: xced must
// stay up, within its memory, and serve the others.

// h2Raw is a client of the socket that writes what frames it likes.
type h2Raw struct {
	nc     net.Conn
	fr     *http2.Framer
	goAway chan *http2.GoAwayFrame // the server's GOAWAY, or nil when it closed without one
}

func (c *cluster) sockPath() string { return filepath.Join(c.dir, "state", "xced.sock") }

// dialSocket connects to xced's socket (as uid when it is not negative:
// the connection's SO_PEERCRED is that uid's) and sends the preface and
// SETTINGS.
func (c *cluster) dialSocket(uid int) (*h2Raw, error) {
	nc, err := dialAs(uid, c.sockPath())
	if err != nil {
		return nil, err
	}
	r := &h2Raw{nc: nc, fr: http2.NewFramer(nc, nc), goAway: make(chan *http2.GoAwayFrame, 1)}
	// A write fails on a connection the server refused at once: what it
	// said is read all the same.
	if _, err := io.WriteString(nc, http2.ClientPreface); err == nil {
		r.fr.WriteSettings()
	}
	go func() {
		var ga *http2.GoAwayFrame
		for {
			f, err := r.fr.ReadFrame()
			if err != nil {
				r.goAway <- ga
				return
			}
			if g, ok := f.(*http2.GoAwayFrame); ok {
				cp := *g
				ga = &cp
			}
		}
	}()
	return r, nil
}

// dialAs connects to a Unix socket as uid: the calling thread alone takes
// uid as its effective uid for the connect(2), which is what the peer's
// SO_PEERCRED records, and takes root back.
func dialAs(uid int, sock string) (net.Conn, error) {
	if uid < 0 {
		return net.Dial("unix", sock)
	}
	runtime.LockOSThread()
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, ^uintptr(0), uintptr(uid), ^uintptr(0)); e != 0 {
		runtime.UnlockOSThread()
		return nil, e
	}
	nc, err := net.Dial("unix", sock)
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, ^uintptr(0), 0, ^uintptr(0)); e != 0 {
		// The thread stays locked, and ends with the goroutine.
		panic(fmt.Sprintf("take root back: %v", e))
	}
	runtime.UnlockOSThread()
	return nc, err
}

// closed waits for the server to close the connection and returns its
// GOAWAY, if it sent one.
func (r *h2Raw) closed(t *testing.T) *http2.GoAwayFrame {
	t.Helper()
	select {
	case ga := <-r.goAway:
		return ga
	case <-time.After(30 * time.Second):
		t.Fatal("xced kept the connection")
		return nil
	}
}

func xcedKB(t *testing.T, c *cluster, field string) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+) kB$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no %s in xced's status", field)
	}
	kb, _ := strconv.Atoi(string(m[1]))
	return kb
}

// One stream declares a 1-byte message, then sends DATA without end: xced
// closes the connection once the window is spent, its memory stays within
// 50 MB of idle, and it serves on. (The old server took all of it: 932 MB
// in 4.6 s, then the kernel killed it.)
func TestSocketDataFlood(t *testing.T) {
	c := newCluster(t)
	mark := markRSS("xced", c.cmd.Process.Pid)
	idle := xcedKB(t, c, "VmRSS")
	r, err := c.dialSocket(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.nc.Close()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, hf := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/xce.api.v1.Controller/Info"},
		{":authority", "localhost"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		enc.WriteField(hpack.HeaderField{Name: hf[0], Value: hf[1]})
	}
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	const most = 64 << 20 // sent at most
	chunk := make([]byte, 16<<10)
	sent, peak := 0, idle
	err = r.fr.WriteData(1, false, []byte{0, 0, 0, 0, 1, 'x'})
	for err == nil && sent < most {
		if err = r.fr.WriteData(1, false, chunk); err == nil {
			sent += len(chunk)
		}
		if sent%(1<<20) == 0 {
			peak = max(peak, xcedKB(t, c, "VmRSS"))
		}
	}
	peak = max(peak, xcedKB(t, c, "VmRSS"))
	t.Logf("xced's RSS idle %d KB, at most %d KB under the flood; %d KB sent", idle, peak, sent>>10)
	if err == nil {
		t.Fatalf("xced took %d MB on one stream and kept the connection", sent>>20)
	}
	if ga := r.closed(t); ga == nil || ga.ErrCode != http2.ErrCodeFlowControl {
		t.Fatalf("closed with %v, want a GOAWAY with FLOW_CONTROL_ERROR", ga)
	}
	reportRSS(t, "DATA flood on one stream", mark)
	if peak-idle > 50<<10 {
		t.Errorf("xced's RSS grew by %d MB under the flood", (peak-idle)>>10)
	}
	c.must("", "bqueues")
}

// An ordinary user holds more connections than the per-uid bound: those
// over it are closed, root's commands are served meanwhile, and the
// user's are once the connections close.
func TestSocketConnectionsPerUser(t *testing.T) {
	uid := testUser(t, "xcetest1")
	c := trustCluster(t)
	mark := markRSS("xced", c.cmd.Process.Pid)
	const bound, extra = 64, 16 // unixrpc.DefaultMaxConnsPerUID
	var held []*h2Raw
	defer func() {
		for _, r := range held {
			r.nc.Close()
		}
	}()
	for i := 0; i < bound+extra; i++ {
		r, err := c.dialSocket(uid)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, r)
	}
	// Those over the bound are closed with a GOAWAY that says why; the
	// others stay open.
	closed := make(chan *http2.GoAwayFrame, len(held))
	for _, r := range held {
		go func() { closed <- <-r.goAway }()
	}
	refused := 0
	timeout := time.After(30 * time.Second)
	for refused < extra {
		select {
		case ga := <-closed:
			if ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
				t.Fatalf("a connection closed with %v", ga)
			}
			refused++
		case <-timeout:
			t.Fatalf("%d connections of %d refused, want %d", refused, bound+extra, extra)
		}
	}
	select {
	case ga := <-closed:
		t.Fatalf("a connection within the bound closed, with %v", ga)
	case <-time.After(500 * time.Millisecond):
	}
	if r := c.runAs(uid, "", "bqueues"); r.code == 0 || !strings.Contains(r.stderr, "too many connections from uid") {
		t.Fatalf("a command of the user over its bound: exit %d, %q", r.code, r.stderr)
	}
	c.must("", "bqueues") // root is not bounded
	reportRSS(t, fmt.Sprintf("%d connections held by one user", bound+extra), mark)
	for _, r := range held {
		r.nc.Close()
	}
	held = nil
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := c.runAs(uid, "", "bqueues")
		if r.code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the user's command after its connections closed: %s", r.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// xced out of descriptors: its accept fails with EMFILE while a client
// holds them; it stays up, and serves once they are closed. (The old
// server's accept loop ended, and xced with it.)
func TestSocketOutOfDescriptors(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to lower xced's descriptor limit")
	}
	c := newCluster(t)
	pid := c.cmd.Process.Pid
	mark := markRSS("xced", pid)
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	limit := uint64(len(fds) + 32)
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: limit}, nil); err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	defer func() {
		for _, nc := range held {
			nc.Close()
		}
	}()
	for i := 0; i < 64; i++ {
		nc, err := net.Dial("unix", c.sockPath())
		if err != nil {
			break // the backlog is full: xced accepts no more
		}
		held = append(held, nc)
		nc.Write([]byte(http2.ClientPreface))
	}
	// Out of descriptors, xced's accepts fail; it must stay up.
	waitLog := time.Now().Add(30 * time.Second)
	for !bytes.Contains(c.log.Bytes(), []byte("too many open files")) {
		if time.Now().After(waitLog) {
			t.Fatalf("xced's accept never failed with EMFILE:\n%s", c.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, nc := range held {
		nc.Close()
	}
	held = nil
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r := c.run("", "bqueues"); r.code == 0 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("xced does not serve after its descriptors were freed: %s\n%s", r.stderr, c.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	reportRSS(t, "out of descriptors", mark)
}

// An ordinary user tries to hold 10,000 connections, each past its
// preface and SETTINGS, then idle (the attack that once made xced exit at
// about 20,000): it keeps 64, xced's memory stays flat, and root's and
// another user's commands are served meanwhile.
func TestSocketConnectionHold(t *testing.T) {
	uid := testUser(t, "xcetest1")
	other := testUser(t, "xcetest2")
	c := trustCluster(t)
	mark := markRSS("xced", c.cmd.Process.Pid)
	const tries = 10000
	var held []*h2Raw
	defer func() {
		for _, r := range held {
			r.nc.Close()
		}
	}()
	for len(held) < tries {
		r, err := c.dialSocket(uid)
		if errors.Is(err, syscall.EAGAIN) {
			time.Sleep(time.Millisecond) // the backlog is full: xced is accepting
			continue
		}
		if err != nil {
			t.Fatalf("connection %d: %v", len(held), err)
		}
		held = append(held, r)
	}
	time.Sleep(time.Second) // the last refusals
	open := 0
	for _, r := range held {
		select {
		case <-r.goAway:
		case <-time.After(2 * time.Millisecond):
			open++
		}
	}
	if open > 64+8 { // unixrpc.DefaultMaxConnsPerUID, and a few not yet refused
		t.Errorf("%d of the user's %d connections open", open, tries)
	}
	c.must("", "bqueues")
	if r := c.runAs(other, "", "bqueues"); r.code != 0 {
		t.Errorf("another user's bqueues while the connections are held: exit %d, %s", r.code, r.stderr)
	}
	reportRSS(t, fmt.Sprintf("%d connections tried by one user, %d held", tries, open), mark)
}

// fillWindows opens streams calls on a connection of uid's, each
// declaring a message of size bytes that it never ends, and sends as much
// of them as xced's flow-control windows let it, keeping to them (an
// attacker that overruns a window only loses its connection). It returns
// what it sent once xced has granted nothing more for a while; it stops
// when total (every connection's) reaches most.
func (c *cluster) fillWindows(t *testing.T, uid, streams int, size uint32, total *atomic.Int64, most int64) (int64, net.Conn) {
	nc, err := dialAs(uid, c.sockPath())
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	fr := http2.NewFramer(nc, nc)
	io.WriteString(nc, http2.ClientPreface)
	fr.WriteSettings()
	updates := make(chan [2]uint32, 1024) // stream (0: the connection), increment
	go func() {
		defer close(updates)
		rd := http2.NewFramer(nil, nc)
		for {
			f, err := rd.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.WindowUpdateFrame:
				updates <- [2]uint32{f.StreamID, f.Increment}
			case *http2.SettingsFrame:
				if v, ok := f.Value(http2.SettingInitialWindowSize); ok && !f.IsAck() {
					updates <- [2]uint32{^uint32(0), v - 65535}
				}
			}
		}
	}()
	connWin, streamWin, left := int64(65535), map[uint32]int64{}, map[uint32]int64{}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, hf := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/xce.api.v1.Controller/Info"},
		{":authority", "localhost"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		enc.WriteField(hpack.HeaderField{Name: hf[0], Value: hf[1]})
	}
	var ids []uint32
	for i := range streams {
		id := uint32(1 + 2*i)
		if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true}) != nil {
			return 0, nc
		}
		ids = append(ids, id)
		streamWin[id], left[id] = 65535, 5+int64(size)
	}
	chunk := make([]byte, 16<<10)
	var sent int64
	started := map[uint32]bool{}
	for total.Load() < most {
		progress := false
		for _, id := range ids {
			n := min(connWin, streamWin[id], left[id], int64(len(chunk)))
			if n < 5 {
				continue
			}
			data := chunk[:n]
			if !started[id] {
				started[id] = true
				data = append([]byte{0, byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size)}, chunk[:n-5]...)
			}
			if fr.WriteData(id, false, data) != nil {
				return sent, nc
			}
			connWin, streamWin[id], left[id], sent = connWin-n, streamWin[id]-n, left[id]-n, sent+n
			total.Add(n)
			progress = true
		}
		if progress {
			continue
		}
		select {
		case u, open := <-updates:
			if !open {
				return sent, nc
			}
			switch u[0] {
			case 0:
				connWin += int64(u[1])
			case ^uint32(0):
				for id := range streamWin {
					streamWin[id] += int64(u[1])
				}
			default:
				streamWin[u[0]] += int64(u[1])
			}
		case <-time.After(time.Second):
			return sent, nc
		}
	}
	return sent, nc
}

// An ordinary user fills every window xced grants it: 64 connections,
// each with 4 calls declaring 16 MiB requests it never ends. xced grants
// the user about 34 MiB in all (its per-uid budget) and no more, its memory
// stays bounded, and another user's bjobs is answered meanwhile. (Before
// the budget, each connection took 17 MiB: 1.1 GB for one user.)
func TestSocketWindowsPerUser(t *testing.T) {
	uid := testUser(t, "xcetest1")
	other := testUser(t, "xcetest2")
	c := trustCluster(t)
	mark := markRSS("xced", c.cmd.Process.Pid)
	const conns, streams = 64, 4 // unixrpc.DefaultMaxConnsPerUID
	// unixrpc.DefaultMaxBufferedPerUID (32 MiB), raised to two of a
	// connection's windows: the 16 MiB largest request, a 1 MiB stream
	// window and a frame header, twice.
	const budget = 2 * (16<<20 + 1<<20 + 5)
	const most = 4 * budget // sent at most, whatever xced grants
	var mu sync.Mutex
	var total atomic.Int64
	var held []net.Conn
	defer func() {
		for _, nc := range held {
			nc.Close()
		}
	}()
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, nc := c.fillWindows(t, uid, streams, 16<<20-64, &total, most)
			mu.Lock()
			defer mu.Unlock()
			if nc != nil {
				held = append(held, nc)
			}
		}()
	}
	wg.Wait()
	sent := total.Load()
	r := c.runAs(other, "", "bjobs", "-u", "all")
	if r.code != 0 && !strings.Contains(r.stderr, "No unfinished job found") {
		t.Errorf("another user's bjobs while the windows are full: exit %d, %s", r.code, r.stderr)
	}
	grew := reportRSS(t, fmt.Sprintf("%d connections × %d calls of one user fill the windows granted (%d MiB sent)", conns, streams, sent>>20), mark)
	if sent > budget {
		t.Errorf("xced took %d MiB of one user's unread requests, beyond its budget of %d MiB", sent>>20, budget>>20)
	}
	// Structural: the budget, the heap's doubling before a collection,
	// and the rest.
	if grew["xced"] > 4*budget>>10 {
		t.Errorf("xced's RSS grew by %d MiB", grew["xced"]>>10)
	}
}
