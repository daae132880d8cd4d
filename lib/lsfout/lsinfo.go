package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"xce/lib/api"
)

// LSResource is one line of lsinfo's resource table.
type LSResource struct {
	Name, Kind, Order, Description string
	Builtin, Dynamic               bool
	Interval                       int // update period in seconds; 0 for a static value
}

// lsBuiltins are the built-in resources XCE has, in lsinfo's order, with
// LSF's descriptions; the first eleven are the dynamic load indices.
var lsBuiltins = []LSResource{
	{Name: "r15s", Kind: "Numeric", Order: "Inc", Description: "15-second CPU run queue length"},
	{Name: "r1m", Kind: "Numeric", Order: "Inc", Description: "1-minute CPU run queue length (alias: cpu)"},
	{Name: "r15m", Kind: "Numeric", Order: "Inc", Description: "15-minute CPU run queue length"},
	{Name: "ut", Kind: "Numeric", Order: "Inc", Description: "1-minute CPU utilization (0.0 to 1.0)"},
	{Name: "pg", Kind: "Numeric", Order: "Inc", Description: "Paging rate (pages/second)"},
	{Name: "io", Kind: "Numeric", Order: "Inc", Description: "Disk IO rate (Kbytes/second)"},
	{Name: "ls", Kind: "Numeric", Order: "Inc", Description: "Number of login sessions (alias: login)"},
	{Name: "it", Kind: "Numeric", Order: "Dec", Description: "Idle time (minutes) (alias: idle)"},
	{Name: "tmp", Kind: "Numeric", Order: "Dec", Description: "Disk space in /tmp (Mbytes)"},
	{Name: "swp", Kind: "Numeric", Order: "Dec", Description: "Available swap space (Mbytes) (alias: swap)"},
	{Name: "mem", Kind: "Numeric", Order: "Dec", Description: "Available memory (Mbytes)"},
	{Name: "ncpus", Kind: "Numeric", Order: "Dec", Description: "Number of CPUs"},
	{Name: "nprocs", Kind: "Numeric", Order: "Dec", Description: "Number of physical processors"},
	{Name: "ncores", Kind: "Numeric", Order: "Dec", Description: "Number of cores per physical processor"},
	{Name: "nthreads", Kind: "Numeric", Order: "Dec", Description: "Number of threads per processor core"},
	{Name: "ndisks", Kind: "Numeric", Order: "Dec", Description: "Number of local disks"},
	{Name: "maxmem", Kind: "Numeric", Order: "Dec", Description: "Maximum memory (Mbytes)"},
	{Name: "maxswp", Kind: "Numeric", Order: "Dec", Description: "Maximum swap space (Mbytes)"},
	{Name: "maxtmp", Kind: "Numeric", Order: "Dec", Description: "Maximum /tmp space (Mbytes)"},
	{Name: "cpuf", Kind: "Numeric", Order: "Dec", Description: "CPU factor"},
	{Name: "ngpus", Kind: "Numeric", Order: "Dec", Description: "Number of GPUs"},
	{Name: "rexpri", Kind: "Numeric", Order: "N/A", Description: "Remote execution priority"},
	{Name: "server", Kind: "Boolean", Order: "N/A", Description: "LSF server host"},
	{Name: "type", Kind: "String", Order: "N/A", Description: "Host type"},
	{Name: "model", Kind: "String", Order: "N/A", Description: "Host model"},
	{Name: "status", Kind: "String", Order: "N/A", Description: "Host status"},
	{Name: "hname", Kind: "String", Order: "N/A", Description: "Host name"},
}

// LSResources are lsinfo's resources: the built-in ones (the load indices
// updated every loadInterval seconds), then the configured ones, which
// are static (XCE runs no ELIM).
func LSResources(info *api.ClusterInfo, loadInterval int) []LSResource {
	out := make([]LSResource, 0, len(lsBuiltins)+len(info.GetResources()))
	for i, r := range lsBuiltins {
		r.Builtin = true
		if i < 11 {
			r.Dynamic, r.Interval = true, loadInterval
		}
		out = append(out, r)
	}
	for _, r := range info.GetResources() {
		order := "N/A"
		if r.GetKind() == "Numeric" {
			order = "Dec"
			if r.GetIncreasing() {
				order = "Inc"
			}
		}
		out = append(out, LSResource{Name: r.GetName(), Kind: r.GetKind(), Order: order, Description: r.GetDescription()})
	}
	return out
}

// LSInfoOptions selects lsinfo's parts: all three when none is set.
type LSInfoOptions struct {
	Resources, Types, Models bool
	Wide                     bool // resource names not cut to 13 columns
}

// WriteLSInfo writes lsinfo: the resource table (RESOURCE_NAME TYPE ORDER
// DESCRIPTION), the host types in use (TYPE_NAME) and the host models in
// use with their CPU factors (MODEL_NAME CPU_FACTOR ARCHITECTURE; XCE
// detects no architecture string: "-"), parts separated by a blank line.
func WriteLSInfo(w io.Writer, res []LSResource, hosts []*api.Host, opt LSInfoOptions) error {
	if !opt.Resources && !opt.Types && !opt.Models {
		opt.Resources, opt.Types, opt.Models = true, true, true
	}
	var b bytes.Buffer
	sep := func() {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
	}
	if opt.Resources {
		b.WriteString("RESOURCE_NAME   TYPE    ORDER  DESCRIPTION\n")
		for _, r := range res {
			name := r.Name
			if !opt.Wide {
				name = cut(name, 13)
			}
			fmt.Fprintf(&b, "%-13s %7s    %-3s   %s\n", name, r.Kind, r.Order, r.Description)
		}
	}
	if opt.Types {
		sep()
		b.WriteString("TYPE_NAME\n")
		for _, t := range distinct(hosts, (*api.Host).GetType) {
			b.WriteString(t + "\n")
		}
	}
	if opt.Models {
		sep()
		b.WriteString("MODEL_NAME      CPU_FACTOR      ARCHITECTURE\n")
		seen := map[string]bool{}
		for _, h := range hosts {
			m := h.GetModel()
			if m == "" || seen[m] {
				continue
			}
			seen[m] = true
			fmt.Fprintf(&b, "%-16s%10.2f      %s\n", m, h.GetCpuFactor(), "-")
		}
	}
	return flush(w, &b)
}

// WriteLSInfoLong writes lsinfo -l: one block per resource.
func WriteLSInfoLong(w io.Writer, res []LSResource) error {
	var b bytes.Buffer
	yes := map[bool]string{true: "Yes", false: "No"}
	for i, r := range res {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "RESOURCE_NAME:  %s\nDESCRIPTION: %s\n", r.Name, r.Description)
		b.WriteString("TYPE    ORDER   INTERVAL  BUILTIN  DYNAMIC\n")
		fmt.Fprintf(&b, "%-7s%6s%11d%9s%9s\n", r.Kind, r.Order, r.Interval, yes[r.Builtin], yes[r.Dynamic])
	}
	return flush(w, &b)
}

// distinct lists the non-empty values of get over hosts, first seen first.
func distinct(hosts []*api.Host, get func(*api.Host) string) []string {
	var out []string
	for _, h := range hosts {
		if v := get(h); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
