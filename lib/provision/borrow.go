package provision

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/provider"
)

// Loans of shared resources ([resources.NAME] provider): the controller
// hands over, with the hosts' demand, the units each shared resource
// needs beyond what it has (lib/sched.ComputeBorrow) and what running
// jobs hold of it; the provisioner of the resource's provider records a
// loan (requested), asks the provider (provider.Lender), and records what
// it lent (granted), which the controller adds to the resource's total.
// A loan whose units stay unused for the resource's idle_time (the
// resource's use fits in its total and the other loans) is marked
// returning, given back, and deleted; the newest loans go first. A loan
// found requested or returning at start is given back: the provider may
// have lent it, and giving back is safe to repeat, asking again is not.

// Loan states.
const (
	loanRequested = "requested"
	loanGranted   = "granted"
	loanReturning = "returning"
)

// lending is a Provisioner's state of its loans (p.mu).
type lending struct {
	loans     map[string]*api.RCBorrow
	want      map[string]int // the last units to borrow, of version wantV
	wantV     uint64
	used      map[string]float64 // what running jobs hold, per resource
	usedKnown bool
	idleSince map[string]time.Time // loan -> since when unused
	backoff   map[string]time.Time // resource -> not asked again before
	fails     map[string]int
}

func newLending() lending {
	return lending{loans: map[string]*api.RCBorrow{}, idleSince: map[string]time.Time{},
		backoff: map[string]time.Time{}, fails: map[string]int{}}
}

// loadLoan takes a recorded loan (New).
func (p *Provisioner) loadLoan(k string, v []byte) error {
	b := &api.RCBorrow{}
	if err := proto.Unmarshal(v, b); err != nil {
		return fmt.Errorf("provisioner: record %s: %w", k, err)
	}
	p.lend.loans[b.Id] = b
	return nil
}

