// Package provider defines what a source of hosts on demand does for the
// provisioner (lib/provision): start instances of a template under the
// names the provisioner gives them, say how they stand, and take them
// back. The built-in kinds are lib/provider/local (each instance an
// `xced worker` process of this host) and LSF resource connector's
// provider scripts.
//
// The provisioner records every instance before it calls Request and
// before it calls Return, so a provider is asked again about an instance
// after a restart: Status must answer for instances of an earlier run,
// and Return must be safe to repeat.
package provider

import (
	"context"

	"xce/lib/config"
)

// Instance is one host the provisioner asked for.
type Instance struct {
	ID   string // the instance's id
	Host string // the host name its worker registers with
}

// Machine states as Status reports them.
const (
	Unknown    = "unknown"    // the provider never started it (or forgot it)
	Booting    = "booting"    // asked for, not running yet
	Running    = "running"    // running (its worker may not have joined yet)
	Terminated = "terminated" // gone
	Failed     = "failed"     // the provider could not start it
)

// Machine is an instance as the provider sees it.
type Machine struct {
	Instance
	Status string
	// Message is the provider's explanation (for Failed).
	Message string
}

// Provider is one configured provider ([providers.NAME]).
type Provider interface {
	// Request asks for the instances of template t. It returns the
	// provider's id of the request; the instances' progress comes from
	// Status.
	Request(ctx context.Context, t *config.Template, insts []Instance) (string, error)
	// Status reports each of the instances (asked for under the
	// provider's request id req, "" when unknown after a restart).
	Status(ctx context.Context, req string, insts []Instance) ([]Machine, error)
	// Return gives the instances back; it returns once they are gone or
	// the provider has taken the return.
	Return(ctx context.Context, insts []Instance) error
}

// Lender is a provider that also lends units of shared resources (licence
// tokens; [resources.NAME] provider). The provisioner records each loan
// before it calls Borrow and before it calls Giveback, so both must be
// safe to repeat under the same id: a loan the provisioner cannot tell
// was granted (it stopped during the call) is given back, not asked again.
type Lender interface {
	// Borrow asks for n units of resource under the loan id; it returns
	// the units granted (0 to n).
	Borrow(ctx context.Context, resource, id string, n int) (int, error)
	// Giveback returns the loan's n units.
	Giveback(ctx context.Context, resource, id string, n int) error
}
