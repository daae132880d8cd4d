package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"xce/lib/api"
)

// internalLimits are blimits' INTERNAL RESOURCE LIMITS columns, in LSF's
// order; any other resource goes under EXTERNAL RESOURCE LIMITS.
var internalLimits = []string{"slots", "mem", "tmp", "swp", "jobs"}

// WriteLimits writes blimits: the rows of what jobs hold of each limit,
// under INTERNAL RESOURCE LIMITS (NAME USERS QUEUES HOSTS PROJECTS SLOTS
// MEM TMP SWP JOBS) and, for limits on site resources, EXTERNAL RESOURCE
// LIMITS (one column per resource). A consumer the limit does not name
// and a resource it does not limit print "-"; an amount prints
// used/limit ("3/10"), memory in MB. APPS and LIC_PROJECTS columns are
// added when a row has them. Names are cut to fit their column (14 of 15
// characters) unless wide (-w). With no row: "No resource usage found."
func WriteLimits(w io.Writer, rows []*api.LimitUsage, wide bool) error {
	var buf bytes.Buffer
	var internal, external []*api.LimitUsage
	var extNames []string
	apps, lics := false, false
	for _, r := range rows {
		apps = apps || r.GetApps() != ""
		lics = lics || r.GetLicProjects() != ""
		in, ex := false, false
		for _, a := range r.GetAmounts() {
			if slices.Contains(internalLimits, a.GetResource()) {
				in = true
			} else {
				ex = true
				if !slices.Contains(extNames, a.GetResource()) {
					extNames = append(extNames, a.GetResource())
				}
			}
		}
		if in {
			internal = append(internal, r)
		}
		if ex {
			external = append(external, r)
		}
	}
	if len(internal) == 0 && len(external) == 0 {
		fmt.Fprintln(&buf, "No resource usage found.")
		return flush(w, &buf)
	}
	slices.Sort(extNames)
	section := func(title string, rs []*api.LimitUsage, cols []string) {
		fmt.Fprintf(&buf, "%s\n\n", title)
		head := []string{"NAME", "USERS", "QUEUES", "HOSTS", "PROJECTS"}
		if apps {
			head = append(head, "APPS")
		}
		if lics {
			head = append(head, "LIC_PROJECTS")
		}
		line := func(names, amounts []string) {
			var b strings.Builder
			b.WriteString("    ")
			for _, n := range names {
				if !wide {
					n = cut(n, 14)
				}
				fmt.Fprintf(&b, "%-15s", n)
				if wide && runeLen(n) >= 15 {
					b.WriteByte(' ')
				}
			}
			for _, a := range amounts {
				fmt.Fprintf(&b, "%-11s", a)
				if runeLen(a) >= 11 {
					b.WriteByte(' ')
				}
			}
			buf.WriteString(strings.TrimRight(b.String(), " ") + "\n")
		}
		upper := make([]string, len(cols))
		for i, c := range cols {
			upper[i] = c
			if slices.Contains(internalLimits, c) {
				upper[i] = strings.ToUpper(c)
			}
		}
		line(head, upper)
		for _, r := range rs {
			names := []string{r.GetName(), dash(r.GetUsers()), dash(r.GetQueues()), dash(r.GetHosts()), dash(r.GetProjects())}
			if apps {
				names = append(names, dash(r.GetApps()))
			}
			if lics {
				names = append(names, dash(r.GetLicProjects()))
			}
			amounts := make([]string, len(cols))
			for i, c := range cols {
				amounts[i] = "-"
				for _, a := range r.GetAmounts() {
					if a.GetResource() == c && a.GetLimit() >= 0 {
						used, lim := a.GetUsed(), a.GetLimit()
						if c == "mem" || c == "swp" || c == "tmp" {
							used, lim = math.Round(used), math.Round(lim) // whole MB
						}
						amounts[i] = limitNum(used) + "/" + limitNum(lim)
					}
				}
			}
			line(names, amounts)
		}
	}
	if len(internal) > 0 {
		section("INTERNAL RESOURCE LIMITS:", internal, internalLimits)
	}
	if len(external) > 0 {
		if len(internal) > 0 {
			buf.WriteByte('\n')
		}
		section("EXTERNAL RESOURCE LIMITS:", external, extNames)
	}
	return flush(w, &buf)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// limitNum prints an amount: whole numbers as they are, others with at
// most two decimals.
func limitNum(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// WriteLimitConfig writes blimits -c (LSF's bresources): each limit as
// the Limit section of lsb.resources that configures it, keywords in
// LSF's spelling, in the order of the configuration.
func WriteLimitConfig(w io.Writer, ls []*api.LimitConfig) error {
	var buf bytes.Buffer
	if len(ls) == 0 {
		fmt.Fprintln(&buf, "No resource limits are configured.")
		return flush(w, &buf)
	}
	for i, l := range ls {
		if i > 0 {
			buf.WriteByte('\n')
		}
		buf.WriteString("Begin Limit\n")
		kv := func(k, v string) {
			if v != "" {
				fmt.Fprintf(&buf, "%s = %s\n", k, v)
			}
		}
		kv("NAME", l.GetName())
		for _, p := range []struct {
			k string
			v []string
		}{{"USERS", l.GetUsers()}, {"PER_USER", l.GetPerUser()}, {"QUEUES", l.GetQueues()}, {"PER_QUEUE", l.GetPerQueue()},
			{"HOSTS", l.GetHosts()}, {"PER_HOST", l.GetPerHost()}, {"PROJECTS", l.GetProjects()}, {"PER_PROJECT", l.GetPerProject()},
			{"APPS", l.GetApps()}, {"PER_APP", l.GetPerApp()}, {"LIC_PROJECTS", l.GetLicProjects()}, {"PER_LIC_PROJECT", l.GetPerLicProject()}} {
			kv(p.k, strings.Join(p.v, " "))
		}
		if l.Slots != nil {
			kv("SLOTS", strconv.Itoa(int(l.GetSlots())))
		}
		if l.GetSlotsPerProcessor() != 0 {
			kv("SLOTS_PER_PROCESSOR", limitNum(l.GetSlotsPerProcessor()))
		}
		kv("MEM", l.GetMem())
		kv("SWP", l.GetSwp())
		kv("TMP", l.GetTmp())
		if l.Jobs != nil {
			kv("JOBS", strconv.Itoa(int(l.GetJobs())))
		}
		var res []string
		for _, name := range slices.Sorted(maps.Keys(l.GetResources())) {
			res = append(res, fmt.Sprintf("[%s,%s]", name, limitNum(l.GetResources()[name])))
		}
		kv("RESOURCE", strings.Join(res, " "))
		buf.WriteString("End Limit\n")
	}
	return flush(w, &buf)
}
