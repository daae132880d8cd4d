package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"xce/lib/api"
)

// WriteClusterID writes lsid: the product banner (given, as the commands'
// -V prints it), a blank line, then the cluster and the master host.
func WriteClusterID(w io.Writer, banner string, info *api.ClusterInfo) error {
	var b bytes.Buffer
	b.WriteString(banner)
	if !strings.HasSuffix(banner, "\n") {
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "My cluster name is %s\n", info.GetClusterName())
	fmt.Fprintf(&b, "My master name is %s\n", info.GetMasterHost())
	if cs := info.GetCandidates(); len(cs) > 0 {
		// After LSF's two lines, for a highly available controller.
		b.WriteString("My master candidates are")
		for i, c := range cs {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %s (%s)", c.GetAddress(), c.GetState())
		}
		b.WriteByte('\n')
	}
	return flush(w, &b)
}

// WriteLSHosts writes lshosts (OpenLava's "%-11.11s %7.7s %8.8s %5.1f %5d
// %5dM %5dM %6.6s (res ...)" under the header "HOST_NAME type model cpuf
// ncpus maxmem maxswp server RESOURCES"). With wide (-w) the name, type and
// model are not cut and take 25, 10 and 11 columns. Values XCE does not know
// (no type, a zero CPU factor, CPU count or memory) print "-"; every XCE
// host is a batch server ("Yes"); RESOURCES are the host's boolean
// resources in parentheses.
func WriteLSHosts(w io.Writer, hosts []*api.Host, wide bool) error {
	var b bytes.Buffer
	nameW, typeW, modelW := 11, 7, 8
	name, left := fixed, func(s string, n int) string { return padLeft(cut(s, n), n) }
	if wide {
		nameW, typeW, modelW = 25, 10, 11
		name, left = padRight, padLeft
	}
	fmt.Fprintf(&b, "%s %s %s %5s %5s %6s %6s %6s %9s\n",
		padRight("HOST_NAME", nameW), padLeft("type", typeW), padLeft("model", modelW),
		"cpuf", "ncpus", "maxmem", "maxswp", "server", "RESOURCES")
	for _, h := range hosts {
		cpuf := "-"
		if f := h.GetCpuFactor(); f > 0 {
			cpuf = fmt.Sprintf("%.1f", f)
		}
		ncpus := "-"
		if n := h.GetNcpus(); n > 0 {
			ncpus = strconv.Itoa(int(n))
		}
		fmt.Fprintf(&b, "%s %s %s %5s %5s %6s %6s %6s (%s)\n",
			name(h.GetName(), nameW), left(dashIfEmpty(h.GetType()), typeW), left(dashIfEmpty(h.GetModel()), modelW),
			cpuf, ncpus, lsMem(h.GetMaxmemKb()), lsMem(h.GetMaxswpKb()), "Yes",
			strings.Join(h.GetResources(), " "))
	}
	return flush(w, &b)
}

// lsLoadIndex is one column of lsload: its header, width and value.
type lsLoadIndex struct {
	name  string
	width int
	value func(h *api.Host) string
}

// lsLoadIndices are lsload's built-in load indices in LSF's order, with
// OpenLava's widths.
var lsLoadIndices = []lsLoadIndex{
	{"r15s", 6, func(h *api.Host) string { return fmt.Sprintf("%.1f", h.GetR15S()) }},
	{"r1m", 6, func(h *api.Host) string { return fmt.Sprintf("%.1f", h.GetR1M()) }},
	{"r15m", 6, func(h *api.Host) string { return fmt.Sprintf("%.1f", h.GetR15M()) }},
	{"ut", 5, func(h *api.Host) string { return fmt.Sprintf("%.0f%%", h.GetUt()*100) }},
	{"pg", 6, func(h *api.Host) string { return optional(h.Pg, "%.1f") }},
	{"io", 6, func(h *api.Host) string { return optional(h.Io, "%.0f") }},
	{"ls", 4, func(h *api.Host) string {
		if h.Ls == nil {
			return "-"
		}
		return fmt.Sprint(*h.Ls)
	}},
	{"it", 6, func(h *api.Host) string { return optional(h.It, "%.0f") }},
	{"tmp", 6, func(h *api.Host) string { return measuredMem(h, h.GetTmpKb()) }},
	{"swp", 6, func(h *api.Host) string { return measuredMem(h, h.GetSwpKb()) }},
	{"mem", 6, func(h *api.Host) string { return measuredMem(h, h.GetMemKb()) }},
}

