package provision

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/config"
	"xce/lib/provider"
)

// fakeLender is a fakeProvider that lends tokens; at Borrow it checks the
// loan is in the store already.
type fakeLender struct {
	*fakeProvider
	lent     map[string]int // loan -> units
	borrows  int
	backs    []string
	failWith error
}

func (f *fakeLender) Borrow(_ context.Context, _, id string, n int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, _ := f.st.Meta("rc/borrow/" + id); len(m) != 1 {
		f.t.Errorf("loan %s asked for before it was recorded", id)
	}
	f.borrows++
	if f.failWith != nil {
		return 0, f.failWith
	}
	f.lent[id] = n
	return n, nil
}

func (f *fakeLender) Giveback(_ context.Context, _, id string, _ int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.lent, id)
	f.backs = append(f.backs, id)
	return nil
}

type loanRig struct {
	p   *Provisioner
	l   *fakeLender
	st  *memStore
	now time.Time
}

func newLoanRig(t *testing.T, st *memStore) *loanRig {
	t.Helper()
	conf, err := config.Parse("t.toml", []byte(`
[providers.p]
kind = "local"
[resources.lic]
total = 2
provider = "p"
borrow_max = 3
idle_time = "30s"
`))
	if err != nil {
		t.Fatal(err)
	}
	if st == nil {
		st = &memStore{kv: map[string][]byte{}}
	}
	l := &fakeLender{fakeProvider: &fakeProvider{t: t, st: st, running: map[string]bool{}}, lent: map[string]int{}}
	p, err := New(func() *config.Config { return conf }, newFakeCluster(), st, map[string]provider.Provider{"p": l}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &loanRig{p: p, l: l, st: st, now: time.Now()}
	p.clock = func() time.Time { return r.now }
	return r
}

func (r *loanRig) tokens(want int, used float64) {
	var w map[string]int
	if want > 0 {
		w = map[string]int{"lic": want}
	}
	r.p.SetTokens(r.p.Version(), w, map[string]float64{"lic": used})
}

func (r *loanRig) loans() []*api.RCBorrow {
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	var out []*api.RCBorrow
	for _, b := range r.p.lend.loans {
		out = append(out, b)
	}
	return out
}

func TestBorrowAndReturnWhenIdle(t *testing.T) {
	r := newLoanRig(t, nil)
	ctx := context.Background()
	r.tokens(5, 0) // more than borrow_max
	r.p.step(ctx)
	ls := r.loans()
	if r.l.borrows != 1 || len(ls) != 1 || ls[0].Amount != 3 || ls[0].State != loanGranted || r.st.count("rc/borrow/") != 1 {
		t.Fatalf("borrows %d, loans %v: want one granted loan of 3 (borrow_max)", r.l.borrows, ls)
	}
	// A demand computed before the loan is not acted on again.
	r.p.SetTokens(0, map[string]int{"lic": 1}, map[string]float64{"lic": 0})
	r.p.step(ctx)
	if r.l.borrows != 1 {
		t.Fatalf("a stale demand borrowed again")
	}
	// In use (all 5): kept however long.
	r.tokens(0, 5)
	r.p.step(ctx)
	r.now = r.now.Add(time.Hour)
	r.p.step(ctx)
	if len(r.loans()) != 1 {
		t.Fatalf("a loan in use was given back")
	}
	// Use falls within the total: idle from now, given back after idle_time.
	r.tokens(0, 2)
	r.p.step(ctx)
	r.now = r.now.Add(29 * time.Second)
	r.p.step(ctx)
	if len(r.loans()) != 1 {
		t.Fatalf("given back before idle_time")
	}
	r.now = r.now.Add(time.Second)
	r.p.step(ctx)
	if len(r.loans()) != 0 || len(r.l.lent) != 0 || r.st.count("rc/borrow/") != 0 {
		t.Fatalf("loans %v, lent %v: want all given back", r.loans(), r.l.lent)
	}
}

func TestLoanUnknownAfterRestartIsGivenBack(t *testing.T) {
	r := newLoanRig(t, nil)
	b := &api.RCBorrow{Id: "loan-7", Resource: "lic", Provider: "p", Amount: 2, State: loanRequested}
	if err := r.p.putLoans([]*api.RCBorrow{b}, nil, false); err != nil {
		t.Fatal(err)
	}
	r2 := newLoanRig(t, r.st)
	r2.p.reconcileLoans(context.Background())
	if len(r2.loans()) != 0 || len(r2.l.backs) != 1 || r2.l.backs[0] != "loan-7" || r2.l.borrows != 0 {
		t.Fatalf("loans %v, given back %v, borrows %d: want loan-7 given back, nothing asked", r2.loans(), r2.l.backs, r2.l.borrows)
	}
}

func TestBorrowFailureBacksOff(t *testing.T) {
	r := newLoanRig(t, nil)
	r.l.failWith = errors.New("licence server down")
	ctx := context.Background()
	r.tokens(1, 0)
	r.p.step(ctx)
	errs, _ := r.p.Status()
	if len(errs) == 0 || !strings.Contains(errs[len(errs)-1].Message, "borrow lic: licence server down") {
		t.Fatalf("errors %v", errs)
	}
	if len(r.loans()) != 0 || r.st.count("rc/borrow/") != 0 {
		t.Fatalf("a failed loan is left: %v", r.loans())
	}
	if off := r.p.BorrowBackoff(); off["lic"] <= r.now.UnixNano() {
		t.Fatalf("no retry time after the failure: %v", off)
	}
	r.tokens(1, 0)
	r.p.step(ctx)
	if r.l.borrows != 1 {
		t.Fatalf("asked again during the backoff")
	}
	r.l.failWith = nil
	r.now = r.now.Add(time.Minute)
	r.tokens(1, 0)
	r.p.step(ctx)
	if r.l.borrows != 2 || len(r.loans()) != 1 {
		t.Fatalf("borrows %d loans %v after the backoff", r.l.borrows, r.loans())
	}
	if off := r.p.BorrowBackoff(); len(off) != 0 {
		t.Fatalf("backed off after the backoff: %v", off)
	}
}

// TestLoanReturnSeesNewJobs: a provisioner judges a loan idle by the use
// its last Sync gave; a cycle may start a job on the loan's units after
// that. The controller checks the return against the use it sees at
// that moment (Ledger.SetReturnCheck) and refuses it: the loan stays,
// the provider is not asked; once the job ends it goes back.
func TestLoanReturnSeesNewJobs(t *testing.T) {
	conf, err := config.Parse("t.toml", []byte("[providers.p]\nkind = \"local\"\n[resources.lic]\ntotal = 2\nprovider = \"p\"\nborrow_max = 3\nidle_time = \"30s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	mem := &memStore{kv: map[string][]byte{}}
	now := time.Now()
	l, err := newLedgerAt(func() *config.Config { return conf }, mem, func() {}, time.Hour, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := l.Sync(ctx, &rpc.ProvisionerSyncRequest{Owner: "o1", Want: []string{"p"}}); err != nil {
		t.Fatal(err)
	}
	// What running jobs hold as the controller sees it now.
	held := map[string]float64{"lic": 0}
	l.SetReturnCheck(func(do func(map[string]float64) error) error { return do(held) })
	lender := &fakeLender{fakeProvider: &fakeProvider{t: t, st: mem, running: map[string]bool{}}, lent: map[string]int{}}
	p, err := New(func() *config.Config { return conf }, newFakeCluster(), &linkStore{link: &testLink{Ledger: l, cl: newFakeCluster()}, owner: "o1", provider: "p"},
		map[string]provider.Provider{"p": lender}, Options{Provider: "p"})
	if err != nil {
		t.Fatal(err)
	}
	p.clock = func() time.Time { return now }
	p.SetTokens(p.Version(), map[string]int{"lic": 1}, map[string]float64{"lic": 2})
	p.step(ctx)
	if _, granted, _, _ := l.Tokens(); granted["lic"] != 1 {
		t.Fatalf("granted %v, want 1 unit of lic", granted)
	}
	// The last Sync said nothing holds the loan's unit: idle from now.
	p.SetTokens(p.Version(), nil, map[string]float64{"lic": 0})
	p.step(ctx)
	// A cycle starts a job holding all 3 units; idle_time runs out
	// before the provisioner hears of it.
	held["lic"] = 3
	now = now.Add(31 * time.Second)
	p.step(ctx)
	if _, granted, _, _ := l.Tokens(); granted["lic"] != 1 || len(lender.backs) != 0 {
		t.Fatalf("a loan in use went back: granted %v, given back %v", granted, lender.backs)
	}
	// The job ends: idle again, back after idle_time.
	held["lic"] = 0
	p.step(ctx)
	now = now.Add(31 * time.Second)
	p.step(ctx)
	if _, granted, _, _ := l.Tokens(); granted["lic"] != 0 || len(lender.backs) != 1 {
		t.Fatalf("an idle loan was kept: granted %v, given back %v", granted, lender.backs)
	}
}
