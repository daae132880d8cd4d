package lsfout

import (
	"maps"
	"slices"

	"xce/lib/api"
)

// elimIndices are lsload -l's columns of reported resources (LSF's
// external load indices), after the built-in ones: every resource one of
// the hosts reports, by name, each as wide as its name or its widest
// value and a space; a host that does not report it, or whose value went
// stale (an empty value), shows "-".
func elimIndices(hosts []*api.Host) []lsLoadIndex {
	widths := map[string]int{}
	for _, h := range hosts {
		for name, v := range h.GetElimValues() {
			widths[name] = max(widths[name], len(name)+1, len(v)+1, 6)
		}
	}
	var out []lsLoadIndex
	for _, name := range slices.Sorted(maps.Keys(widths)) {
		out = append(out, lsLoadIndex{name, widths[name], func(h *api.Host) string {
			if v := h.GetElimValues()[name]; v != "" {
				return v
			}
			return "-"
		}})
	}
	return out
}
