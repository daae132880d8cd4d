// Package provision is the provisioner: it turns the scheduler's demand
// per template (lib/sched.ComputeDemand, handed over by the controller
// each cycle) into requests to the providers, follows the instances until
// their workers join, and gives back the hosts that stay idle, outlive
// their max_ttl or are drained.
//
// Durability: every request and every instance is written to the store
// (replicated under HA, as every store write is) before the provider is
// called, and an instance is marked Deallocated_Sent before it is
// returned, so that after a restart the provisioner asks the provider
// about each record instead of guessing: an instance the provider never
// started is dropped (the demand asks again), one that runs is followed,
// one being returned is returned again. Nothing leaks and nothing is asked
// for twice.
//
// Demand is acted on once: the controller computes it against the counts
// of a version of the Ledger's records (Ledger.Counts), and each
// provisioner takes it (SetDemand) only if its own records have not
// changed since it read its Version before asking; a demand computed
// before the last change is ignored.
//
// Instance states (LSF's RC_STATUS): Preprovision_Started (asked for, not
// joined), Allocated (its worker registered), Deallocated_Sent (being
// returned), Done (gone; the record is deleted).
//
// Who runs it: the controller keeps a Ledger (ledger.go: the records, the
// demand, and a lease per provider) as its Supply; an Agent (agent.go),
// in `xced provisioner` or in the controller itself, takes the leases and
// runs one Provisioner per provider it holds, each in its own goroutine,
// whose records go through the Ledger.
package provision

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/provider"
)

// RC_STATUS values.
const (
	StatusStarted     = "Preprovision_Started"
	StatusAllocated   = "Allocated"
	StatusDeallocSent = "Deallocated_Sent"
	StatusDone        = "Done"
)

// Request states.
const (
	reqRequested = "requested"
	reqDone      = "done"
	reqFailed    = "failed"
)

// Store is the durable part of the controller's store the provisioner
// uses (lib/store.Store).
type Store interface {
	SetMetas(kv map[string][]byte) error
	Meta(prefix string) (map[string][]byte, error)
}

// HostState is a host as the controller sees it.
type HostState struct {
	Joined   bool // its worker is connected
	Instance string
	Running  int  // jobs running (or suspended) there
	Drained  bool // badmin hdrain
}

// Cluster is what the provisioner needs of the controller.
type Cluster interface {
	// Host says how a host stands (zero: unknown).
	Host(name string) HostState
	// Release closes the host to new jobs if it runs none, and says
	// whether it did (then it may be returned).
	Release(name string) bool
	// Forget removes a returned host from the cluster.
	Forget(name string)
	// Kick wakes the scheduler (the supply changed).
	Kick()
}

// Options tune the provisioner.
type Options struct {
	// Interval is how often instances are checked (default 1 s); a
	// demand wakes the loop at once.
	Interval time.Duration
	// CallTimeout bounds each provider call (default 60 s).
	CallTimeout time.Duration
	// Backoff after a failed request: doubled per failure of the
	// template, from MinBackoff (default 10 s) to MaxBackoff (5 min).
	MinBackoff, MaxBackoff time.Duration
	// Provider, when set, is the one provider this provisioner serves
	// (an Agent runs one per provider it holds the lease on): it loads
	// only that provider's records and keeps its sequence under its own
	// key, so provisioners of different providers never write the same
	// record.
	Provider string
}

// Provisioner owns the providers of one configuration.
type Provisioner struct {
	conf  func() *config.Config
	cl    Cluster
	st    Store
	provs map[string]provider.Provider
	opt   Options
	wake  chan struct{}
	clock func() time.Time // time.Now; tests move it

	mu       sync.Mutex
	version  uint64
	demand   map[string]int // the last demand of the current version
	demandV  uint64
	lastSeen map[string]int // the last demand handed over (badmin rc view)
	seenV    uint64         // the version it was computed against
	insts    map[string]*api.RCInstance
	reqs     map[string]*api.RCRequest
	seq      int64
	backoff  map[string]time.Time
	fails    map[string]int
	errs     []*api.RCError
	busy     map[string]time.Time // host -> last seen running jobs
	stopped  map[string]bool      // instances seen gone by the provider
	lend     lending              // loans of shared resources (borrow.go)
}

