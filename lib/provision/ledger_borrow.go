package provision

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/config"
)

// ledgerLending is the Ledger's part of the loans of shared resources
// (borrow.go): the records, the last units to borrow, and where the
// resources' use comes from (l.mu).
type ledgerLending struct {
	loans map[string]*api.RCBorrow
	want  map[string]int
	wantV uint64
	usage func() map[string]float64
	with  func(do func(used map[string]float64) error) error // SetReturnCheck
}

// ErrLoanInUse refuses to give back a loan whose units running jobs
// hold.
var ErrLoanInUse = errors.New("the loan's units are in use")

// SetReturnCheck makes the ledger check each loan a provisioner gives
// back against what running jobs hold: with runs do with that use while
// no scheduling cycle can run (the controller's lock), and the return is
// recorded inside it. A provisioner judges a loan idle by the use of its
// last Sync, which a cycle may have changed since by starting a job on
// the loan's units; the check sees that job, and a cycle after the
// return sees the lower total. Without it a loan goes back unchecked.
func (l *Ledger) SetReturnCheck(with func(do func(used map[string]float64) error) error) {
	l.mu.Lock()
	l.lend.with = with
	l.mu.Unlock()
}

// returnChecked runs commit, which records kv; when kv gives back
// granted loans of resources that still borrow, inside the return check,
// refusing with ErrLoanInUse where the resource's use does not fit in
// its total and the loans left.
func (l *Ledger) returnChecked(kv map[string][]byte, commit func() error) error {
	l.mu.Lock()
	with := l.lend.with
	var back []*api.RCBorrow
	for k, v := range kv {
		id, ok := strings.CutPrefix(k, "rc/borrow/")
		if !ok || v == nil {
			continue
		}
		b := &api.RCBorrow{}
		if proto.Unmarshal(v, b) != nil {
			continue // checked by the caller
		}
		if old := l.lend.loans[id]; b.State == loanReturning && old != nil && old.State == loanGranted {
			back = append(back, b)
		}
	}
	l.mu.Unlock()
	if len(back) == 0 || with == nil {
		return commit()
	}
	return with(func(used map[string]float64) error {
		if err := l.checkReturn(back, used); err != nil {
			return err
		}
		return commit()
	})
}

