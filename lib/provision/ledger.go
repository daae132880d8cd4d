package provision

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/config"
)

// Ledger is the controller's side of the provisioners: the durable
// records of requests and instances (the store's rc/ keys, held in memory
// too), the demand of the last cycle, and the leases through which each
// provider is owned by one provisioner at a time: the controller's own
// (the Agent run in-process) or a daemon's (`xced provisioner`). It is
// the controller's Supply whichever provisioner works; provisioners reach
// it through Sync, Records and Put (gRPC for a daemon, direct calls for
// the controller's own).
//
// What guarantees that a provider has one owner at a time:
//
//   - The controller grants a lease for TTL from the moment it answers a
//     Sync; the owner counts its lease from the moment it sent that Sync,
//     minus a margin (Agent), so it stops calling the provider before the
//     controller would give the provider to anyone else (clocks need only
//     run at the same rate, not agree).
//   - Every record a provisioner writes (Put) is checked against the lease
//     under the same lock that grants leases, so a provisioner whose lease
//     ended cannot write, and a new owner reads (Records) only after every
//     write of the old owner is in the store.
//   - A lease's owner is written to the store (replicated under HA) when
//     it changes, not at each renewal. A controller that starts, or a
//     candidate that takes office after a failover, knows the owners but
//     not when they last renewed, so it counts each recorded lease as
//     renewed at its start: the owner keeps it by renewing with the new
//     leader; nobody else gets it before TTL has passed, by which time the
//     old owner, unable to renew, has stopped by its own count. So a
//     failover never hands a provider to two owners at once.
//   - The controller's own provisioner yields: a provider a daemon asks
//     for is not renewed to it; it stops, says so at its next Sync, and
//     the daemon gets the lease then (or at the lease's end).
//
// What a lease does not cover: a provider call in flight when the lease
// runs out is cancelled (its context), but a provider that already acted
// on it has acted; the records written before each call (Provisioner)
// make the next owner ask the provider about it (reconcile) rather than
// guess.
type Ledger struct {
	conf  func() *config.Config
	st    Store
	kick  func()
	ttl   time.Duration
	clock func() time.Time

	// wmu orders lease changes and record writes: a Put checks the lease
	// and writes under it, a grant to a new owner waits for it.
	wmu sync.Mutex

	mu        sync.Mutex
	version   uint64
	insts     map[string]*api.RCInstance
	reqs      map[string]*api.RCRequest
	demand    map[string]int
	demandV   uint64
	demandSeq uint64
	changed   chan struct{} // closed (and replaced) when demandSeq moves
	lastSeen  map[string]int
	seenV     uint64
	leases    map[string]*lease
	wanted    map[string]time.Time // provider -> a daemon last asked for it
	status    map[string]*ownerStatus
	lend      ledgerLending // loans of shared resources (ledger_borrow.go)
}

type lease struct {
	owner   string
	expires time.Time
}

type ownerStatus struct {
	errors        []*api.RCError
	backoff       map[string]int64 // template -> Unix ns
	borrowBackoff map[string]int64 // shared resource -> Unix ns
	at            time.Time
}

// DefaultLeaseTTL is a lease's length: three of the agents' heartbeats.
const DefaultLeaseTTL = 3 * time.Second

// NewLedger loads the records and the recorded lease owners from st.
// kick wakes the scheduler (the records changed, so the demand must be
// computed again).
func NewLedger(conf func() *config.Config, st Store, kick func(), ttl time.Duration) (*Ledger, error) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	l := &Ledger{conf: conf, st: st, kick: kick, ttl: ttl, clock: time.Now,
		insts: map[string]*api.RCInstance{}, reqs: map[string]*api.RCRequest{}, changed: make(chan struct{}),
		leases: map[string]*lease{}, wanted: map[string]time.Time{}, status: map[string]*ownerStatus{},
		lend: ledgerLending{loans: map[string]*api.RCBorrow{}}}
	recs, err := st.Meta("rc/")
	if err != nil {
		return nil, fmt.Errorf("provisioner records: %w", err)
	}
	now := l.clock()
	for k, v := range recs {
		if err := l.apply(k, v); err != nil {
			return nil, err
		}
		if p, ok := strings.CutPrefix(k, "rc/lease/"); ok {
			// Counted as renewed now: its owner keeps it by renewing.
			l.leases[p] = &lease{owner: string(v), expires: now.Add(ttl)}
		}
	}
	return l, nil
}