// SetTokens hands over the units to borrow per shared resource,
// computed against version, and what running jobs hold of each.
func (p *Provisioner) SetTokens(version uint64, want map[string]int, used map[string]float64) {
	p.mu.Lock()
	p.lend.used, p.lend.usedKnown = used, used != nil
	changed := version == p.version && len(want) > 0
	if changed {
		p.lend.want, p.lend.wantV = want, version
	}
	p.mu.Unlock()
	if changed {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// serves says whether this provisioner lends the resource's units.
func (p *Provisioner) serves(r *config.Resource) bool {
	return r != nil && r.Borrows() && (p.opt.Provider == "" || r.Provider == p.opt.Provider)
}

// stepLoans gives back the loans unused for idle_time (and those of
// resources that no longer borrow from their provider), then borrows
// what the demand asks.
func (p *Provisioner) stepLoans(ctx context.Context, conf *config.Config, now time.Time) {
	p.mu.Lock()
	var want map[string]int
	if p.lend.wantV == p.version {
		want = p.lend.want
	}
	p.lend.want = nil
	used, known := p.lend.used, p.lend.usedKnown
	byRes := map[string][]*api.RCBorrow{}
	var back []*api.RCBorrow
	for _, b := range p.lend.loans {
		r := conf.Resources[b.Resource]
		switch {
		case b.State == loanReturning:
			back = append(back, b) // again (the last try failed)
		case b.State != loanGranted:
		case r == nil || !r.Borrows() || r.Provider != b.Provider:
			back = append(back, b)
		default:
			byRes[b.Resource] = append(byRes[b.Resource], b)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byRes)) {
		r := conf.Resources[name]
		loans := byRes[name]
		// Newest first: the oldest loans are the last to go.
		slices.SortFunc(loans, func(a, b *api.RCBorrow) int {
			return cmp.Or(cmp.Compare(b.GrantedAt, a.GrantedAt), strings.Compare(b.Id, a.Id))
		})
		unused := float64(r.Total) - used[name]
		for _, b := range loans {
			unused += float64(b.Amount)
		}
		for _, b := range loans {
			if !known || float64(b.Amount) > unused+1e-9 {
				delete(p.lend.idleSince, b.Id)
				continue
			}
			unused -= float64(b.Amount)
			since, ok := p.lend.idleSince[b.Id]
			if !ok {
				since = now
				p.lend.idleSince[b.Id] = now
			}
			if now.Sub(since) >= time.Duration(r.IdleTime)*time.Second {
				back = append(back, b)
			}
		}
	}
	p.mu.Unlock()
	if len(back) > 0 {
		slices.SortFunc(back, func(a, b *api.RCBorrow) int { return strings.Compare(a.Id, b.Id) })
		p.returnLoans(ctx, back, "")
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		r := conf.Resources[name]
		if !p.serves(r) || want[name] <= 0 {
			continue
		}
		p.mu.Lock()
		until, off := p.lend.backoff[name]
		lent := 0
		for _, b := range p.lend.loans {
			if b.Resource == name {
				lent += int(b.Amount)
			}
		}
		p.mu.Unlock()
		if off && now.Before(until) {
			continue
		}
		if n := min(want[name], int(r.BorrowMax)-lent); n > 0 {
			p.borrow(ctx, r, n, now)
		}
	}
}

// putLoans writes loans (and deletes keys) durably.
func (p *Provisioner) putLoans(loans []*api.RCBorrow, del []string, seq bool) error {
	kv := map[string][]byte{}
	for _, b := range loans {
		if err := marshalInto(kv, "rc/borrow/"+b.Id, b); err != nil {
			return err
		}
	}
	return p.write(kv, del, seq, "record loans")
}

// lender is the resource's provider as a lender, or an error saying why
// it cannot lend.
func (p *Provisioner) lender(name string) (provider.Lender, error) {
	prov := p.provs[name]
	if prov == nil {
		return nil, fmt.Errorf("no such provider: %s", name)
	}
	l, ok := prov.(provider.Lender)
	if !ok {
		return nil, fmt.Errorf("provider %s does not lend units of shared resources", name)
	}
	return l, nil
}

// BorrowBackoff is when each shared resource whose last loan failed may
// be asked for again (Unix ns); the resources not backed off are left
// out.
func (p *Provisioner) BorrowBackoff() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return pending(p.lend.backoff, p.clock())
}

// loanFailed records a failed loan for badmin rc error and backs the
// resource off.
func (p *Provisioner) loanFailed(r *config.Resource, msg string, now time.Time) {
	p.fail(r.Provider, "", "borrow "+r.Name+": "+msg, now)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lend.fails[r.Name]++
	p.lend.backoff[r.Name] = now.Add(p.backoffAfter(p.lend.fails[r.Name]))
}

// borrow asks the resource's provider for n units: the loan is recorded
// first.
func (p *Provisioner) borrow(ctx context.Context, r *config.Resource, n int, now time.Time) {
	l, err := p.lender(r.Provider)
	if err != nil {
		p.loanFailed(r, err.Error(), now)
		return
	}
	p.mu.Lock()
	p.seq++
	b := &api.RCBorrow{Id: "loan-" + r.Provider + "-" + strconv.FormatInt(p.seq, 10), Resource: r.Name, Provider: r.Provider, Amount: int32(n),
		State: loanRequested, RequestedAt: now.UnixNano(), UpdatedAt: now.UnixNano()}
	if err := p.putLoans([]*api.RCBorrow{b}, nil, true); err != nil {
		p.seq--
		p.mu.Unlock()
		p.loanFailed(r, err.Error(), now)
		return
	}
	p.lend.loans[b.Id] = b
	p.version++
	p.mu.Unlock()
	slog.Info("borrowing", "resource", r.Name, "count", n, "provider", r.Provider, "loan", b.Id)

	cctx, cancel := context.WithTimeout(ctx, p.opt.CallTimeout)
	got, err := l.Borrow(cctx, r.Name, b.Id, n)
	cancel()
	if err == nil && got <= 0 {
		err = fmt.Errorf("the provider lent none of %d", n)
	}
	if err != nil {
		p.loanFailed(r, err.Error(), p.clock())
		p.returnLoans(ctx, []*api.RCBorrow{b}, err.Error())
		return
	}
	nb := proto.Clone(b).(*api.RCBorrow)
	nb.Amount, nb.State = int32(got), loanGranted
	nb.GrantedAt, nb.UpdatedAt = time.Now().UnixNano(), time.Now().UnixNano()
	p.mu.Lock()
	if err := p.putLoans([]*api.RCBorrow{nb}, nil, false); err != nil {
		slog.Error("record loan", "loan", b.Id, "err", err)
	} else {
		p.lend.loans[nb.Id] = nb
		p.lend.fails[r.Name] = 0
		p.version++
	}
	p.mu.Unlock()
	slog.Info("borrowed", "resource", r.Name, "count", got, "provider", r.Provider, "loan", b.Id)
	p.cl.Kick()
}

// returnLoans gives loans back: marked returning (durably), given back,
// then deleted; one whose return fails stays returning and is tried
// again next step.
func (p *Provisioner) returnLoans(ctx context.Context, loans []*api.RCBorrow, why string) {
	now := time.Now()
	var marked []*api.RCBorrow
	for _, b := range loans {
		nb := proto.Clone(b).(*api.RCBorrow)
		nb.State, nb.UpdatedAt = loanReturning, now.UnixNano()
		if why != "" {
			nb.Error = why
		}
		marked = append(marked, nb)
	}
	p.mu.Lock()
	if err := p.putLoans(marked, nil, false); err != nil {
		if inUse(err) {
			// A job started on the units since the use this step
			// judged by: they are not idle.
			for _, b := range loans {
				delete(p.lend.idleSince, b.Id)
			}
			p.mu.Unlock()
			slog.Info("loans kept: in use", "err", err)
			return
		}
		p.mu.Unlock()
		slog.Error("record loans' return", "err", err)
		return
	}
	for _, b := range marked {
		p.lend.loans[b.Id] = b
	}
	p.version++
	p.mu.Unlock()
	for _, b := range marked {
		l, err := p.lender(b.Provider)
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, p.opt.CallTimeout)
			err = l.Giveback(cctx, b.Resource, b.Id, int(b.Amount))
			cancel()
		}
		if err != nil {
			p.fail(b.Provider, "", "return "+b.Resource+" ("+b.Id+"): "+err.Error(), time.Now())
			continue
		}
		p.mu.Lock()
		if err := p.putLoans(nil, []string{"rc/borrow/" + b.Id}, false); err != nil {
			slog.Error("record returned loan", "loan", b.Id, "err", err)
		} else {
			delete(p.lend.loans, b.Id)
			delete(p.lend.idleSince, b.Id)
			p.version++
		}
		p.mu.Unlock()
		slog.Info("loan returned", "resource", b.Resource, "count", b.Amount, "provider", b.Provider, "loan", b.Id)
	}
	p.cl.Kick()
}

// reconcileLoans gives back the loans of an earlier run that were being
// asked for or returned: whether the provider lent them is not known.
func (p *Provisioner) reconcileLoans(ctx context.Context) {
	p.mu.Lock()
	var back []*api.RCBorrow
	for _, id := range slices.Sorted(maps.Keys(p.lend.loans)) {
		if b := p.lend.loans[id]; b.State != loanGranted {
			back = append(back, b)
		}
	}
	p.mu.Unlock()
	if len(back) > 0 {
		p.returnLoans(ctx, back, "")
	}
}

// inUse reports whether the controller refused a return for its units'
// use (ErrLoanInUse, whose identity a daemon's call loses on the way).
func inUse(err error) bool {
	return errors.Is(err, ErrLoanInUse) || strings.Contains(err.Error(), ErrLoanInUse.Error())
}