// checkReturn refuses loans given back whose resource's use would not
// fit in what is left without them.
func (l *Ledger) checkReturn(back []*api.RCBorrow, used map[string]float64) error {
	conf := l.conf()
	gone := map[string]bool{}
	for _, b := range back {
		gone[b.Id] = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range back {
		r := conf.Resources[b.Resource]
		if r == nil || !r.Borrows() || r.Provider != b.Provider {
			continue // no longer lent by this provider: back whatever the use
		}
		left := float64(r.Total)
		for _, o := range l.lend.loans {
			if o.Resource == b.Resource && o.State == loanGranted && !gone[o.Id] {
				left += float64(o.Amount)
			}
		}
		if u := used[b.Resource]; u > left+1e-9 {
			return fmt.Errorf("%w: %s: running jobs hold %g units, %g without loan %s", ErrLoanInUse, b.Resource, u, left, b.Id)
		}
	}
	return nil
}

// SetUsage gives the ledger what running jobs hold of each shared
// resource (the controller's), for the provisioners' return of idle
// loans; without it no loan goes back for being idle.
func (l *Ledger) SetUsage(usage func() map[string]float64) {
	l.mu.Lock()
	l.lend.usage = usage
	l.mu.Unlock()
}

// Tokens are, per shared resource, the units lent (granted, which the
// scheduler adds to the total), the units asked for and not lent yet,
// and every unit on loan in any state (what counts against borrow_max),
// as of the returned version.
func (l *Ledger) Tokens() (version uint64, granted, pending, onLoan map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	granted, pending, onLoan = map[string]int{}, map[string]int{}, map[string]int{}
	for _, b := range l.lend.loans {
		onLoan[b.Resource] += int(b.Amount)
		switch b.State {
		case loanGranted:
			granted[b.Resource] += int(b.Amount)
		case loanRequested:
			pending[b.Resource] += int(b.Amount)
		}
	}
	return l.version, granted, pending, onLoan
}

// SetTokens takes a cycle's units to borrow computed against version;
// the provisioners get them at their next Sync (a waiting one at once).
func (l *Ledger) SetTokens(version uint64, want map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if version != l.version {
		return
	}
	if len(want) > 0 && (l.lend.wantV != version || !maps.Equal(want, l.lend.want)) {
		l.demandChanged()
	}
	l.lend.want, l.lend.wantV = want, version
}

// applyLoan puts one loan record (nil: deletes it) into the in-memory
// copy (l.mu held).
func (l *Ledger) applyLoan(id string, v []byte) error {
	if v == nil {
		delete(l.lend.loans, id)
		return nil
	}
	b := &api.RCBorrow{}
	if err := proto.Unmarshal(v, b); err != nil {
		return fmt.Errorf("provisioner record rc/borrow/%s: %w", id, err)
	}
	l.lend.loans[id] = b
	return nil
}

// checkLoan says whether a provisioner of provider may write (v) or
// delete (nil) the loan record of id.
func (l *Ledger) checkLoan(provider, id string, v []byte) error {
	if v == nil {
		l.mu.Lock()
		b := l.lend.loans[id]
		l.mu.Unlock()
		if b != nil && b.Provider != provider {
			return fmt.Errorf("record rc/borrow/%s: not a loan of provider %s", id, provider)
		}
		return nil
	}
	b := &api.RCBorrow{}
	if err := proto.Unmarshal(v, b); err != nil || b.Provider != provider || b.Id != id {
		return fmt.Errorf("record rc/borrow/%s: not a loan of provider %s", id, provider)
	}
	return nil
}

// addTokens fills a Sync's answer with the units to borrow (when valid)
// and the shared resources' use.
func (l *Ledger) addTokens(rep *rpc.ProvisionerSyncReply) {
	l.mu.Lock()
	usage := l.lend.usage
	if l.lend.wantV == l.version && len(l.lend.want) > 0 {
		rep.TokensValid = true
		rep.Tokens = map[string]int32{}
		for r, n := range l.lend.want {
			rep.Tokens[r] = int32(n)
		}
	}
	l.mu.Unlock()
	if usage != nil {
		rep.SharedUsed = usage()
		if rep.SharedUsed == nil {
			rep.SharedUsed = map[string]float64{}
		}
	}
}

// addLoansAndLeases fills badmin rc view's loans and the providers'
// lease owners (l.mu held).
func (l *Ledger) addLoansAndLeases(v *api.SupplyView) {
	for _, id := range slices.Sorted(maps.Keys(l.lend.loans)) {
		v.Borrows = append(v.Borrows, proto.Clone(l.lend.loans[id]).(*api.RCBorrow))
	}
	now := l.clock()
	for _, name := range slices.Sorted(maps.Keys(l.leases)) {
		if ls := l.leases[name]; now.Before(ls.expires) {
			v.Leases = append(v.Leases, &api.RCLease{Provider: name, Owner: ls.owner, Expires: ls.expires.UnixNano()})
		}
	}
}

// TokenWaitReason is the pending reason of a job waiting for units of a
// shared resource that a provider lends, in the style of WaitReason's:
// "Waiting for 2 units of lic (requested 10:02:11, provider p)", the
// units asked for and not lent yet with those the last cycle would ask
// for; or, when the resource's last loan failed, why.
func (l *Ledger) TokenWaitReason(resource string, conf *config.Config) string {
	r := conf.Resources[resource]
	if r == nil || !r.Borrows() {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	var at, last int64 // the newest pending loan's request, and any loan's
	for _, b := range l.lend.loans {
		if b.Resource != resource {
			continue
		}
		last = max(last, b.RequestedAt)
		if b.State == loanRequested {
			n += int(b.Amount)
			at = max(at, b.RequestedAt)
		}
	}
	if l.lend.wantV == l.version {
		n += l.lend.want[resource]
	}
	n = max(n, 1)
	// The provisioner reports a failed loan as "borrow RES: why"
	// (Provisioner.loanFailed); one newer than every loan is the last
	// try's.
	var failAt, retry int64
	why := ""
	for _, s := range l.status {
		for _, e := range s.errors {
			if m, ok := strings.CutPrefix(e.Message, "borrow "+resource+": "); ok && e.Provider == r.Provider && e.Time > failAt {
				failAt, why = e.Time, m
			}
		}
		retry = max(retry, s.borrowBackoff[resource])
	}
	if failAt > last && why != "" {
		next := ""
		if retry > l.clock().UnixNano() {
			next = "next try at " + time.Unix(0, retry).Format("15:04:05") + ", "
		}
		return fmt.Sprintf("Waiting for %d %s of %s: its last loan failed: %s (%sprovider %s)", n, plural(n, "unit"), resource, why, next, r.Provider)
	}
	when := "not yet requested"
	if at > 0 {
		when = "requested " + time.Unix(0, at).Format("15:04:05")
	}
	return fmt.Sprintf("Waiting for %d %s of %s (%s, provider %s)", n, plural(n, "unit"), resource, when, r.Provider)
}
