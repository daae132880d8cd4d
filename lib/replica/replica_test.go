package replica

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc/credentials"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/store"
)

// roleCreds is a stand-in for the cluster handshake: the client sends one
// byte, its role.
type roleCreds struct{ role byte }

type roleInfo struct {
	credentials.CommonAuthInfo
	role byte
}

func (roleInfo) AuthType() string { return "role" }

func (c roleCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	b := make([]byte, 1)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(b); err != nil {
		return nil, nil, err
	}
	conn.SetReadDeadline(time.Time{})
	return conn, roleInfo{role: b[0]}, nil
}
func (c roleCreds) ClientHandshake(_ context.Context, _ string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	_, err := conn.Write([]byte{c.role})
	return conn, roleInfo{role: c.role}, err
}
func (roleCreds) Info() credentials.ProtocolInfo            { return credentials.ProtocolInfo{} }
func (c roleCreds) Clone() credentials.TransportCredentials { return c }
func (roleCreds) OverrideServerName(string) error           { return nil }
func isReplica(ai credentials.AuthInfo) bool                { r, ok := ai.(roleInfo); return ok && r.role == 'R' }
func dialReplica(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c, _, err = roleCreds{'R'}.ClientHandshake(ctx, addr, c)
	return c, err
}

type candidate struct {
	addr, dir string
	ln        net.Listener
	st        *store.Store
	mux       *Mux
	node      *Node
}

func (c *candidate) start(t testing.TB, all []string) error { return c.startJoining(t, all, nil) }

func (c *candidate) startJoining(t testing.TB, all []string, established func() bool) error {
	t.Helper()
	var err error
	if c.st == nil {
		if c.st, err = store.Open(filepath.Join(c.dir, "db")); err != nil {
			return err
		}
	}
	if c.ln, err = net.Listen("tcp", c.addr); err != nil {
		return err
	}
	c.mux = NewMux(c.ln, roleCreds{}, isReplica, dialReplica)
	// Short timeouts keep the failover tests quick, but not so short that
	// a leader starved of CPU (the race detector, other packages' tests
	// on two cores) loses its lease and steps down mid-test.
	c.node, err = Start(Config{ID: c.addr, Candidates: all, Dir: filepath.Join(c.dir, "raft"), Store: c.st, Stream: c.mux.Raft(),
		HeartbeatTimeout: 600 * time.Millisecond, ElectionTimeout: 600 * time.Millisecond, LeaderLeaseTimeout: 500 * time.Millisecond,
		Established: established})
	if err != nil {
		c.mux.Close()
		return err
	}
	c.st.SetReplicator(c.node.Replicate)
	return nil
}

func (c *candidate) stop() {
	if c.node != nil {
		c.node.Shutdown()
		c.node = nil
	}
	if c.mux != nil {
		c.mux.Close()
	}
	if c.st != nil {
		c.st.Close()
		c.st = nil
	}
}

func freeAddrs(t testing.TB, n int) []string {
	var out []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ln.Addr().String())
		ln.Close()
	}
	return out
}

