package config

import (
	"maps"
	"path/filepath"
	"slices"
)

// Elims are the cluster's parameters of reported resources (LSF's
// ELIMs, lib/elim).
type Elims struct {
	// ElimDir (LSF_SERVERDIR's role for elims): the directory whose
	// executables named elim.* each worker runs as root, reading the
	// values of [resources] they report; only when root owns the
	// directory and the elim and neither group nor others may write
	// them. [hosts.NAME] elim_dir overrides it per host; "" runs none.
	ElimDir string `toml:"elim_dir"`
	// ElimStaleAfter: a reported value not reported again for this long
	// is dropped (lsload shows "-", select[] finds no value); default
	// 60s.
	ElimStaleAfter Duration `toml:"elim_stale_after"`
}

// DefaultElimStaleAfter is elim_stale_after's default, in seconds.
const DefaultElimStaleAfter = 60

// ElimDir is the elim directory of a host: its own elim_dir, else the
// cluster's.
func (c *Config) ElimDir(host string) string {
	if h := c.Hosts[host]; h != nil && h.ElimDir != "" {
		return h.ElimDir
	}
	return c.Cluster.ElimDir
}

// ElimResources are the resources an elim may report: the per-host
// ones of [resources] (not shared pools).
func (c *Config) ElimResources() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.Resources)) {
		if !c.Resources[name].Shared() {
			out = append(out, name)
		}
	}
	return out
}

// checkElims fills in elim_stale_after's default and checks the
// directories are absolute.
func (c *Config) checkElims(k *checker) {
	c.checkInstances(k)
	cl := &c.Cluster
	if cl.ElimStaleAfter == 0 {
		cl.ElimStaleAfter = DefaultElimStaleAfter
	}
	if cl.ElimStaleAfter < 0 {
		k.add("cluster.elim_stale_after", "%s: must be positive", cl.ElimStaleAfter)
	}
	if cl.ElimDir != "" && !filepath.IsAbs(cl.ElimDir) {
		k.add("cluster.elim_dir", "%s: must be an absolute path", cl.ElimDir)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Hosts)) {
		if d := c.Hosts[name].ElimDir; d != "" && !filepath.IsAbs(d) {
			k.add("hosts."+name+".elim_dir", "%s: must be an absolute path", d)
		}
	}
}
