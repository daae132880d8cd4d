package provision

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"xce/lib/config"
	"xce/lib/provider"
)

// reqProvider names each request on its own and records Status's calls.
type reqProvider struct {
	*fakeProvider
	n     int
	polls []string // "REQ:ID,ID"
}

func (f *reqProvider) Request(ctx context.Context, t *config.Template, insts []provider.Instance) (string, error) {
	if _, err := f.fakeProvider.Request(ctx, t, insts); err != nil {
		return "", err
	}
	f.n++
	return fmt.Sprintf("r%d", f.n), nil
}

func (f *reqProvider) Status(ctx context.Context, req string, insts []provider.Instance) ([]provider.Machine, error) {
	var ids []string
	for _, in := range insts {
		ids = append(ids, in.ID)
	}
	f.polls = append(f.polls, req+":"+strings.Join(ids, ","))
	return f.fakeProvider.Status(ctx, req, insts)
}

// Booting instances are polled per provider request, each request with
// its own instances (not all under the last request's id).
func TestPollPerRequest(t *testing.T) {
	st := &memStore{kv: map[string][]byte{}}
	fp := &fakeProvider{t: t, st: st, running: map[string]bool{}}
	rp := &reqProvider{fakeProvider: fp}
	conf := testConf()
	p, err := New(func() *config.Config { return conf }, newFakeCluster(), st, map[string]provider.Provider{"p": rp}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 {
		p.SetDemand(p.Version(), map[string]int{"cpu": 1})
		p.step(ctx)
	}
	rp.polls = nil
	p.pollProviders(ctx)
	want := []string{"r1:cpu-2", "r2:cpu-4"}
	if !slices.Equal(rp.polls, want) {
		t.Errorf("polls %v, want %v", rp.polls, want)
	}
}
