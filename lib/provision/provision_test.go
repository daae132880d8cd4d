package provision

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"xce/lib/config"
	"xce/lib/provider"
	"xce/lib/provider/script"
)

type memStore struct {
	mu sync.Mutex
	kv map[string][]byte
}

func (s *memStore) SetMetas(kv map[string][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range kv {
		if v == nil {
			delete(s.kv, k)
		} else {
			s.kv[k] = v
		}
	}
	return nil
}

func (s *memStore) Meta(prefix string) (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]byte{}
	for k, v := range s.kv {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out, nil
}

func (s *memStore) count(prefix string) int {
	m, _ := s.Meta(prefix)
	return len(m)
}

// fakeCluster: hosts joined and their running jobs, as the test sets them.
type fakeCluster struct {
	mu       sync.Mutex
	joined   map[string]bool
	running  map[string]int
	drained  map[string]bool
	released map[string]bool
	forgot   []string
}

func newFakeCluster() *fakeCluster {
	return &fakeCluster{joined: map[string]bool{}, running: map[string]int{}, drained: map[string]bool{}, released: map[string]bool{}}
}

func (f *fakeCluster) Host(name string) HostState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return HostState{Joined: f.joined[name], Running: f.running[name], Drained: f.drained[name]}
}

func (f *fakeCluster) Release(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running[name] > 0 {
		return false
	}
	f.released[name] = true
	return true
}

func (f *fakeCluster) Forget(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgot = append(f.forgot, name)
	delete(f.joined, name)
}

func (f *fakeCluster) Kick() {}

// fakeProvider records calls; at Request it checks the instances are in
// the store already.
type fakeProvider struct {
	t        *testing.T
	st       *memStore
	mu       sync.Mutex
	running  map[string]bool
	requests int
	returned []string
	failWith error
}

func (f *fakeProvider) Request(_ context.Context, _ *config.Template, insts []provider.Instance) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, in := range insts {
		if m, _ := f.st.Meta("rc/inst/" + in.ID); len(m) != 1 {
			f.t.Errorf("instance %s asked for before it was recorded", in.ID)
		}
	}
	f.requests++
	if f.failWith != nil {
		return "", f.failWith
	}
	for _, in := range insts {
		f.running[in.ID] = true
	}
	return "r1", nil
}

func (f *fakeProvider) Status(_ context.Context, _ string, insts []provider.Instance) ([]provider.Machine, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []provider.Machine
	for _, in := range insts {
		st := provider.Unknown
		if f.running[in.ID] {
			st = provider.Running
		}
		out = append(out, provider.Machine{Instance: in, Status: st})
	}
	return out, nil
}

func (f *fakeProvider) Return(_ context.Context, insts []provider.Instance) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, in := range insts {
		delete(f.running, in.ID)
		f.returned = append(f.returned, in.ID)
	}
	return nil
}

func testConf() *config.Config {
	c, err := config.Parse("t.toml", []byte(`
[providers.p]
kind = "local"
[templates.cpu]
provider = "p"
max = 2
idle_time = "60s"
boot_timeout = "120s"
max_ttl = "1h"
[queues.normal]
rc_hosts = ["all"]
`))
	if err != nil {
		panic(err)
	}
	return c
}

type rig struct {
	p    *Provisioner
	cl   *fakeCluster
	prov *fakeProvider
	st   *memStore
	now  time.Time
}

