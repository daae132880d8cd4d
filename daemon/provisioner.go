package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"xce/lib/api/rpc"
	"xce/lib/config"
	"xce/lib/controller"
	"xce/lib/provider"
	"xce/lib/provider/local"
	"xce/lib/provider/script"
	"xce/lib/provision"
	"xce/lib/store"
)

// startProvisioner gives the controller its provisioners' ledger (the
// records, the demand and the providers' leases) when the configuration
// has providers, and runs the controller's own provisioner: it takes each
// provider's lease like any provisioner and lets a provisioner daemon
// (`xced provisioner`) have those it asks for, so the two never both own
// one. Its local provider's workers dial addrs (the controller's
// --listen, or every candidate's) with the cluster token of dir. owner
// names it: stable across restarts of this controller, so that one
// started again keeps its leases. It returns the function that stops it.
func startProvisioner(cfg *config.Config, ctl *controller.Controller, st *store.Store, dir, self, addrs, owner string) (func(), error) {
	if len(cfg.Providers) == 0 {
		return func() {}, nil
	}
	for name, pc := range cfg.Providers {
		if pc.Kind == "local" && addrs == "" {
			return nil, fmt.Errorf("provider %s (kind = \"local\") starts workers that dial the controller: start xced with --listen", name)
		}
	}
	ledger, err := provision.NewLedger(ctl.ClusterConfig, st, ctl.Kick, 0)
	if err != nil {
		return nil, err
	}
	ctl.SetSupply(ledger)
	ledger.SetUsage(ctl.SharedUsed)
	ledger.SetReturnCheck(ctl.WithSharedUsed)
	ag := provision.NewAgent(provision.AgentConfig{
		Owner: owner,
		Link:  &localLink{Ledger: ledger, ctl: ctl},
		Yield: true,
		Conf:  ctl.ClusterConfig,
		Provider: func(pc *config.Provider) (provider.Provider, error) {
			return newProvider(pc, self, filepath.Join(dir, "rc"), addrs, filepath.Join(dir, "cluster.token"))
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ag.Run(ctx); close(done) }()
	return func() { cancel(); <-done }, nil
}

// newProvider makes a configured provider. A local one's instances are
// `xced worker` processes (exe) under dir, dialing controllers with the
// cluster token in tokenFile.
func newProvider(pc *config.Provider, exe, dir, controllers, tokenFile string) (provider.Provider, error) {
	switch pc.Kind {
	case "local":
		return &local.Local{Exe: exe, Dir: dir, Controller: controllers, TokenFile: tokenFile}, nil
	case "script":
		return &script.Script{Dir: pc.ScriptDir, Timeout: time.Duration(pc.Timeout) * time.Second}, nil
	}
	return nil, fmt.Errorf("provider %s: unknown kind %q", pc.Name, pc.Kind)
}

// localLink is the controller's own provisioner's way to the ledger and
// the hosts: direct calls.
type localLink struct {
	*provision.Ledger
	ctl *controller.Controller
}

func (l *localLink) Host(ctx context.Context, req *rpc.ProvisionerHostRequest) (*rpc.ProvisionerHostReply, error) {
	return l.ctl.ProvisionerHost(ctx, req)
}

// workerAddrs is what the local provider's workers dial: every
// candidate, or this controller's --listen made dialable.
func workerAddrs(cfg *config.Config, listen string) string {
	if len(cfg.Cluster.Controllers) > 0 {
		return strings.Join(cfg.Cluster.Controllers, ",")
	}
	if listen == "" {
		return ""
	}
	return dialable(listen)
}

// dialable is a --listen address a worker on this host can dial: a
// wildcard host becomes the loopback address.
func dialable(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