// apply puts one record (nil: deletes it) into the in-memory copy.
func (l *Ledger) apply(k string, v []byte) error {
	switch {
	case strings.HasPrefix(k, "rc/inst/"):
		id := strings.TrimPrefix(k, "rc/inst/")
		if v == nil {
			delete(l.insts, id)
			return nil
		}
		in := &api.RCInstance{}
		if err := proto.Unmarshal(v, in); err != nil {
			return fmt.Errorf("provisioner record %s: %w", k, err)
		}
		l.insts[id] = in
	case strings.HasPrefix(k, "rc/req/"):
		id := strings.TrimPrefix(k, "rc/req/")
		if v == nil {
			delete(l.reqs, id)
			return nil
		}
		r := &api.RCRequest{}
		if err := proto.Unmarshal(v, r); err != nil {
			return fmt.Errorf("provisioner record %s: %w", k, err)
		}
		l.reqs[id] = r
	case strings.HasPrefix(k, "rc/borrow/"):
		return l.applyLoan(strings.TrimPrefix(k, "rc/borrow/"), v)
	}
	return nil
}

// Counts are, per template, the instances booting and those that exist,
// as of the returned version (the controller's Supply).
func (l *Ledger) Counts() (version uint64, booting, exists map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	booting, exists = map[string]int{}, map[string]int{}
	for _, in := range l.insts {
		exists[in.Template]++
		if in.RcStatus == StatusStarted {
			booting[in.Template]++
		}
	}
	return l.version, booting, exists
}

// SetDemand takes a cycle's demand computed against version; the
// provisioners get it at their next Sync (a waiting one at once).
func (l *Ledger) SetDemand(version uint64, hosts map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lastSeen, l.seenV = hosts, version
	if version != l.version {
		return
	}
	if len(hosts) > 0 && (l.demandV != version || !maps.Equal(hosts, l.demand)) {
		l.demandChanged()
	}
	l.demand, l.demandV = hosts, version
}

// demandChanged wakes the provisioners waiting in Sync for new demand,
// of hosts or of units to borrow (l.mu held).
func (l *Ledger) demandChanged() {
	l.demandSeq++
	close(l.changed)
	l.changed = make(chan struct{})
}

// Instance is the record of the instance that joins as host, or nil.
func (l *Ledger) Instance(host string) *api.RCInstance {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, in := range l.insts {
		if in.Host == host {
			return proto.Clone(in).(*api.RCInstance)
		}
	}
	return nil
}

// backoffOf is when the template may be asked again, and the last error
// of it, as the provisioners last said (l.mu held).
func (l *Ledger) backoffOf(template string, now time.Time) (until time.Time, why string) {
	var at int64
	for _, s := range l.status {
		if b := s.backoff[template]; b > 0 && time.Unix(0, b).After(until) {
			until = time.Unix(0, b)
		}
		for _, e := range s.errors {
			if e.Template == template && e.Time >= at {
				at, why = e.Time, e.Message
			}
		}
	}
	if !now.Before(until) {
		return time.Time{}, ""
	}
	return until, why
}