// maxErrors is how many recent provider errors badmin rc error shows.
const maxErrors = 50

// New loads the provisioner's records from the store. Call Run to start.
func New(conf func() *config.Config, cl Cluster, st Store, provs map[string]provider.Provider, opt Options) (*Provisioner, error) {
	if opt.Interval <= 0 {
		opt.Interval = time.Second
	}
	if opt.CallTimeout <= 0 {
		opt.CallTimeout = 60 * time.Second
	}
	if opt.MinBackoff <= 0 {
		opt.MinBackoff = 10 * time.Second
	}
	if opt.MaxBackoff <= 0 {
		opt.MaxBackoff = 5 * time.Minute
	}
	p := &Provisioner{conf: conf, cl: cl, st: st, provs: provs, opt: opt, wake: make(chan struct{}, 1),
		insts: map[string]*api.RCInstance{}, reqs: map[string]*api.RCRequest{}, backoff: map[string]time.Time{},
		fails: map[string]int{}, busy: map[string]time.Time{}, stopped: map[string]bool{}, lastSeen: map[string]int{},
		clock: time.Now, lend: newLending()}
	recs, err := st.Meta("rc/")
	if err != nil {
		return nil, fmt.Errorf("provisioner: read its records: %w", err)
	}
	for k, v := range recs {
		switch {
		case strings.HasPrefix(k, "rc/inst/"):
			in := &api.RCInstance{}
			if err := proto.Unmarshal(v, in); err != nil {
				return nil, fmt.Errorf("provisioner: record %s: %w", k, err)
			}
			p.insts[in.Id] = in
		case strings.HasPrefix(k, "rc/req/"):
			r := &api.RCRequest{}
			if err := proto.Unmarshal(v, r); err != nil {
				return nil, fmt.Errorf("provisioner: record %s: %w", k, err)
			}
			p.reqs[r.Id] = r
		case strings.HasPrefix(k, "rc/borrow/"):
			if err := p.loadLoan(k, v); err != nil {
				return nil, err
			}
		case k == "rc/seq" || strings.HasPrefix(k, "rc/seq/"):
			// Past every provider's: a template that moved to another
			// provider gets no name its old instances still have.
			n, _ := strconv.ParseInt(string(v), 10, 64)
			p.seq = max(p.seq, n)
		}
	}
	if opt.Provider != "" {
		p.keepProvider(conf())
	}
	return p, nil
}

// keepProvider drops the records of other providers than opt.Provider:
// their instances, and the requests of theirs (a request none of whose
// instances is left is its template's provider's, which deletes it).
func (p *Provisioner) keepProvider(conf *config.Config) {
	for id, r := range p.reqs {
		mine, left := false, false
		for _, iid := range r.Instances {
			if in := p.insts[iid]; in != nil {
				left = true
				mine = mine || in.Provider == p.opt.Provider
			}
		}
		if !left {
			t := conf.Templates[r.Template]
			mine = t != nil && t.Provider == p.opt.Provider
		}
		if !mine {
			delete(p.reqs, id)
		}
	}
	for id, in := range p.insts {
		if in.Provider != p.opt.Provider {
			delete(p.insts, id)
		}
	}
	for id, b := range p.lend.loans {
		if b.Provider != p.opt.Provider {
			delete(p.lend.loans, id)
		}
	}
}

// Version is the version of the provisioner's state that SetDemand
// compares with (an Agent reads it before it asks for the demand).
func (p *Provisioner) Version() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version
}

// Status is what the provisioner tells the controller of its providers:
// its recent errors, and per template when it asks again after a failure.
func (p *Provisioner) Status() (errs []*api.RCError, backoff map[string]int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	backoff = pending(p.backoff, p.clock())
	for _, e := range p.errs {
		errs = append(errs, proto.Clone(e).(*api.RCError))
	}
	return errs, backoff
}

// pending is the backoffs of by that have not ended at now, in Unix ns:
// what a provisioner reports of its templates and shared resources.
func pending(by map[string]time.Time, now time.Time) map[string]int64 {
	out := map[string]int64{}
	for name, until := range by {
		if now.Before(until) {
			out[name] = until.UnixNano()
		}
	}
	return out
}

