package provision

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/config"
)

type ledgerRig struct {
	t   *testing.T
	l   *Ledger
	st  *memStore
	now time.Time
}

func newLedgerRig(t *testing.T, st *memStore) *ledgerRig {
	t.Helper()
	if st == nil {
		st = &memStore{kv: map[string][]byte{}}
	}
	conf := testConf()
	r := &ledgerRig{t: t, st: st, now: time.Unix(1_000_000, 0)}
	l, err := newLedgerAt(func() *config.Config { return conf }, st, func() {}, 3*time.Second, func() time.Time { return r.now })
	if err != nil {
		t.Fatal(err)
	}
	r.l = l
	return r
}

func newLedgerAt(conf func() *config.Config, st Store, kick func(), ttl time.Duration, clock func() time.Time) (*Ledger, error) {
	l, err := NewLedger(conf, st, kick, ttl)
	if err != nil {
		return nil, err
	}
	// Recorded leases count from this clock's now.
	l.clock = clock
	for _, ls := range l.leases {
		ls.expires = clock().Add(ttl)
	}
	return l, nil
}

// sync is one heartbeat; it returns the providers granted.
func (r *ledgerRig) sync(owner string, yield bool, held ...string) []string {
	r.t.Helper()
	rep, err := r.l.Sync(context.Background(), &rpc.ProvisionerSyncRequest{Owner: owner, Want: []string{"p"}, Held: held, Yield: yield})
	if err != nil {
		r.t.Fatal(err)
	}
	return rep.Granted
}

func (r *ledgerRig) put(owner string, in *api.RCInstance) error {
	b, _ := proto.Marshal(in)
	_, err := r.l.Put(context.Background(), &rpc.ProvisionerPutRequest{Owner: owner, Provider: "p", Set: map[string][]byte{"rc/inst/" + in.Id: b}})
	return err
}

// One owner at a time: another provisioner gets the provider only once
// the owner has stopped renewing for a whole TTL, and the old owner can
// no longer write.
func TestLeaseOneOwner(t *testing.T) {
	r := newLedgerRig(t, nil)
	if g := r.sync("a", false); !slices.Equal(g, []string{"p"}) {
		t.Fatalf("a granted %v", g)
	}
	if g := r.sync("b", false); len(g) != 0 {
		t.Fatalf("b granted %v while a holds it", g)
	}
	r.now = r.now.Add(2 * time.Second)
	if g := r.sync("a", false, "p"); len(g) != 1 {
		t.Fatalf("a not renewed: %v", g)
	}
	r.now = r.now.Add(2 * time.Second) // 2s since a's renewal
	if g := r.sync("b", false); len(g) != 0 {
		t.Fatalf("b granted %v before a's lease ended", g)
	}
	if err := r.put("a", &api.RCInstance{Id: "cpu-1", Provider: "p", Template: "cpu"}); err != nil {
		t.Fatalf("a's write while it holds the lease: %v", err)
	}
	r.now = r.now.Add(1500 * time.Millisecond)
	if g := r.sync("b", false); len(g) != 1 {
		t.Fatalf("b not granted after a's lease ended: %v", g)
	}
	if err := r.put("a", &api.RCInstance{Id: "cpu-2", Provider: "p", Template: "cpu"}); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("a's write after its lease went to b: %v", err)
	}
	if g := r.sync("a", false, "p"); len(g) != 0 {
		t.Fatalf("a got the lease back from b: %v", g)
	}
	if _, err := r.l.Records(context.Background(), &rpc.ProvisionerRecordsRequest{Owner: "b", Provider: "p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.l.Records(context.Background(), &rpc.ProvisionerRecordsRequest{Owner: "a", Provider: "p"}); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("records for a non-owner: %v", err)
	}
	// b lets go: the lease is free at once.
	if _, err := r.l.Sync(context.Background(), &rpc.ProvisionerSyncRequest{Owner: "b"}); err != nil {
		t.Fatal(err)
	}
	if g := r.sync("a", false); len(g) != 1 {
		t.Fatalf("a not granted a lease b let go of: %v", g)
	}
}