// WaitReason is the pending reason of a job waiting for the template's
// hosts (as Provisioner.WaitReason).
func (l *Ledger) WaitReason(template string, conf *config.Config) string {
	t := conf.Templates[template]
	if t == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	var at int64
	for _, in := range l.insts {
		if in.Template == template && in.RcStatus == StatusStarted {
			n++
			at = max(at, in.RequestedAt)
		}
	}
	if l.seenV == l.version {
		n += l.lastSeen[template]
	}
	if until, why := l.backoffOf(template, time.Now()); !until.IsZero() {
		if why != "" {
			why = ": " + why
		}
		return fmt.Sprintf("Waiting for hosts of template %s: its last request failed%s (next try at %s, provider %s)",
			template, why, until.Format("15:04:05"), t.Provider)
	}
	return waitingFor(n, at, template, t.Provider)
}

func waitingFor(n int, at int64, template, prov string) string {
	when := "not yet requested"
	if at > 0 {
		when = "requested " + time.Unix(0, at).Format("15:04:05")
	}
	return fmt.Sprintf("Waiting for %d %s of template %s (%s, provider %s)", max(n, 1), plural(max(n, 1), "host"), template, when, prov)
}

// View is badmin rc view's and error's answer.
func (l *Ledger) View() *api.SupplyView {
	conf := l.conf()
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	v := &api.SupplyView{}
	for _, name := range slices.Sorted(maps.Keys(conf.Templates)) {
		t := conf.Templates[name]
		tv := &api.RCTemplateView{Name: name, Provider: t.Provider, Max: int32(t.Max), Slots: int32(t.Slots),
			Demand: int32(l.lastSeen[name]), Price: t.Price, IdleTimeSec: int64(t.IdleTime), MaxTtlSec: int64(t.MaxTTL)}
		for _, in := range l.insts {
			if in.Template != name {
				continue
			}
			switch in.RcStatus {
			case StatusStarted:
				tv.Booting++
			case StatusAllocated:
				tv.Allocated++
			}
		}
		if until, _ := l.backoffOf(name, now); !until.IsZero() {
			tv.BackoffUntil = until.UnixNano()
		}
		v.Templates = append(v.Templates, tv)
	}
	for _, id := range slices.Sorted(maps.Keys(l.insts)) {
		v.Instances = append(v.Instances, proto.Clone(l.insts[id]).(*api.RCInstance))
	}
	for _, id := range slices.Sorted(maps.Keys(l.reqs)) {
		v.Requests = append(v.Requests, proto.Clone(l.reqs[id]).(*api.RCRequest))
	}
	var errs []*api.RCError
	for _, s := range l.status {
		errs = append(errs, s.errors...)
	}
	slices.SortStableFunc(errs, func(a, b *api.RCError) int { return cmp.Compare(a.Time, b.Time) })
	if len(errs) > maxErrors {
		errs = errs[len(errs)-maxErrors:]
	}
	for _, e := range errs {
		v.Errors = append(v.Errors, proto.Clone(e).(*api.RCError))
	}
	l.addLoansAndLeases(v)
	return v
}

// Owner says who holds the provider's lease now ("" for nobody).
func (l *Ledger) Owner(provider string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls := l.leases[provider]; ls != nil && l.clock().Before(ls.expires) {
		return ls.owner
	}
	return ""
}

// ErrNotOwner refuses a write of a provisioner that does not hold the
// provider's lease.
var ErrNotOwner = errors.New("this provisioner does not hold the provider's lease")