// SetDemand hands over a cycle's demand, computed against the counts of
// version.
func (p *Provisioner) SetDemand(version uint64, hosts map[string]int) {
	p.mu.Lock()
	p.lastSeen, p.seenV = hosts, version
	changed := version == p.version && len(hosts) > 0
	if changed {
		p.demand, p.demandV = hosts, version
	}
	p.mu.Unlock()
	if changed {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// Instance is the record of the instance that joins as host, or nil.
func (p *Provisioner) Instance(host string) *api.RCInstance {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, in := range p.insts {
		if in.Host == host {
			return proto.Clone(in).(*api.RCInstance)
		}
	}
	return nil
}

// TemplateOf names the template of a provisioned host ("" for others).
func (p *Provisioner) TemplateOf(host string) string {
	if in := p.Instance(host); in != nil {
		return in.Template
	}
	return ""
}

// WaitReason is the pending reason of a job waiting for hosts of the
// template: "Waiting for 2 hosts of template cpu4 (requested 10:02:11,
// provider local)", or why none come.
func (p *Provisioner) WaitReason(template string, conf *config.Config) string {
	t := conf.Templates[template]
	if t == nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	var at int64
	for _, in := range p.insts {
		if in.Template == template && in.RcStatus == StatusStarted {
			n++
			at = max(at, in.RequestedAt)
		}
	}
	if p.seenV == p.version {
		// Not asked for yet (the demand is net of those booting).
		n += p.lastSeen[template]
	}
	if until, ok := p.backoff[template]; ok && time.Now().Before(until) {
		why := ""
		for i := len(p.errs) - 1; i >= 0; i-- {
			if p.errs[i].Template == template {
				why = ": " + p.errs[i].Message
				break
			}
		}
		return fmt.Sprintf("Waiting for hosts of template %s: its last request failed%s (next try at %s, provider %s)",
			template, why, until.Format("15:04:05"), t.Provider)
	}
	when := "not yet requested"
	if at > 0 {
		when = "requested " + time.Unix(0, at).Format("15:04:05")
	}
	return fmt.Sprintf("Waiting for %d %s of template %s (%s, provider %s)", max(n, 1), plural(max(n, 1), "host"), template, when, t.Provider)
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// View is badmin rc view's and error's answer.
func (p *Provisioner) View() *api.SupplyView {
	conf := p.conf()
	p.mu.Lock()
	defer p.mu.Unlock()
	v := &api.SupplyView{}
	for _, name := range slices.Sorted(maps.Keys(conf.Templates)) {
		t := conf.Templates[name]
		tv := &api.RCTemplateView{Name: name, Provider: t.Provider, Max: int32(t.Max), Slots: int32(t.Slots),
			Demand: int32(p.lastSeen[name]), Price: t.Price, IdleTimeSec: int64(t.IdleTime), MaxTtlSec: int64(t.MaxTTL)}
		for _, in := range p.insts {
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
		if until, ok := p.backoff[name]; ok && time.Now().Before(until) {
			tv.BackoffUntil = until.UnixNano()
		}
		v.Templates = append(v.Templates, tv)
	}
	for _, id := range slices.Sorted(maps.Keys(p.insts)) {
		v.Instances = append(v.Instances, proto.Clone(p.insts[id]).(*api.RCInstance))
	}
	for _, id := range slices.Sorted(maps.Keys(p.reqs)) {
		v.Requests = append(v.Requests, proto.Clone(p.reqs[id]).(*api.RCRequest))
	}
	for _, e := range p.errs {
		v.Errors = append(v.Errors, proto.Clone(e).(*api.RCError))
	}
	return v
}

// Run follows the instances and acts on demand until ctx ends.
func (p *Provisioner) Run(ctx context.Context) {
	p.reconcile(ctx)
	p.reconcileLoans(ctx)
	tick := time.NewTicker(p.opt.Interval)
	defer tick.Stop()
	for {
		p.step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-p.wake:
		}
	}
}

// step checks every instance, then acts on the current demand.
func (p *Provisioner) step(ctx context.Context) {
	now := p.clock()
	p.checkInstances(ctx, now)
	p.mu.Lock()
	var want map[string]int
	if p.demandV == p.version {
		want = p.demand
	}
	p.demand = nil
	p.mu.Unlock()
	conf := p.conf()
	p.stepLoans(ctx, conf, now)
	for _, name := range slices.Sorted(maps.Keys(want)) {
		n := want[name]
		t := conf.Templates[name]
		if t == nil || n <= 0 {
			continue
		}
		p.mu.Lock()
		until, off := p.backoff[name]
		exists := 0
		for _, in := range p.insts {
			if in.Template == name {
				exists++
			}
		}
		p.mu.Unlock()
		if off && now.Before(until) {
			continue
		}
		n = min(n, t.Max-exists)
		if n > 0 {
			p.request(ctx, conf, t, n, now)
		}
	}
}

// put writes records (nil value: delete) durably, then bumps the version.
func (p *Provisioner) put(insts []*api.RCInstance, reqs []*api.RCRequest, del []string, seq bool) error {
	kv := map[string][]byte{}
	for _, in := range insts {
		if err := marshalInto(kv, "rc/inst/"+in.Id, in); err != nil {
			return err
		}
	}
	for _, r := range reqs {
		if err := marshalInto(kv, "rc/req/"+r.Id, r); err != nil {
			return err
		}
	}
	return p.write(kv, del, seq, "record")
}

// marshalInto adds a record to kv under key.
func marshalInto(kv map[string][]byte, key string, m proto.Message) error {
	b, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	kv[key] = b
	return nil
}

// write stores kv, the deletions del and, with seq, the request
// sequence, in one durable write; what names it in the error.
func (p *Provisioner) write(kv map[string][]byte, del []string, seq bool, what string) error {
	for _, k := range del {
		kv[k] = nil
	}
	if seq {
		key := "rc/seq"
		if p.opt.Provider != "" {
			key = seqKey(p.opt.Provider)
		}
		kv[key] = []byte(strconv.FormatInt(p.seq, 10))
	}
	if err := p.st.SetMetas(kv); err != nil {
		return fmt.Errorf("provisioner: %s: %w", what, err)
	}
	return nil
}

// backoffAfter is how long a template or a resource waits after its
// fails-th failure in a row: doubling from MinBackoff, at most MaxBackoff.
func (p *Provisioner) backoffAfter(fails int) time.Duration {
	return min(p.opt.MinBackoff<<min(fails-1, 16), p.opt.MaxBackoff)
}

// fail records a provider's error for badmin rc error and backs the
// template off.
func (p *Provisioner) fail(provName, template, msg string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	slog.Warn("provider error", "provider", provName, "template", template, "err", msg)
	p.errs = append(p.errs, &api.RCError{Time: now.UnixNano(), Provider: provName, Template: template, Message: msg})
	if len(p.errs) > maxErrors {
		p.errs = p.errs[len(p.errs)-maxErrors:]
	}
	if template != "" {
		p.fails[template]++
		p.backoff[template] = now.Add(p.backoffAfter(p.fails[template]))
	}
	p.version++
}

// request asks the template's provider for n instances: the request and
// its instances are recorded first.
func (p *Provisioner) request(ctx context.Context, conf *config.Config, t *config.Template, n int, now time.Time) {
	prov := p.provs[t.Provider]
	if prov == nil {
		p.fail(t.Provider, t.Name, "no such provider: "+t.Provider, now)
		return
	}
	p.mu.Lock()
	p.seq++
	r := &api.RCRequest{Id: "req-" + t.Provider + "-" + strconv.FormatInt(p.seq, 10), Template: t.Name, Count: int32(n),
		CreatedAt: now.UnixNano(), UpdatedAt: now.UnixNano(), State: reqRequested}
	var insts []*api.RCInstance
	var pins []provider.Instance
	for range n {
		p.seq++
		host := t.Name + "-" + strconv.FormatInt(p.seq, 10)
		in := &api.RCInstance{Id: host, Template: t.Name, Provider: t.Provider, Host: host, RequestId: r.Id,
			RcStatus: StatusStarted, ProvStatus: "requested", RequestedAt: now.UnixNano(), UpdatedAt: now.UnixNano()}
		insts = append(insts, in)
		r.Instances = append(r.Instances, in.Id)
		pins = append(pins, provider.Instance{ID: in.Id, Host: in.Host})
	}
	if err := p.put(insts, []*api.RCRequest{r}, nil, true); err != nil {
		p.seq -= int64(n + 1)
		p.mu.Unlock()
		p.fail(t.Provider, t.Name, err.Error(), now)
		return
	}
	for _, in := range insts {
		p.insts[in.Id] = in
	}
	p.reqs[r.Id] = r
	p.version++
	p.mu.Unlock()
	slog.Info("requesting hosts", "template", t.Name, "count", n, "provider", t.Provider, "request", r.Id)

	cctx, cancel := context.WithTimeout(ctx, p.opt.CallTimeout)
	id, err := prov.Request(cctx, t, pins)
	cancel()
	p.mu.Lock()
	r = proto.Clone(r).(*api.RCRequest)
	r.UpdatedAt = time.Now().UnixNano()
	if err != nil {
		r.State, r.Error = reqFailed, err.Error()
	} else {
		r.ProviderRequest = id
		for i, in := range insts {
			in = proto.Clone(in).(*api.RCInstance)
			in.ProviderRequest, in.ProvStatus = id, provider.Booting
			insts[i] = in
		}
	}
	if err == nil {
		if perr := p.put(insts, []*api.RCRequest{r}, nil, false); perr != nil {
			slog.Error("record request", "err", perr)
		}
		for _, in := range insts {
			p.insts[in.Id] = in
		}
		p.reqs[r.Id] = r
		p.version++
	}
	p.mu.Unlock()
	if err != nil {
		// Whatever the provider started of it goes back.
		p.fail(t.Provider, t.Name, err.Error(), time.Now())
		p.giveBack(ctx, insts, "the request failed: "+err.Error(), reqFailed)
	}
	p.cl.Kick()
}

// checkInstances follows each instance: booting ones join or time out,
// allocated ones go back when idle, old or drained, and ones being
// returned are returned (again, after a restart).
func (p *Provisioner) checkInstances(ctx context.Context, now time.Time) {
	conf := p.conf()
	p.mu.Lock()
	list := make([]*api.RCInstance, 0, len(p.insts))
	for _, id := range slices.Sorted(maps.Keys(p.insts)) {
		list = append(list, p.insts[id])
	}
	p.mu.Unlock()
	var toReturn []*api.RCInstance
	var failed []*api.RCInstance
	for _, in := range list {
		t := conf.Templates[in.Template]
		hs := p.cl.Host(in.Host)
		switch in.RcStatus {
		case StatusStarted:
			if hs.Joined {
				nin := proto.Clone(in).(*api.RCInstance)
				nin.RcStatus, nin.ProvStatus = StatusAllocated, provider.Running
				nin.JoinedAt, nin.UpdatedAt = now.UnixNano(), now.UnixNano()
				p.commitInstance(nin)
				p.mu.Lock()
				p.busy[in.Host] = now
				p.fails[in.Template] = 0
				p.mu.Unlock()
				slog.Info("host joined", "host", in.Host, "template", in.Template)
				continue
			}
			boot := config.DefaultBootTimeout
			if t != nil {
				boot = t.BootTimeout
			}
			if now.Sub(time.Unix(0, in.RequestedAt)) > time.Duration(boot)*time.Second {
				nin := proto.Clone(in).(*api.RCInstance)
				nin.Error = fmt.Sprintf("did not join within boot_timeout %s", boot)
				failed = append(failed, nin)
				continue
			}
			p.mu.Lock()
			gone := p.stopped[in.Id]
			p.mu.Unlock()
			if gone {
				nin := proto.Clone(in).(*api.RCInstance)
				nin.Error = "its provider reports it gone before it joined"
				failed = append(failed, nin)
			}
		case StatusAllocated:
			p.mu.Lock()
			if hs.Running > 0 {
				p.busy[in.Host] = now
			}
			last, ok := p.busy[in.Host]
			if !ok {
				last = now
				p.busy[in.Host] = now
			}
			p.mu.Unlock()
			if t == nil {
				// Its template left the configuration: return it once empty.
				if p.cl.Release(in.Host) {
					toReturn = append(toReturn, in)
				}
				continue
			}
			idle := now.Sub(last) >= time.Duration(t.IdleTime)*time.Second
			old := t.MaxTTL > 0 && now.Sub(time.Unix(0, in.JoinedAt)) >= time.Duration(t.MaxTTL)*time.Second
			if (idle || old || hs.Drained) && p.cl.Release(in.Host) {
				toReturn = append(toReturn, in)
			}
		case StatusDeallocSent:
			toReturn = append(toReturn, in)
		}
	}
	if len(failed) > 0 {
		byReq := map[string][]*api.RCInstance{}
		for _, in := range failed {
			byReq[in.RequestId] = append(byReq[in.RequestId], in)
		}
		for _, rid := range slices.Sorted(maps.Keys(byReq)) {
			ins := byReq[rid]
			p.fail(ins[0].Provider, ins[0].Template, fmt.Sprintf("%s: %s", ins[0].Host, ins[0].Error), now)
			p.giveBack(ctx, ins, ins[0].Error, reqFailed)
		}
	}
	if len(toReturn) > 0 {
		p.giveBack(ctx, toReturn, "", "")
	}
	p.pollProviders(ctx)
	p.finishRequests()
}

// commitInstance records one instance's new state.
func (p *Provisioner) commitInstance(in *api.RCInstance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.put([]*api.RCInstance{in}, nil, nil, false); err != nil {
		slog.Error("record instance", "instance", in.Id, "err", err)
		return
	}
	p.insts[in.Id] = in
	p.version++
}

// giveBack returns instances: marked Deallocated_Sent (durably), returned
// to their provider, then forgotten by the cluster and deleted. reqState,
// when set, is what their requests become (failed).
func (p *Provisioner) giveBack(ctx context.Context, insts []*api.RCInstance, why, reqState string) {
	now := time.Now()
	byProv := map[string][]*api.RCInstance{}
	var marked []*api.RCInstance
	for _, in := range insts {
		nin := proto.Clone(in).(*api.RCInstance)
		nin.RcStatus, nin.UpdatedAt = StatusDeallocSent, now.UnixNano()
		if why != "" {
			nin.Error = why
		}
		marked = append(marked, nin)
		byProv[nin.Provider] = append(byProv[nin.Provider], nin)
	}
	p.mu.Lock()
	var reqs []*api.RCRequest
	if reqState != "" {
		seen := map[string]bool{}
		for _, in := range marked {
			if r := p.reqs[in.RequestId]; r != nil && !seen[r.Id] {
				seen[r.Id] = true
				nr := proto.Clone(r).(*api.RCRequest)
				nr.State, nr.UpdatedAt = reqState, now.UnixNano()
				if nr.Error == "" {
					nr.Error = why
				}
				reqs = append(reqs, nr)
			}
		}
	}
	if err := p.put(marked, reqs, nil, false); err != nil {
		p.mu.Unlock()
		slog.Error("record return", "err", err)
		return
	}
	for _, in := range marked {
		p.insts[in.Id] = in
	}
	for _, r := range reqs {
		p.reqs[r.Id] = r
	}
	p.version++
	p.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(byProv)) {
		ins := byProv[name]
		prov := p.provs[name]
		if prov == nil {
			p.fail(name, "", "no such provider to return "+ins[0].Host+" to", now)
			continue
		}
		var pins []provider.Instance
		for _, in := range ins {
			pins = append(pins, provider.Instance{ID: in.Id, Host: in.Host})
		}
		cctx, cancel := context.WithTimeout(ctx, p.opt.CallTimeout)
		err := prov.Return(cctx, pins)
		cancel()
		if err != nil {
			p.fail(name, ins[0].Template, "return: "+err.Error(), time.Now())
			continue // tried again next step (Deallocated_Sent)
		}
		var del []string
		for _, in := range ins {
			del = append(del, "rc/inst/"+in.Id)
		}
		p.mu.Lock()
		if err := p.put(nil, nil, del, false); err != nil {
			slog.Error("record returned hosts", "err", err)
		}
		for _, in := range ins {
			delete(p.insts, in.Id)
			delete(p.busy, in.Host)
			delete(p.stopped, in.Id)
		}
		p.version++
		p.mu.Unlock()
		for _, in := range ins {
			p.cl.Forget(in.Host)
			slog.Info("host returned", "host", in.Host, "template", in.Template, "provider", name)
		}
	}
	p.cl.Kick()
}

// pollProviders asks the providers how the booting instances stand, so
// that one that failed before joining is noticed before boot_timeout:
// one call per provider's request, with that request's instances.
func (p *Provisioner) pollProviders(ctx context.Context) {
	type preq struct{ provider, id string }
	p.mu.Lock()
	byReq := map[preq][]provider.Instance{}
	for _, in := range p.insts {
		if in.RcStatus == StatusStarted && in.ProvStatus != "requested" {
			k := preq{in.Provider, in.ProviderRequest}
			byReq[k] = append(byReq[k], provider.Instance{ID: in.Id, Host: in.Host})
		}
	}
	p.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(byReq), func(a, b preq) int {
		return cmp.Or(strings.Compare(a.provider, b.provider), strings.Compare(a.id, b.id))
	})
	for _, k := range keys {
		name, ins := k.provider, byReq[k]
		prov := p.provs[name]
		if prov == nil {
			continue
		}
		slices.SortFunc(ins, func(a, b provider.Instance) int { return strings.Compare(a.ID, b.ID) })
		cctx, cancel := context.WithTimeout(ctx, p.opt.CallTimeout)
		ms, err := prov.Status(cctx, k.id, ins)
		cancel()
		if err != nil {
			p.fail(name, "", "status: "+err.Error(), time.Now())
			continue
		}
		p.mu.Lock()
		for _, m := range ms {
			if m.Status == provider.Terminated || m.Status == provider.Failed {
				p.stopped[m.ID] = true
			}
		}
		p.mu.Unlock()
	}
}

// finishRequests marks requests whose instances all joined done, and
// deletes those none of whose instances is left.
func (p *Provisioner) finishRequests() {
	p.mu.Lock()
	defer p.mu.Unlock()
	var upd []*api.RCRequest
	var del []string
	for _, r := range p.reqs {
		left, joined := 0, 0
		for _, id := range r.Instances {
			if in := p.insts[id]; in != nil {
				left++
				if in.RcStatus == StatusAllocated {
					joined++
				}
			}
		}
		switch {
		case left == 0:
			del = append(del, "rc/req/"+r.Id)
		case r.State == reqRequested && joined == len(r.Instances):
			nr := proto.Clone(r).(*api.RCRequest)
			nr.State, nr.UpdatedAt = reqDone, time.Now().UnixNano()
			upd = append(upd, nr)
		}
	}
	if len(upd) == 0 && len(del) == 0 {
		return
	}
	if err := p.put(nil, upd, del, false); err != nil {
		slog.Error("record requests", "err", err)
		return
	}
	for _, r := range upd {
		p.reqs[r.Id] = r
	}
	for _, k := range del {
		delete(p.reqs, strings.TrimPrefix(k, "rc/req/"))
	}
}

// reconcile asks the providers about the instances of an earlier run: one
// the provider never started is dropped (the provisioner stopped between
// recording it and asking), one that runs is followed, one gone is
// returned (its record ends).
func (p *Provisioner) reconcile(ctx context.Context) {
	p.mu.Lock()
	byProv := map[string][]*api.RCInstance{}
	for _, in := range p.insts {
		byProv[in.Provider] = append(byProv[in.Provider], in)
	}
	p.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(byProv)) {
		prov := p.provs[name]
		ins := byProv[name]
		if prov == nil {
			slog.Warn("instances of a provider no longer configured are left to it", "provider", name, "count", len(ins))
			continue
		}
		var pins []provider.Instance
		for _, in := range ins {
			pins = append(pins, provider.Instance{ID: in.Id, Host: in.Host})
		}
		cctx, cancel := context.WithTimeout(ctx, p.opt.CallTimeout)
		ms, err := prov.Status(cctx, "", pins)
		cancel()
		if err != nil {
			p.fail(name, "", "status after restart: "+err.Error(), time.Now())
			continue
		}
		st := map[string]string{}
		for _, m := range ms {
			st[m.ID] = m.Status
		}
		var gone []*api.RCInstance
		for _, in := range ins {
			switch st[in.Id] {
			case provider.Unknown, provider.Terminated, provider.Failed:
				if in.RcStatus != StatusDeallocSent {
					slog.Info("instance not running after restart; dropped", "host", in.Host, "status", st[in.Id])
				}
				gone = append(gone, in)
			}
		}
		if len(gone) > 0 {
			p.giveBack(ctx, gone, "", "")
		}
	}
	slog.Info("provisioner ready", "instances", len(p.insts), "requests", len(p.reqs))
}
