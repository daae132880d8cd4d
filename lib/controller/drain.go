package controller

import (
	"fmt"
	"strings"
)

// Draining and decommissioning (issue 32). badmin hdrain closes a host to
// new jobs for good: a provisioned host is returned to its provider once
// empty (the provisioner sees Drained), a static one shows closed_Drain
// while jobs run and "drained" once empty. badmin hdecommission makes a
// drained, empty static host leave the cluster: its worker's connection
// ends and its registration is refused from then on, which stops it
// (xced worker ends when the controller refuses it). Both are kept in the
// store (m/drain/NAME, m/decom/NAME) and survive a restart.

// errDecommissioned refuses the worker of a decommissioned host.
type errDecommissioned struct{ name string }

func (e errDecommissioned) Error() string {
	return fmt.Sprintf("host %s was decommissioned (badmin hdecommission): its worker is not taken any more", e.name)
}

// drainControl is badmin hdrain and hdecommission.
func (c *Controller) drainControl(who Caller, names []string, decommission bool) []string {
	admin := c.isAdmin(who.UID)
	c.mu.Lock()
	defer c.mu.Unlock()
	errs := make([]string, len(names))
	for i, name := range names {
		h := c.hosts[name]
		switch {
		case !admin:
			errs[i] = errPermission
			continue
		case h == nil:
			errs[i] = errBadHost
			continue
		}
		if !decommission {
			if err := c.store.SetMeta("drain/"+name, []byte{1}); err != nil {
				errs[i] = "Failed to record the change: " + err.Error()
				continue
			}
			h.drained = true
			c.drainedSet()[name] = true
			continue
		}
		switch {
		case h.instance != "":
			errs[i] = "a provisioned host is returned to its provider by badmin hdrain, not decommissioned"
			continue
		case !h.drained:
			errs[i] = "the host is not drained; run badmin hdrain " + name + " first"
			continue
		case len(c.jobsOn(name)) > 0:
			errs[i] = fmt.Sprintf("the host still runs %d job(s); it can leave once they end", len(c.jobsOn(name)))
			continue
		case h.local:
			errs[i] = "the controller's own host cannot be decommissioned"
			continue
		}
		if err := c.store.SetMetas(map[string][]byte{"decom/" + name: {1}, "drain/" + name: nil}); err != nil {
			errs[i] = "Failed to record the change: " + err.Error()
			continue
		}
		if c.decommissioned == nil {
			c.decommissioned = map[string]bool{}
		}
		c.decommissioned[name] = true
		delete(c.drainedSet(), name)
		if h.conn != nil {
			h.conn.close("the host was decommissioned")
		}
		c.dropHost(name)
	}
	c.Kick()
	return errs
}

func (c *Controller) drainedSet() map[string]bool {
	if c.drainedHosts == nil {
		c.drainedHosts = map[string]bool{}
	}
	return c.drainedHosts
}

// restoreDrains reads the drained and decommissioned hosts from the store.
func (c *Controller) restoreDrains() error {
	for prefix, set := range map[string]*map[string]bool{"drain/": &c.drainedHosts, "decom/": &c.decommissioned} {
		kv, err := c.store.Meta(prefix)
		if err != nil {
			return err
		}
		*set = map[string]bool{}
		for k := range kv {
			(*set)[strings.TrimPrefix(k, prefix)] = true
		}
	}
	for name := range c.drainedHosts {
		if h := c.hosts[name]; h != nil {
			h.drained = true
		}
	}
	// A decommissioned host the configuration still names is not listed.
	for name := range c.decommissioned {
		if h := c.hosts[name]; h != nil && !h.local && len(c.jobsOn(name)) == 0 {
			c.dropHost(name)
		}
	}
	return nil
}

// drainStatus is a drained static host's status detail: closed_Drain
// while jobs run, drained once empty.
func drainStatus(h *host) string {
	if h.used > 0 {
		return "closed_Drain"
	}
	return "drained"
}
