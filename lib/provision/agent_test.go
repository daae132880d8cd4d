package provision

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"xce/lib/api/rpc"
	"xce/lib/config"
	"xce/lib/provider"
)

// testLink is an Agent's way to a Ledger, which the test can cut (a
// provisioner partitioned from the controller, or dead to it).
type testLink struct {
	*Ledger
	cl   *fakeCluster
	down atomic.Bool
}

var errCut = errors.New("partitioned")

func (l *testLink) Sync(ctx context.Context, req *rpc.ProvisionerSyncRequest) (*rpc.ProvisionerSyncReply, error) {
	if l.down.Load() {
		return nil, errCut
	}
	return l.Ledger.Sync(ctx, req)
}

func (l *testLink) Records(ctx context.Context, req *rpc.ProvisionerRecordsRequest) (*rpc.ProvisionerRecordsReply, error) {
	if l.down.Load() {
		return nil, errCut
	}
	return l.Ledger.Records(ctx, req)
}

func (l *testLink) Put(ctx context.Context, req *rpc.ProvisionerPutRequest) (*rpc.ProvisionerPutReply, error) {
	if l.down.Load() {
		return nil, errCut
	}
	return l.Ledger.Put(ctx, req)
}

func (l *testLink) Host(_ context.Context, req *rpc.ProvisionerHostRequest) (*rpc.ProvisionerHostReply, error) {
	if l.down.Load() {
		return nil, errCut
	}
	switch req.Op {
	case rpc.ProvisionerHostRequest_STATE:
		hs := l.cl.Host(req.Name)
		return &rpc.ProvisionerHostReply{Joined: hs.Joined, Running: int32(hs.Running)}, nil
	case rpc.ProvisionerHostRequest_RELEASE:
		return &rpc.ProvisionerHostReply{Released: l.cl.Release(req.Name)}, nil
	case rpc.ProvisionerHostRequest_FORGET:
		l.cl.Forget(req.Name)
	}
	return &rpc.ProvisionerHostReply{}, nil
}

// calls records which agent called the provider when.
type calls struct {
	mu sync.Mutex
	at map[string][]time.Time
}

func (c *calls) add(who string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at[who] = append(c.at[who], time.Now())
}

func (c *calls) get(who string) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.at[who]...)
}

// logged is the shared fake provider as one agent calls it.
type logged struct {
	*fakeProvider
	who string
	c   *calls
}

func (l *logged) Request(ctx context.Context, t *config.Template, insts []provider.Instance) (string, error) {
	l.c.add(l.who)
	return l.fakeProvider.Request(ctx, t, insts)
}

func (l *logged) Status(ctx context.Context, req string, insts []provider.Instance) ([]provider.Machine, error) {
	l.c.add(l.who)
	return l.fakeProvider.Status(ctx, req, insts)
}

func (l *logged) Return(ctx context.Context, insts []provider.Instance) error {
	l.c.add(l.who)
	return l.fakeProvider.Return(ctx, insts)
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// A provisioner cut off from the controller while its hosts boot stops
// calling the provider before another takes the provider over; the
// other finds the instances by their records and asks for none again.
func TestAgentTakeover(t *testing.T) {
	st := &memStore{kv: map[string][]byte{}}
	conf := testConf()
	l, err := NewLedger(func() *config.Config { return conf }, st, func() {}, 600*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	cl := newFakeCluster()
	prov := &fakeProvider{t: t, st: st, running: map[string]bool{}}
	c := &calls{at: map[string][]time.Time{}}
	agent := func(who string) (*testLink, func()) {
		link := &testLink{Ledger: l, cl: cl}
		ag := NewAgent(AgentConfig{Owner: who, Link: link, Interval: 200 * time.Millisecond,
			Options:  Options{Interval: 20 * time.Millisecond},
			Provider: func(*config.Provider) (provider.Provider, error) { return &logged{prov, who, c}, nil }})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { ag.Run(ctx); close(done) }()
		return link, func() { cancel(); <-done }
	}
	linkA, stopA := agent("a")
	defer stopA()
	waitFor(t, "a's lease", func() bool { return l.Owner("p") == "a" })
	_, stopB := agent("b")
	defer stopB()
	v, _, _ := l.Counts()
	l.SetDemand(v, map[string]int{"cpu": 2})
	waitFor(t, "a's request", func() bool {
		prov.mu.Lock()
		defer prov.mu.Unlock()
		return prov.requests == 1
	})
	waitFor(t, "a's instances booting", func() bool {
		_, booting, _ := l.Counts()
		return booting["cpu"] == 2 && len(c.get("a")) > 2
	})
	if l.Owner("p") != "a" {
		t.Fatalf("owner %q while a renews", l.Owner("p"))
	}
	linkA.down.Store(true)
	waitFor(t, "b's lease and its first call", func() bool { return l.Owner("p") == "b" && len(c.get("b")) > 0 })
	a, b := c.get("a"), c.get("b")
	if last, first := a[len(a)-1], b[0]; !last.Before(first) {
		t.Errorf("a called the provider at %v, after b's first call at %v", last, first)
	}
	_, booting, exists := l.Counts()
	prov.mu.Lock()
	requests := prov.requests
	prov.mu.Unlock()
	if booting["cpu"] != 2 || exists["cpu"] != 2 || requests != 1 {
		t.Errorf("after the takeover: %d booting, %d exist, %d requests; want 2, 2, 1", booting["cpu"], exists["cpu"], requests)
	}
}
