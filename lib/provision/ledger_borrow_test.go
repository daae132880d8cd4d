package provision

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/config"
)

// badmin rc view names each provider's lease owner and when the lease
// ends unless renewed; an ended lease is not shown.
func TestLedgerViewLeases(t *testing.T) {
	r := newLedgerRig(t, nil)
	r.sync("provisioner@b:1:ab", false)
	v := r.l.View()
	if len(v.Leases) != 1 || v.Leases[0].Provider != "p" || v.Leases[0].Owner != "provisioner@b:1:ab" ||
		v.Leases[0].Expires != r.now.Add(3*time.Second).UnixNano() {
		t.Fatalf("leases %v", v.Leases)
	}
	r.now = r.now.Add(4 * time.Second)
	if v := r.l.View(); len(v.Leases) != 0 {
		t.Fatalf("an ended lease shown: %v", v.Leases)
	}
}

// Loans go through the lease like instances: only the provider's owner
// writes them, only its own provider's; the ledger counts them for the
// scheduler and hands the units to borrow and the resources' use over.
func TestLedgerLoans(t *testing.T) {
	r := newLedgerRig(t, nil)
	r.sync("o1", false)
	put := func(owner string, b *api.RCBorrow) error {
		v, _ := proto.Marshal(b)
		_, err := r.l.Put(context.Background(), &rpc.ProvisionerPutRequest{Owner: owner, Provider: "p", Set: map[string][]byte{"rc/borrow/" + b.Id: v}})
		return err
	}
	if err := put("o2", &api.RCBorrow{Id: "loan-1", Resource: "lic", Provider: "p", Amount: 1, State: loanGranted}); err == nil {
		t.Fatal("a provisioner without the lease wrote a loan")
	}
	if err := put("o1", &api.RCBorrow{Id: "loan-1", Resource: "lic", Provider: "q", Amount: 1, State: loanGranted}); err == nil {
		t.Fatal("a loan of another provider was written")
	}
	if err := put("o1", &api.RCBorrow{Id: "loan-1", Resource: "lic", Provider: "p", Amount: 2, State: loanGranted}); err != nil {
		t.Fatal(err)
	}
	if err := put("o1", &api.RCBorrow{Id: "loan-2", Resource: "lic", Provider: "p", Amount: 1, State: loanRequested}); err != nil {
		t.Fatal(err)
	}
	v, granted, pending, onLoan := r.l.Tokens()
	if granted["lic"] != 2 || pending["lic"] != 1 || onLoan["lic"] != 3 {
		t.Fatalf("tokens %v %v %v", granted, pending, onLoan)
	}
	r.l.SetUsage(func() map[string]float64 { return map[string]float64{"lic": 4} })
	r.l.SetTokens(v, map[string]int{"lic": 1})
	rep, err := r.l.Sync(context.Background(), &rpc.ProvisionerSyncRequest{Owner: "o1", Want: []string{"p"}, Held: []string{"p"}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.TokensValid || rep.Tokens["lic"] != 1 || rep.SharedUsed["lic"] != 4 {
		t.Fatalf("sync reply: valid %v tokens %v used %v", rep.TokensValid, rep.Tokens, rep.SharedUsed)
	}
	// A demand computed before the last record is not handed over.
	r.l.SetTokens(v-1, map[string]int{"lic": 5})
	if len(r.l.View().Borrows) != 2 {
		t.Fatalf("view borrows %v", r.l.View().Borrows)
	}
	if _, err := r.l.Put(context.Background(), &rpc.ProvisionerPutRequest{Owner: "o1", Provider: "p", Delete: []string{"rc/borrow/loan-1"}}); err != nil {
		t.Fatal(err)
	}
	if _, granted, _, _ := r.l.Tokens(); granted["lic"] != 0 || r.st.count("rc/borrow/") != 1 {
		t.Fatalf("after delete: granted %v, records %d", granted, r.st.count("rc/borrow/"))
	}
}

// A job waiting for units of a shared resource says how many are asked
// for and since when, as one waiting for a template's hosts does; or,
// when the last loan failed, why.
func TestLedgerTokenWaitReason(t *testing.T) {
	r := newLedgerRig(t, nil)
	conf, err := config.Parse("t.toml", []byte("[providers.p]\nkind = \"local\"\n[resources.lic]\ntotal = 2\nprovider = \"p\"\nborrow_max = 4\n[resources.plain]\ntotal = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, _, _, _ := r.l.Tokens()
	r.l.SetTokens(v, map[string]int{"lic": 2})
	if got, want := r.l.TokenWaitReason("lic", conf), "Waiting for 2 units of lic (not yet requested, provider p)"; got != want {
		t.Errorf("before any loan: %q, want %q", got, want)
	}
	r.sync("o1", false)
	at := time.Date(2026, 1, 2, 10, 2, 11, 0, time.Local)
	b, _ := proto.Marshal(&api.RCBorrow{Id: "loan-1", Resource: "lic", Provider: "p", Amount: 1, State: loanRequested, RequestedAt: at.UnixNano()})
	if _, err := r.l.Put(context.Background(), &rpc.ProvisionerPutRequest{Owner: "o1", Provider: "p", Set: map[string][]byte{"rc/borrow/loan-1": b}}); err != nil {
		t.Fatal(err)
	}
	// The write moved the version: the last cycle's units no longer count.
	if got, want := r.l.TokenWaitReason("lic", conf), "Waiting for 1 unit of lic (requested 10:02:11, provider p)"; got != want {
		t.Errorf("one unit asked for: %q, want %q", got, want)
	}
	if _, err := r.l.Sync(context.Background(), &rpc.ProvisionerSyncRequest{Owner: "o1", Want: []string{"p"}, Held: []string{"p"},
		Errors: []*api.RCError{{Time: at.Add(time.Second).UnixNano(), Provider: "p", Message: "borrow lic: no licences left"}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := r.l.TokenWaitReason("lic", conf), "Waiting for 1 unit of lic: its last loan failed: no licences left (provider p)"; got != want {
		t.Errorf("after a failed loan: %q, want %q", got, want)
	}
	// The provisioner says when it tries again; a time past is not shown.
	retry := time.Date(2026, 1, 2, 10, 2, 41, 0, time.Local)
	for _, c := range []struct {
		now  time.Time
		want string
	}{
		{retry.Add(-time.Second), "Waiting for 1 unit of lic: its last loan failed: no licences left (next try at 10:02:41, provider p)"},
		{retry, "Waiting for 1 unit of lic: its last loan failed: no licences left (provider p)"},
	} {
		r.now = c.now
		if _, err := r.l.Sync(context.Background(), &rpc.ProvisionerSyncRequest{Owner: "o1", Want: []string{"p"}, Held: []string{"p"},
			Errors:        []*api.RCError{{Time: at.Add(time.Second).UnixNano(), Provider: "p", Message: "borrow lic: no licences left"}},
			BorrowBackoff: map[string]int64{"lic": retry.UnixNano()}}); err != nil {
			t.Fatal(err)
		}
		if got := r.l.TokenWaitReason("lic", conf); got != c.want {
			t.Errorf("at %s: %q, want %q", c.now.Format("15:04:05"), got, c.want)
		}
	}
	if got := r.l.TokenWaitReason("plain", conf); got != "" {
		t.Errorf("a resource that does not borrow: %q", got)
	}
}