// A controller started again (or a new leader) knows the recorded owner
// and keeps the lease for it for a TTL.
func TestLeaseSurvivesRestart(t *testing.T) {
	r := newLedgerRig(t, nil)
	r.sync("a", false)
	r2 := newLedgerRig(t, r.st)
	r2.now = r.now
	if g := r2.sync("b", false); len(g) != 0 {
		t.Fatalf("b granted %v right after a restart, while a may still hold it", g)
	}
	if g := r2.sync("a", false, "p"); len(g) != 1 {
		t.Fatalf("a not renewed after the restart: %v", g)
	}
	r3 := newLedgerRig(t, r.st)
	r3.now = r.now.Add(3 * time.Second)
	if g := r3.sync("b", false); len(g) != 1 {
		t.Fatalf("b not granted once the recorded lease ended: %v", g)
	}
}

// The controller's own provisioner yields to a daemon: not renewed, it
// stops, says so, and the daemon gets the lease.
func TestLeaseYields(t *testing.T) {
	r := newLedgerRig(t, nil)
	if g := r.sync("xced", true); len(g) != 1 {
		t.Fatalf("in-process not granted: %v", g)
	}
	if g := r.sync("d", false); len(g) != 0 {
		t.Fatalf("daemon granted %v while in-process holds it", g)
	}
	if g := r.sync("xced", true, "p"); len(g) != 0 {
		t.Fatalf("in-process renewed %v while a daemon asks", g)
	}
	if g := r.sync("xced", true); len(g) != 0 {
		t.Fatalf("in-process granted %v again", g)
	}
	if g := r.sync("d", false); len(g) != 1 {
		t.Fatalf("daemon not granted once in-process let go: %v", g)
	}
	// The daemon ends: once no daemon has asked for a TTL, in-process
	// takes the provider back.
	r.now = r.now.Add(4 * time.Second)
	if g := r.sync("xced", true); len(g) != 1 {
		t.Fatalf("in-process not granted after the daemon went: %v", g)
	}
}

// A provisioner writes only its own provider's records.
func TestPutChecksRecords(t *testing.T) {
	r := newLedgerRig(t, nil)
	r.sync("a", false)
	if err := r.put("a", &api.RCInstance{Id: "x-1", Provider: "other", Template: "x"}); err == nil {
		t.Error("an instance of another provider written")
	}
	_, err := r.l.Put(context.Background(), &rpc.ProvisionerPutRequest{Owner: "a", Provider: "p", Set: map[string][]byte{"jobs/1": []byte("x")}})
	if err == nil {
		t.Error("a record outside rc/ written")
	}
	if err := r.put("a", &api.RCInstance{Id: "cpu-1", Provider: "p", Template: "cpu", RcStatus: StatusStarted}); err != nil {
		t.Fatal(err)
	}
	v, booting, exists := r.l.Counts()
	if booting["cpu"] != 1 || exists["cpu"] != 1 {
		t.Errorf("counts %v %v", booting, exists)
	}
	// Demand computed against that version is served; after a write it
	// is not.
	r.l.SetDemand(v, map[string]int{"cpu": 1})
	rep, _ := r.l.Sync(context.Background(), &rpc.ProvisionerSyncRequest{Owner: "a", Want: []string{"p"}, Held: []string{"p"}})
	if !rep.DemandValid || rep.Demand["cpu"] != 1 {
		t.Errorf("demand not served: %v", rep)
	}
	r.put("a", &api.RCInstance{Id: "cpu-2", Provider: "p", Template: "cpu", RcStatus: StatusStarted})
	rep, _ = r.l.Sync(context.Background(), &rpc.ProvisionerSyncRequest{Owner: "a", Want: []string{"p"}, Held: []string{"p"}})
	if rep.DemandValid {
		t.Errorf("stale demand served: %v", rep)
	}
	if in := r.l.Instance("cpu-2"); in != nil {
		t.Errorf("instance by host name before it has one: %v", in)
	}
}

// The configuration a daemon gets is the templates and providers in force.
func TestConfigRoundTrip(t *testing.T) {
	c := testConf()
	b, err := EncodeConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *d.Templates["cpu"], *c.Templates["cpu"]; got.Max != want.Max || got.IdleTime != want.IdleTime ||
		got.MaxTTL != want.MaxTTL || got.BootTimeout != want.BootTimeout || got.Provider != want.Provider || got.Name != want.Name {
		t.Errorf("template %+v, want %+v", got, want)
	}
	if d.Providers["p"] == nil || d.Providers["p"].Kind != "local" {
		t.Errorf("providers %+v", d.Providers)
	}
}
