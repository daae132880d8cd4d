package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"xce/lib/config"
	"xce/lib/controller"
	"xce/lib/provider"
	"xce/lib/provider/local"
	"xce/lib/provider/script"
	"xce/lib/provision"
	"xce/lib/store"
)

// startProvisioner runs the provisioner in-process when the configuration
// has providers: the controller's hosts on demand. Its local provider's
// workers dial the controller's --listen address with the cluster token
// of dir. It returns the function that stops it.
func startProvisioner(cfg *config.Config, ctl *controller.Controller, st *store.Store, dir, self, listen string) (func(), error) {
	if len(cfg.Providers) == 0 {
		return func() {}, nil
	}
	provs := map[string]provider.Provider{}
	for name, pc := range cfg.Providers {
		switch pc.Kind {
		case "local":
			if listen == "" {
				return nil, fmt.Errorf("provider %s (kind = \"local\") starts workers that dial the controller: start xced with --listen", name)
			}
			provs[name] = &local.Local{Exe: self, Dir: filepath.Join(dir, "rc"), Controller: dialable(listen),
				TokenFile: filepath.Join(dir, "cluster.token")}
		case "script":
			provs[name] = &script.Script{Dir: pc.ScriptDir, Timeout: time.Duration(pc.Timeout) * time.Second}
		default:
			return nil, fmt.Errorf("provider %s: unknown kind %q", name, pc.Kind)
		}
	}
	p, err := provision.New(ctl.ClusterConfig, ctl, st, provs, provision.Options{})
	if err != nil {
		return nil, err
	}
	ctl.SetSupply(p)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	return func() { cancel(); <-done }, nil
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
