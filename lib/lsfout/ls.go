package lsfout

import (
	"bytes"
	"fmt"
	"io"
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

var lsLoadIndices = []lsLoadIndex{
	{"r15s", 6, func(h *api.Host) string { return fmt.Sprintf("%.1f", h.GetR15S()) }},
	{"r1m", 6, func(h *api.Host) string { return fmt.Sprintf("%.1f", h.GetR1M()) }},
	{"r15m", 6, func(h *api.Host) string { return fmt.Sprintf("%.1f", h.GetR15M()) }},
	{"ut", 5, func(h *api.Host) string { return fmt.Sprintf("%.0f%%", h.GetUt()*100) }},
	{"pg", 6, func(*api.Host) string { return "-" }},
	{"ls", 4, func(*api.Host) string { return "-" }},
	{"it", 6, func(*api.Host) string { return "-" }},
	{"tmp", 6, func(h *api.Host) string { return loadMem(h.GetTmpKb()) }},
	{"swp", 6, func(h *api.Host) string { return loadMem(h.GetSwpKb()) }},
	{"mem", 6, func(h *api.Host) string { return loadMem(h.GetMemKb()) }},
}

// WriteLSLoad writes lsload: HOST_NAME in 15 columns (cut; with wide, -w, 25
// and not cut), status in 6, then the load indices r15s r1m r15m ut pg ls
// it tmp swp mem, each right-aligned under its header. XCE's hosts report
// no paging rate, login sessions or idle time: those print "-". tmp, swp and
// mem are the available amounts, in whole Mbytes below 1 Gbyte, else in
// Gbytes (one decimal below 10G). An unavailable host shows its name and
// status only, as LSF does when LIM has no load for it.
func WriteLSLoad(w io.Writer, hosts []*api.Host, wide bool) error {
	var b bytes.Buffer
	nameW, name := 15, fixed
	if wide {
		nameW, name = 25, padRight
	}
	b.WriteString(padRight("HOST_NAME", nameW) + " " + padLeft("status", 6))
	for _, ix := range lsLoadIndices {
		b.WriteString(padLeft(ix.name, ix.width))
	}
	b.WriteByte('\n')
	for _, h := range hosts {
		status := LoadStatus(h)
		b.WriteString(name(h.GetName(), nameW) + " " + padLeft(status, 6))
		if status != "unavail" {
			for _, ix := range lsLoadIndices {
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
