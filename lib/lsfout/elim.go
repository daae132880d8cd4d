package lsfout

import (
	"bytes"
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

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

// writeReportedLoad writes bhosts -l's table of the host's reported
// resources (LSF's external load indices, after the built-in ones), in
// the shape of the built-in table: the names after 12 blanks, each
// column one wider than its widest cell; " Total" is what is left for
// scheduling (the reported value less what running jobs reserve of it,
// as the scheduler counts it), " Reserved" what they reserve ("%.1f").
// A string or Boolean value prints as reported with Reserved "-"; a
// stale one "-". Nothing when the host reports none.
func writeReportedLoad(b *bytes.Buffer, h *api.Host) {
	vals := h.GetElimValues()
	if len(vals) == 0 {
		return
	}
	head, total, rsv := strings.Repeat(" ", 12), " Total      ", " Reserved   "
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		t, r := reportedLeft(h, name)
		width := max(runeLen(name), runeLen(t), len(r)) + 1
		head += padLeft(name, width)
		total += padLeft(t, width)
		rsv += padLeft(r, width)
	}
	b.WriteString(head + "\n" + total + "\n" + rsv + "\n\n")
}

// reportedLeft is a reported value as the scheduler counts it (the value
// less what running jobs reserve of a numeric one) and the reserved
// amount ("-" for a value that is not a number, or stale).
func reportedLeft(h *api.Host, name string) (left, reserved string) {
	v := h.GetElimValues()[name]
	if v == "" {
		return "-", "-"
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v, "-"
	}
	r := h.GetReserved()[name]
	return trimZero(strconv.FormatFloat(max(0, x-r), 'f', 1, 64)), oneDecimal(r)
}

// ValueRow is one row of lshosts -s and lsload -s: a resource, its value
// and the hosts that have it.
type ValueRow struct {
	Name, Value string
	Hosts       []string
}

// ReportedRows are the rows of lshosts -s (left false) and lsload -s
// (left true) for the resources hosts report: one per resource and
// value, in name then value order, LOCATION the hosts reporting that
// value, in the order given; lsload -s gives a numeric value less what
// running jobs reserve of it. A stale value is left out. names, when
// given, keeps only those resources.
func ReportedRows(hosts []*api.Host, names []string, left bool) []ValueRow {
	type key struct{ name, value string }
	at := map[key][]string{}
	for _, h := range hosts {
		for name, v := range h.GetElimValues() {
			if v == "" || len(names) > 0 && !slices.Contains(names, name) {
				continue
			}
			if left {
				v, _ = reportedLeft(h, name)
			}
			k := key{name, v}
			at[k] = append(at[k], h.GetName())
		}
	}
	keys := slices.SortedFunc(maps.Keys(at), func(a, b key) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return compareValues(a.value, b.value)
	})
	out := make([]ValueRow, len(keys))
	for i, k := range keys {
		out[i] = ValueRow{k.name, k.value, at[k]}
	}
	return out
}

// compareValues orders numbers by value, before other words.
func compareValues(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(x, y)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}