func leaderOf(t testing.TB, cs []*candidate) *candidate {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, c := range cs {
			if c.node != nil && c.node.IsLeader() {
				if err := c.node.Establish(5 * time.Second); err != nil {
					t.Fatal(err)
				}
				return c
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no leader elected")
	return nil
}

func submit(st *store.Store, id int64) error {
	return st.Submit(&store.Submission{
		Spec:         &api.JobSpec{Command: "true", Queue: "normal"},
		EffectiveRaw: []byte{},
		Jobs:         []*api.Job{{JobId: id, State: api.JobState_PEND, Seq: 1}},
		Events:       []*api.Event{{JobId: id, Type: api.EventType_SUBMIT}},
	})
}

func jobs(t *testing.T, st *store.Store) int {
	t.Helper()
	l, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Jobs)
}

func waitJobs(t *testing.T, c *candidate, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for jobs(t, c.st) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d jobs, want %d", c.addr, jobs(t, c.st), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Three candidates: writes go through the leader to every store; a
// standby refuses writes naming the leader; the leader's death elects
// another that has every acknowledged write; the old leader catches up
// when it returns; a snapshot brings a wiped candidate back.
func TestThreeCandidates(t *testing.T) {
	addrs := freeAddrs(t, 3)
	var cs []*candidate
	for _, a := range addrs {
		c := &candidate{addr: a, dir: t.TempDir()}
		if err := c.start(t, addrs); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
		defer c.stop()
	}
	l := leaderOf(t, cs)
	for id := int64(1); id <= 20; id++ {
		if err := submit(l.st, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cs {
		waitJobs(t, c, 20)
		if c != l {
			err := submit(c.st, 99)
			if leader, ok := grpcapi.LeaderOf(err); !ok || leader != l.addr {
				t.Errorf("a standby's write: %v (leader %q), want a redirect to %s", err, leader, l.addr)
			}
		}
	}

	l.stop()
	var rest []*candidate
	for _, c := range cs {
		if c != l {
			rest = append(rest, c)
		}
	}
	l2 := leaderOf(t, rest)
	if jobs(t, l2.st) != 20 {
		t.Fatalf("the new leader holds %d jobs, want 20", jobs(t, l2.st))
	}
	for id := int64(21); id <= 30; id++ {
		if err := submit(l2.st, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.start(t, addrs); err != nil {
		t.Fatal(err)
	}
	waitJobs(t, l, 30)

	// Compact the log, wipe a follower: it gets the leader's snapshot.
	if err := l2.node.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	var f *candidate
	for _, c := range cs {
		if c != l2 {
			f = c
		}
	}
	f.stop()
	// Its store alone is ahead of its (lost) log: refused.
	if err := os.RemoveAll(filepath.Join(f.dir, "raft")); err != nil {
		t.Fatal(err)
	}
	if err := f.start(t, addrs); err == nil || !strings.Contains(err.Error(), "another cluster") {
		t.Fatalf("a store ahead of its log: %v", err)
	}
	f.stop()
	if err := os.RemoveAll(f.dir); err != nil {
		t.Fatal(err)
	}
	// Bootstrapping again with the same list is harmless: the leader's
	// term is higher.
	if err := f.start(t, addrs); err != nil {
		t.Fatal(err)
	}
	for id := int64(31); id <= 35; id++ {
		if err := submit(l2.st, id); err != nil {
			t.Fatal(err)
		}
	}
	waitJobs(t, f, 35)
}

// A candidate whose store began with other data refuses to follow.
func TestDivergentStoreRefused(t *testing.T) {
	addrs := freeAddrs(t, 2)
	a := &candidate{addr: addrs[0], dir: t.TempDir()}
	b := &candidate{addr: addrs[1], dir: t.TempDir()}
	var err error
	if b.st, err = store.Open(filepath.Join(b.dir, "db")); err != nil {
		t.Fatal(err)
	}
	if err := submit(b.st, 7); err != nil { // written before it was a candidate
		t.Fatal(err)
	}
	fatal := make(chan error, 1)
	if err := a.start(t, addrs); err != nil {
		t.Fatal(err)
	}
	defer a.stop()
	if err := b.start(t, addrs); err != nil {
		t.Fatal(err)
	}
	defer b.stop()
	b.node.fsm.fatal = func(err error) { fatal <- err }
	a.node.fsm.fatal = func(err error) { fatal <- err }
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, c := range []*candidate{a, b} {
			if c.node.IsLeader() {
				c.node.Establish(2 * time.Second)
			}
		}
		select {
		case err := <-fatal:
			if !strings.Contains(err.Error(), "began different") {
				t.Fatalf("refusal: %v", err)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("the divergent candidate followed")
}

// onLeader runs f on the leader, and again on the next one when the
// leadership moved meanwhile: under -race on a loaded machine a leader
// may miss its heartbeats' deadline and step down in the middle of a test.
func onLeader(t *testing.T, cs []*candidate, f func(l *candidate) error) *candidate {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l := leaderOf(t, cs)
		err := f(l)
		if err == nil {
			return l
		}
		_, redirect := grpcapi.LeaderOf(err)
		moved := redirect || errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrLeadershipTransferInProgress)
		if !moved || time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A candidate added later (it finds a leader, so it does not bootstrap)
// is sent the store when the leader's list names it; one taken out of the
// list is no longer a voter.
func TestAddAndRemoveCandidates(t *testing.T) {
	addrs := freeAddrs(t, 4)
	var cs []*candidate
	for _, a := range addrs[:3] {
		c := &candidate{addr: a, dir: t.TempDir()}
		if err := c.start(t, addrs[:3]); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
		defer c.stop()
	}
	for id := int64(1); id <= 10; id++ {
		onLeader(t, cs, func(l *candidate) error { return submit(l.st, id) })
	}
	nc := &candidate{addr: addrs[3], dir: t.TempDir()}
	if err := nc.startJoining(t, addrs, func() bool { return true }); err != nil {
		t.Fatal(err)
	}
	defer nc.stop()
	onLeader(t, cs, func(l *candidate) error { return l.node.SetCandidates(addrs) })
	waitJobs(t, nc, 10)
	all := append(slices.Clone(cs), nc) // nc may be elected from now on
	l := onLeader(t, all, func(l *candidate) error { return submit(l.st, 11) })
	waitJobs(t, nc, 11)
	if len(l.node.Candidates()) != 4 {
		t.Errorf("candidates after the addition: %v", l.node.Candidates())
	}
	// One follower is taken out of the list.
	var gone *candidate
	var keep []string
	l = onLeader(t, all, func(l *candidate) error {
		gone, keep = nil, nil
		for _, c := range cs {
			if c != l && gone == nil {
				gone = c
			}
		}
		for _, a := range addrs {
			if a != gone.addr {
				keep = append(keep, a)
			}
		}
		return l.node.SetCandidates(keep)
	})
	for _, c := range l.node.Candidates() {
		if c.Address == gone.addr {
			t.Errorf("%s is still a candidate", gone.addr)
		}
	}
	var withoutLeader []string
	for _, a := range keep {
		if a != l.addr {
			withoutLeader = append(withoutLeader, a)
		}
	}
	if err := l.node.SetCandidates(withoutLeader); err == nil {
		t.Error("the leader removed itself")
	}
}