// optional formats a load index the host may not measure; "-" when it
// does not.
func optional(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// measuredMem is tmp, swp or mem: "0M" when the host measured nothing
// free (a host without swap), "-" when it did not measure.
func measuredMem(h *api.Host, kb int64) string {
	if kb <= 0 && h.GetLoadMeasured() {
		return "0M"
	}
	return loadMem(kb)
}

// lsLoadDefault is what lsload shows without -l or -I: every built-in
// index but io.
var lsLoadDefault = []string{"r15s", "r1m", "r15m", "ut", "pg", "ls", "it", "tmp", "swp", "mem"}

// loadAliases are the other names of load indices (resreq.md 2.1).
var loadAliases = map[string]string{"swap": "swp", "idle": "it", "login": "ls", "cpu": "r1m"}

// LoadOptions selects the variant of lsload.
type LoadOptions struct {
	Wide bool // -w: HOST_NAME in 25 columns, not cut
	Long bool // -l: HOST_NAME in 23 columns, not cut; every index, io included
	// Indices (-I) are the indices to show, in that order; nil for the
	// default set (every index with Long).
	Indices []string
}

// ParseLoadIndices reads lsload -I's index list, "r15s:r1m:mem": the
// names of built-in load indices (or their aliases swap, idle, login,
// cpu) separated by ":". An unknown name gives LSF's "Bad index name
// list", with the name and the indices there are.
func ParseLoadIndices(list string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(list, ":") {
		name := n
		if a, ok := loadAliases[name]; ok {
			name = a
		}
		if !slices.ContainsFunc(lsLoadIndices, func(ix lsLoadIndex) bool { return ix.name == name }) {
			var all []string
			for _, ix := range lsLoadIndices {
				all = append(all, ix.name)
			}
			return nil, fmt.Errorf("%s: Bad index name list (the load indices are %s)", n, strings.Join(all, " "))
		}
		out = append(out, name)
	}
	return out, nil
}

// WriteLSLoad writes lsload: HOST_NAME in 15 columns (cut; with -w, 25
// and with -l, 23, not cut), status in 6, then the load indices (r15s r1m
// r15m ut pg ls it tmp swp mem; -l adds io after pg; -I chooses), each
// right-aligned under its header. XCE's hosts report no paging rate, disk
// I/O, login sessions or idle time: those print "-". tmp, swp and mem are
// the available amounts, in whole Mbytes below 1 Gbyte, else in Gbytes
// (one decimal below 10G). An unavailable host shows its name and status
// only, as LSF does when LIM has no load for it.
func WriteLSLoad(w io.Writer, hosts []*api.Host, opt LoadOptions) error {
	var b bytes.Buffer
	nameW, name := 15, fixed
	switch {
	case opt.Long:
		nameW, name = 23, padRight
	case opt.Wide:
		nameW, name = 25, padRight
	}
	names := opt.Indices
	if names == nil && opt.Long {
		for _, ix := range lsLoadIndices {
			names = append(names, ix.name)
		}
	} else if names == nil {
		names = lsLoadDefault
	}
	var indices []lsLoadIndex
	for _, n := range names {
		for _, ix := range lsLoadIndices {
			if ix.name == n {
				indices = append(indices, ix)
			}
		}
	}
	if opt.Long && opt.Indices == nil {
		indices = append(indices, elimIndices(hosts)...)
	}
	b.WriteString(padRight("HOST_NAME", nameW) + " " + padLeft("status", 6))
	for _, ix := range indices {
		b.WriteString(padLeft(ix.name, ix.width))
	}
	b.WriteByte('\n')
	for _, h := range hosts {
		status := LoadStatus(h)
		b.WriteString(name(h.GetName(), nameW) + " " + padLeft(status, 6))
		if status != "unavail" {
			for _, ix := range indices {
				b.WriteString(padLeft(ix.value(h), ix.width))
			}
		}
		b.WriteByte('\n')
	}
	return flush(w, &b)
}

// LoadStatus is a host's lsload status: ok; lockU for a host closed by an
// exclusive job, lockW for one closed by its run window; unavail for a host
// the controller has no contact with (unavail or unreach in bhosts). Other
// batch closures (an administrator, a full host) leave the load status ok,
// as in LSF where they are not LIM's business.
func LoadStatus(h *api.Host) string {
	switch h.GetState() {
	case api.HostState_HOST_OK:
		return "ok"
	case api.HostState_HOST_CLOSED:
		switch h.GetStatusDetail() {
		case "closed_Excl":
			return "lockU"
		case "closed_Wind":
			return "lockW"
		}
		return "ok"
	case api.HostState_HOST_UNAVAIL, api.HostState_HOST_UNREACH:
		return "unavail"
	}
	return "-"
}

// lsMem is lshosts' maxmem and maxswp: whole Mbytes ("64000M") below 100000
// Mbytes (what "%5dM" holds), else Gbytes with one decimal ("255.8G") or Tbytes; "-" for none.
func lsMem(kb int64) string {
	if kb <= 0 {
		return "-"
	}
	mb := float64(kb) / 1024
	switch {
	case mb < 100000:
		return fmt.Sprintf("%dM", kb/1024)
	case mb < 1000*1024:
		return fmt.Sprintf("%.1fG", mb/1024)
	}
	return fmt.Sprintf("%.1fT", mb/1024/1024)
}

// loadMem is an available amount as lsload prints it: "900M", "3.5G",
// "43G", "1.2T"; "-" for none reported.
func loadMem(kb int64) string {
	if kb <= 0 {
		return "-"
	}
	mb := float64(kb) / 1024
	gb := mb / 1024
	switch {
	case gb < 1:
		return fmt.Sprintf("%dM", kb/1024)
	case gb < 10:
		return fmt.Sprintf("%.1fG", gb)
	case gb < 1024:
		return fmt.Sprintf("%.0fG", gb)
	}
	return fmt.Sprintf("%.1fT", gb/1024)
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteLSHostsLong writes lshosts -l (OpenLava's print_long, with LSF
// 10.1's nprocs ncores nthreads columns): for each host a blank line,
// "HOST_NAME:  name", the table "type model cpuf ncpus ndisks maxmem
// maxswp maxtmp rexpri server nprocs ncores nthreads" and its row, a blank
// line, "RESOURCES: (attributes)" or "RESOURCES: Not defined",
// "RUN_WINDOWS:  (always open)", a blank line and LOAD_THRESHOLDS (XCE
// has none: "-"). Values XCE does not know print "-": ndisks always.
func WriteLSHostsLong(w io.Writer, hosts []*api.Host) error {
	var b bytes.Buffer
	for _, h := range hosts {
		b.WriteString("\nHOST_NAME:  " + h.GetName() + "\n")
		fmt.Fprintf(&b, "%-10.10s %11.11s %5.5s %5.5s %6.6s %6.6s %6.6s %6.6s %6.6s %6.6s %6s %6s %8s\n",
			"type", "model", "cpuf", "ncpus", "ndisks", "maxmem", "maxswp", "maxtmp", "rexpri", "server",
			"nprocs", "ncores", "nthreads")
		cpuf := "-"
		if f := h.GetCpuFactor(); f > 0 {
			cpuf = fmt.Sprintf("%.1f", f)
		}
		fmt.Fprintf(&b, "%-10s %11s %5s %5s %6s %6s %6s %6s %6d %6s %6s %6s %8s\n",
			cut(dashIfEmpty(h.GetType()), 10), cut(dashIfEmpty(h.GetModel()), 11), cpuf, dashIfZero(h.GetNcpus()),
			"-", lsMem(h.GetMaxmemKb()), lsMem(h.GetMaxswpKb()), lsMem(h.GetMaxtmpKb()), 0, "Yes",
			dashIfZero(h.GetNprocs()), dashIfZero(h.GetNcores()), dashIfZero(h.GetNthreads()))
		b.WriteString("\nRESOURCES: ")
		if r := h.GetResources(); len(r) > 0 {
			b.WriteString("(" + strings.Join(r, " ") + ")\n")
		} else {
			b.WriteString("Not defined\n")
		}
		b.WriteString("RUN_WINDOWS:  (always open)\n\nLOAD_THRESHOLDS:\n")
		widths := []int{6, 6, 6, 5, 6, 6, 5, 5, 6, 6, 6}
		var head, vals strings.Builder
		for i, ix := range lsLoadIndices {
			head.WriteString(padLeft(ix.name, widths[i]))
			vals.WriteString(padLeft("-", widths[i]))
		}
		b.WriteString(head.String() + "\n" + vals.String() + "\n")
	}
	return flush(w, &b)
}

// WriteSharedValues writes lshosts -s and lsload -s: RESOURCE VALUE
// LOCATION (OpenLava's "%-25s%20s%15s"), one line per shared resource,
// with the value value gives; LOCATION lists the hosts sharing it, each
// followed by a space, wrapped at 80 columns. With no resource, none
// (lshosts: "No static shared resources defined.", lsload: "No dynamic
// shared resources defined.") is printed instead.
func WriteSharedValues(w io.Writer, shared []*api.SharedResource, value func(*api.SharedResource) float64, none string) error {
	return WriteResourceValues(w, shared, value, nil, none)
}

// WriteResourceValues is WriteSharedValues followed by rows of the
// resources hosts report (ReportedRows), in the same columns.
func WriteResourceValues(w io.Writer, shared []*api.SharedResource, value func(*api.SharedResource) float64, rows []ValueRow, none string) error {
	var b bytes.Buffer
	if len(shared) == 0 && len(rows) == 0 {
		b.WriteString(none + "\n")
		return flush(w, &b)
	}
	fmt.Fprintf(&b, "%-25s%20s%15s\n", "RESOURCE", "VALUE", "LOCATION")
	for _, s := range shared {
		fmt.Fprintf(&b, "%-25s%20s       ", s.GetName(), trimZero(strconv.FormatFloat(value(s), 'f', 1, 64)))
		writeLocation(&b, s.GetHosts(), 52)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%-25s%20s       ", r.Name, r.Value)
		writeLocation(&b, r.Hosts, 52)
	}
	return flush(w, &b)
}
