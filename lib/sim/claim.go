package sim

import (
	"bytes"
	"fmt"
	"os"
	"slices"

	"github.com/pelletier/go-toml/v2"

	"xce/lib/resreq"
	"xce/lib/sched"
)

// Standalone claims in a replay (Options.Claims): every cycle's snapshot
// has them, as the controller's has, so a pending claim is allocated by
// the first cycle that runs (lib/sched/claim.go) and a held one keeps
// what it holds from every job of the trace. No trace format can say
// that a job uses a claim (bsub -claim is in none of SWF, lsb.acct or
// XCE's accounting log), nor when a claim is created, deleted or ends:
// the claims are there from the trace's start to its end, and the
// trace's jobs only run around them.

// snapClaims gives the snapshot the claims, copied from Options the
// first time (the run then records their allocations in the copy).
func (e *eng) snapClaims() {
	if e.snap.Claims == nil && len(e.opt.Claims) > 0 {
		e.snap.Claims = slices.Clone(e.opt.Claims)
	}
}

// applyClaims records the claims a cycle allocated.
func (e *eng) applyClaims(d *sched.Decision) {
	for _, cp := range d.Claims {
		for i := range e.snap.Claims {
			if cl := &e.snap.Claims[i]; cl.Name == cp.Name && cl.Held == nil {
				h := cp.Held
				cl.Held = &h
			}
		}
	}
}

// HeldClaims is where the run's claims were allocated, by name (a claim
// that never was is missing).
func (r *Result) HeldClaims() map[string]sched.HostAlloc {
	out := map[string]sched.HostAlloc{}
	for _, cl := range r.claims {
		if cl.Held != nil {
			out[cl.Name] = *cl.Held
		}
	}
	return out
}

// A claims file (xced simulate --claims) lists standalone claims as
// bclaim create would make them, held over the whole replay:
//
//	[[claim]]
//	name = "box"                 # required
//	rusage = "rusage[fpga=1]"    # -R (required)
//	hosts = ["h001"]             # -m: candidates; default every host
//
// Its users, -x and end time are left out: the trace's jobs use no claim.

// ClaimRequest is one claim of a claims file.
type ClaimRequest struct {
	Name   string   `toml:"name"`
	Rusage string   `toml:"rusage"`
	Hosts  []string `toml:"hosts"`
}

type claimFile struct {
	Claim []ClaimRequest `toml:"claim"`
}

// ReadClaims reads a claims file (the requirements are parsed by Run,
// against the run's resources).
func ReadClaims(path string) ([]ClaimRequest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f claimFile
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w (a claim has name, rusage, hosts)", path, err)
	}
	seen := map[string]bool{}
	for i, c := range f.Claim {
		switch {
		case c.Name == "" || c.Rusage == "":
			return nil, fmt.Errorf("%s: claim %d: name and rusage are required", path, i+1)
		case seen[c.Name]:
			return nil, fmt.Errorf("%s: claim %d: %s is named twice", path, i+1, c.Name)
		}
		seen[c.Name] = true
	}
	return f.Claim, nil
}

// claimRequests adds Options.ClaimRequests to the claims, their
// requirements parsed against the run's resources.
func (e *eng) claimRequests() error {
	for _, cr := range e.opt.ClaimRequests {
		r, err := resreq.Parse(cr.Rusage, resreq.WithSchema(e.conf.Schema()))
		if err != nil {
			return fmt.Errorf("claim %s: %w", cr.Name, err)
		}
		if r.Simple == nil || r.Simple.Rusage == nil || len(r.Simple.Rusage.Or) != 1 {
			return fmt.Errorf("claim %s: %q is not one rusage[] set", cr.Name, cr.Rusage)
		}
		e.opt.Claims = append(slices.Clip(e.opt.Claims), sched.Claim{Name: cr.Name, Rusage: r.Simple.Rusage.Or[0], Hosts: cr.Hosts})
	}
	return nil
}