// Sync is a provisioner's heartbeat: its leases are granted, renewed or
// ended, its status is kept (badmin rc error, pending reasons), and it is
// answered with the demand, after waiting up to WaitMs for a demand newer
// than the one it has seen.
func (l *Ledger) Sync(ctx context.Context, req *rpc.ProvisionerSyncRequest) (*rpc.ProvisionerSyncReply, error) {
	if req.Owner == "" {
		return nil, errors.New("a provisioner must name itself")
	}
	conf := l.conf()
	granted, err := l.leaseFor(req, conf)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	st := &ownerStatus{errors: req.Errors, backoff: req.Backoff, borrowBackoff: req.BorrowBackoff, at: l.clock()}
	l.status[req.Owner] = st
	for o, s := range l.status {
		if l.clock().Sub(s.at) > 10*time.Minute {
			delete(l.status, o)
		}
	}
	wait := l.changed
	seq := l.demandSeq
	l.mu.Unlock()
	if req.WaitMs > 0 && seq == req.DemandSeen {
		t := time.NewTimer(time.Duration(min(req.WaitMs, 10_000)) * time.Millisecond)
		select {
		case <-wait:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	rep := &rpc.ProvisionerSyncReply{Granted: granted, TtlMs: l.ttl.Milliseconds()}
	rep.Config, err = EncodeConfig(conf)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	rep.DemandSeq = l.demandSeq
	if l.demandV == l.version && len(l.demand) > 0 {
		rep.DemandValid = true
		rep.Demand = map[string]int32{}
		for t, n := range l.demand {
			rep.Demand[t] = int32(n)
		}
	}
	l.mu.Unlock()
	l.addTokens(rep)
	return rep, nil
}

// leaseFor grants, renews and ends req.Owner's leases.
func (l *Ledger) leaseFor(req *rpc.ProvisionerSyncRequest, conf *config.Config) ([]string, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	want, held := map[string]bool{}, map[string]bool{}
	for _, p := range req.Want {
		want[p] = true
	}
	for _, p := range req.Held {
		held[p] = true
	}
	l.mu.Lock()
	now := l.clock()
	var granted []string
	write := map[string][]byte{}
	renew := map[string]*lease{}
	for _, name := range slices.Sorted(maps.Keys(conf.Providers)) {
		if !req.Yield && want[name] {
			l.wanted[name] = now
		}
		daemonWants := req.Yield && now.Sub(l.wanted[name]) < l.ttl
		ls := l.leases[name]
		switch {
		case ls != nil && ls.owner == req.Owner:
			switch {
			case (want[name] || held[name]) && !daemonWants:
				renew[name] = &lease{owner: req.Owner, expires: now.Add(l.ttl)}
				granted = append(granted, name)
			case !held[name]:
				write["rc/lease/"+name] = nil // let go of
			}
			// else: held, not renewed: its owner stops and says so next.
		case ls != nil && now.Before(ls.expires):
			// Another's.
		case want[name] && !daemonWants:
			write["rc/lease/"+name] = []byte(req.Owner)
			renew[name] = &lease{owner: req.Owner, expires: now.Add(l.ttl)}
			granted = append(granted, name)
		}
	}
	l.mu.Unlock()
	if len(write) > 0 {
		if err := l.st.SetMetas(write); err != nil {
			return nil, fmt.Errorf("record the providers' leases: %w", err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, v := range write {
		name := strings.TrimPrefix(k, "rc/lease/")
		if v == nil {
			delete(l.leases, name)
			slog.Info("provider lease ended", "provider", name, "owner", req.Owner)
		} else {
			slog.Info("provider leased", "provider", name, "owner", req.Owner)
		}
	}
	for name, ls := range renew {
		l.leases[name] = ls
	}
	return granted, nil
}

// Records are the provisioners' records (rc/ but the leases) for a
// provisioner that holds the provider's lease.
func (l *Ledger) Records(_ context.Context, req *rpc.ProvisionerRecordsRequest) (*rpc.ProvisionerRecordsReply, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if !l.holds(req.Owner, req.Provider) {
		return nil, ErrNotOwner
	}
	recs, err := l.st.Meta("rc/")
	if err != nil {
		return nil, fmt.Errorf("provisioner records: %w", err)
	}
	for k := range recs {
		if strings.HasPrefix(k, "rc/lease/") {
			delete(recs, k)
		}
	}
	return &rpc.ProvisionerRecordsReply{Records: recs}, nil
}

func (l *Ledger) holds(owner, provider string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.leases[provider]
	return ls != nil && ls.owner == owner && l.clock().Before(ls.expires)
}

// Put writes the records of a provider whose lease the caller holds:
// instances of that provider, requests, and the provider's sequence.
func (l *Ledger) Put(_ context.Context, req *rpc.ProvisionerPutRequest) (*rpc.ProvisionerPutReply, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if !l.holds(req.Owner, req.Provider) {
		return nil, ErrNotOwner
	}
	kv := map[string][]byte{}
	for k, v := range req.Set {
		switch {
		case strings.HasPrefix(k, "rc/inst/"):
			in := &api.RCInstance{}
			if err := proto.Unmarshal(v, in); err != nil || in.Provider != req.Provider || "rc/inst/"+in.Id != k {
				return nil, fmt.Errorf("record %s: not an instance of provider %s", k, req.Provider)
			}
		case strings.HasPrefix(k, "rc/borrow/"):
			if err := l.checkLoan(req.Provider, strings.TrimPrefix(k, "rc/borrow/"), v); err != nil {
				return nil, err
			}
		case strings.HasPrefix(k, "rc/req/"), k == seqKey(req.Provider):
		default:
			return nil, fmt.Errorf("record %s: not a provisioner's record", k)
		}
		kv[k] = v
	}
	for _, k := range req.Delete {
		if id, ok := strings.CutPrefix(k, "rc/borrow/"); ok {
			if err := l.checkLoan(req.Provider, id, nil); err != nil {
				return nil, err
			}
			kv[k] = nil
		}
	}
	l.mu.Lock()
	for _, k := range req.Delete {
		id, isInst := strings.CutPrefix(k, "rc/inst/")
		if strings.HasPrefix(k, "rc/borrow/") {
			continue
		}
		if isInst {
			if in := l.insts[id]; in != nil && in.Provider != req.Provider {
				l.mu.Unlock()
				return nil, fmt.Errorf("record %s: not an instance of provider %s", k, req.Provider)
			}
		} else if !strings.HasPrefix(k, "rc/req/") {
			l.mu.Unlock()
			return nil, fmt.Errorf("record %s: not a provisioner's record", k)
		}
		kv[k] = nil
	}
	l.mu.Unlock()
	if len(kv) == 0 {
		return &rpc.ProvisionerPutReply{}, nil
	}
	commit := func() error {
		if err := l.st.SetMetas(kv); err != nil {
			return err
		}
		l.mu.Lock()
		for k, v := range kv {
			l.apply(k, v) // checked above
		}
		l.version++
		l.mu.Unlock()
		return nil
	}
	// A loan given back is checked against the use the scheduler sees
	// now (ledger_borrow.go).
	if err := l.returnChecked(kv, commit); err != nil {
		return nil, err
	}
	l.kick()
	return &rpc.ProvisionerPutReply{}, nil
}

// seqKey is where a provider's provisioner keeps its last sequence
// number (the instances' and requests' names).
func seqKey(provider string) string { return "rc/seq/" + provider }

// supplyConfig is what a provisioner daemon needs of the configuration.
type supplyConfig struct {
	Providers map[string]*config.Provider
	Templates map[string]*config.Template
	Resources map[string]*config.Resource `json:",omitempty"` // those that borrow
}

// EncodeConfig is the configuration's providers and templates for a
// provisioner daemon (Sync's answer).
func EncodeConfig(c *config.Config) ([]byte, error) {
	sc := supplyConfig{Providers: c.Providers, Templates: c.Templates}
	for name, r := range c.Resources {
		if r.Borrows() {
			if sc.Resources == nil {
				sc.Resources = map[string]*config.Resource{}
			}
			sc.Resources[name] = r
		}
	}
	return json.Marshal(sc)
}

// DecodeConfig is EncodeConfig's configuration.
func DecodeConfig(b []byte) (*config.Config, error) {
	var sc supplyConfig
	if err := json.Unmarshal(b, &sc); err != nil {
		return nil, fmt.Errorf("the controller's providers and templates: %w", err)
	}
	return &config.Config{Providers: sc.Providers, Templates: sc.Templates, Resources: sc.Resources}, nil
}