func newRig(t *testing.T, st *memStore, prov *fakeProvider) *rig {
	t.Helper()
	conf := testConf()
	cl := newFakeCluster()
	if st == nil {
		st = &memStore{kv: map[string][]byte{}}
	}
	if prov == nil {
		prov = &fakeProvider{t: t, running: map[string]bool{}}
	}
	prov.st = st
	p, err := New(func() *config.Config { return conf }, cl, st, map[string]provider.Provider{"p": prov}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{p: p, cl: cl, prov: prov, st: st, now: time.Now()}
	p.clock = func() time.Time { return r.now }
	return r
}

func (r *rig) demand(n int) {
	v := r.p.Version()
	r.p.SetDemand(v, map[string]int{"cpu": n})
}

func TestRequestJoinIdleReturn(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := context.Background()
	r.demand(5) // more than max
	r.p.step(ctx)
	if r.prov.requests != 1 || len(r.prov.running) != 2 {
		t.Fatalf("requests %d, running %v: want one request of two (max)", r.prov.requests, r.prov.running)
	}
	booting, exists := counts(r.p)
	if booting["cpu"] != 2 || exists["cpu"] != 2 {
		t.Errorf("counts %v %v", booting, exists)
	}
	// A demand computed before the request is not acted on again.
	r.p.SetDemand(0, map[string]int{"cpu": 2})
	r.p.step(ctx)
	if r.prov.requests != 1 {
		t.Errorf("a stale demand was acted on")
	}
	if why := r.p.WaitReason("cpu", testConf()); !strings.HasPrefix(why, "Waiting for 2 hosts of template cpu (requested ") || !strings.HasSuffix(why, ", provider p)") {
		t.Errorf("reason %q", why)
	}
	for id := range r.prov.running {
		r.cl.joined[id] = true
	}
	r.cl.running["cpu-2"] = 1
	r.p.step(ctx)
	v := r.p.View()
	if v.Templates[0].Allocated != 2 || v.Templates[0].Booting != 0 {
		t.Fatalf("view %v", v.Templates[0])
	}
	// Idle past idle_time: the idle one goes, the busy one stays.
	r.now = r.now.Add(61 * time.Second)
	r.p.step(ctx)
	if len(r.prov.returned) != 1 || r.prov.returned[0] != "cpu-3" {
		t.Fatalf("returned %v, want cpu-3 (idle)", r.prov.returned)
	}
	if r.st.count("rc/inst/") != 1 || len(r.cl.forgot) != 1 {
		t.Errorf("records %d forgot %v", r.st.count("rc/inst/"), r.cl.forgot)
	}
	// Past max_ttl the busy one goes once empty.
	r.now = r.now.Add(2 * time.Hour)
	r.p.step(ctx)
	if len(r.prov.returned) != 1 {
		t.Fatalf("a busy host was returned")
	}
	r.cl.running["cpu-2"] = 0
	r.p.step(ctx)
	if len(r.prov.returned) != 2 || r.st.count("rc/") != 1 { // rc/seq stays
		t.Errorf("returned %v, records %v", r.prov.returned, slices.Collect(maps.Keys(r.st.kv)))
	}
}

func TestBootTimeoutAndBackoff(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := context.Background()
	r.demand(1)
	r.p.step(ctx)
	r.now = r.now.Add(121 * time.Second)
	r.p.step(ctx)
	if len(r.prov.returned) != 1 {
		t.Fatalf("an instance that did not join was not returned: %v", r.prov.returned)
	}
	v := r.p.View()
	if len(v.Errors) != 1 || !strings.Contains(v.Errors[0].Message, "did not join within boot_timeout 2m") || v.Templates[0].BackoffUntil == 0 {
		t.Fatalf("errors %v backoff %d", v.Errors, v.Templates[0].BackoffUntil)
	}
	// Backed off: the same demand asks nothing.
	r.demand(1)
	r.p.step(ctx)
	if r.prov.requests != 1 {
		t.Errorf("asked again during the backoff")
	}
	if why := r.p.WaitReason("cpu", testConf()); !strings.Contains(why, "its last request failed") {
		t.Errorf("reason %q", why)
	}
}

func TestProviderFails(t *testing.T) {
	r := newRig(t, nil, &fakeProvider{t: t, running: map[string]bool{}, failWith: errors.New("quota exceeded")})
	ctx := context.Background()
	r.demand(2)
	r.p.step(ctx)
	v := r.p.View()
	if len(v.Errors) != 1 || !strings.Contains(v.Errors[0].Message, "quota exceeded") {
		t.Errorf("errors %v", v.Errors)
	}
	if len(v.Instances) != 0 || r.st.count("rc/inst/") != 0 {
		t.Errorf("instances of a failed request left: %v", v.Instances)
	}
}

// A restart: the instance the provider never started (the provisioner
// stopped between recording it and asking) is dropped; the one that runs
// is followed; nothing is asked for twice.
func TestRestartReconciles(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := context.Background()
	r.demand(2)
	r.p.step(ctx)
	// As if the provider had started only one of them.
	delete(r.prov.running, "cpu-3")
	r2 := newRig(t, r.st, r.prov)
	r2.p.reconcile(ctx)
	if got := r2.p.View().Instances; len(got) != 1 || got[0].Id != "cpu-2" {
		t.Fatalf("after restart: %v", got)
	}
	booting, _ := counts(r2.p)
	if booting["cpu"] != 1 || r.prov.requests != 1 {
		t.Errorf("booting %v requests %d", booting, r.prov.requests)
	}
	// New names never reuse an old one.
	r2.demand(1)
	r2.p.step(ctx)
	if !r.prov.running["cpu-5"] {
		t.Errorf("running %v, want cpu-5 (the sequence survives the restart)", r.prov.running)
	}
}

// A provider script that fails and one that hangs: the error is in the
// view (badmin rc error), the waiting jobs' reason says the request
// failed, and the hanging call ends at the call timeout.
func TestScriptProviderFailsAndHangs(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"fails", "echo 'no capacity in zone' >&2; exit 1", "no capacity in zone"},
		{"hangs", "sleep 30 & wait", "did not answer in time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, n := range []string{"requestMachines.sh", "requestReturnMachines.sh", "getRequestStatus.sh"} {
				if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"+tc.body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			conf := testConf()
			st := &memStore{kv: map[string][]byte{}}
			p, err := New(func() *config.Config { return conf }, newFakeCluster(), st,
				map[string]provider.Provider{"p": &script.Script{Dir: dir}}, Options{CallTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			v := p.Version()
			p.SetDemand(v, map[string]int{"cpu": 1})
			p.step(context.Background())
			view := p.View()
			if len(view.Errors) == 0 || !strings.Contains(view.Errors[0].Message, tc.want) {
				t.Errorf("errors %v, want %q", view.Errors, tc.want)
			}
			if why := p.WaitReason("cpu", conf); !strings.Contains(why, "its last request failed") || !strings.Contains(why, tc.want) {
				t.Errorf("reason %q", why)
			}
		})
	}
}

// counts are, per template, the provisioner's instances requested or
// booting and those that exist.
func counts(p *Provisioner) (booting, exists map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	booting, exists = map[string]int{}, map[string]int{}
	for _, in := range p.insts {
		exists[in.Template]++
		if in.RcStatus == StatusStarted {
			booting[in.Template]++
		}
	}
	return booting, exists
}
