package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"xce/lib/api"
)

// rcTime is UPDATED_AT as LSF's bhosts -rc prints it:
// 2023-11-06T23:02:26UTC.
func rcTime(ns int64) string {
	if ns == 0 {
		return "-"
	}
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05") + "UTC"
}

// WriteHostsRC writes bhosts -rc (and -rconly): the bhosts table (its -w
// form with opt.Wide) with LSF resource connector's columns after it:
// RC_STATUS, PROV_STATUS, UPDATED_AT and INSTANCE_ID, "-" for a static
// host.
func WriteHostsRC(w io.Writer, hosts []*api.Host, opt HostsOptions) error {
	var table bytes.Buffer
	if err := WriteHosts(&table, hosts, opt); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n")
	var b bytes.Buffer
	i := 0
	if !opt.NoHeader {
		fmt.Fprintf(&b, "%s %-20s %-12s %-22s %s\n", strings.TrimRight(lines[0], " "), "RC_STATUS", "PROV_STATUS", "UPDATED_AT", "INSTANCE_ID")
		i = 1
	}
	for _, h := range hosts {
		fmt.Fprintf(&b, "%s %-20s %-12s %-22s %s\n", lines[i], dashIfEmpty(h.GetRcStatus()), dashIfEmpty(h.GetProvStatus()),
			rcTime(h.GetRcUpdatedAt()), dashIfEmpty(h.GetRcInstanceId()))
		i++
	}
	return flush(w, &b)
}

// WriteSupply writes badmin rc view: the templates with their instances
// counted and the last demand, then every instance and open request, the
// shared resources' loans, and each provider's lease owner.
func WriteSupply(w io.Writer, v *api.SupplyView) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-16s %-12s %5s %5s %7s %9s %6s %8s %8s %s\n", "TEMPLATE", "PROVIDER", "MAX", "SLOTS", "BOOTING", "ALLOCATED", "DEMAND", "IDLE", "MAX_TTL", "BACKOFF_UNTIL")
	for _, t := range v.GetTemplates() {
		ttl := "-"
		if t.GetMaxTtlSec() > 0 {
			ttl = (time.Duration(t.GetMaxTtlSec()) * time.Second).String()
		}
		back := "-"
		if t.GetBackoffUntil() > 0 {
			back = rcTime(t.GetBackoffUntil())
		}
		fmt.Fprintf(&b, "%-16s %-12s %5d %5d %7d %9d %6d %8s %8s %s\n", t.GetName(), t.GetProvider(), t.GetMax(), t.GetSlots(),
			t.GetBooting(), t.GetAllocated(), t.GetDemand(), (time.Duration(t.GetIdleTimeSec()) * time.Second).String(), ttl, back)
	}
	if len(v.GetInstances()) > 0 {
		fmt.Fprintf(&b, "\n%-20s %-16s %-20s %-12s %-22s %s\n", "INSTANCE_ID", "TEMPLATE", "RC_STATUS", "PROV_STATUS", "UPDATED_AT", "REQUEST")
		for _, in := range v.GetInstances() {
			fmt.Fprintf(&b, "%-20s %-16s %-20s %-12s %-22s %s\n", in.GetId(), in.GetTemplate(), in.GetRcStatus(), dashIfEmpty(in.GetProvStatus()),
				rcTime(in.GetUpdatedAt()), in.GetRequestId())
		}
	}
	if len(v.GetRequests()) > 0 {
		fmt.Fprintf(&b, "\n%-12s %-16s %5s %-10s %-22s %s\n", "REQUEST", "TEMPLATE", "COUNT", "STATE", "CREATED_AT", "ERROR")
		for _, r := range v.GetRequests() {
			fmt.Fprintf(&b, "%-12s %-16s %5d %-10s %-22s %s\n", r.GetId(), r.GetTemplate(), r.GetCount(), r.GetState(),
				rcTime(r.GetCreatedAt()), dashIfEmpty(r.GetError()))
		}
	}
	writeLoansAndLeases(&b, v)
	return flush(w, &b)
}

// writeLoansAndLeases writes badmin rc view's shared resources on loan
// from their providers, and which provisioner serves each provider (holds
// its lease) until when.
func writeLoansAndLeases(b *bytes.Buffer, v *api.SupplyView) {
	if len(v.GetBorrows()) > 0 {
		fmt.Fprintf(b, "\n%-12s %-16s %-12s %6s %-10s %-22s %s\n", "LOAN", "RESOURCE", "PROVIDER", "AMOUNT", "STATE", "UPDATED_AT", "ERROR")
		for _, l := range v.GetBorrows() {
			fmt.Fprintf(b, "%-12s %-16s %-12s %6d %-10s %-22s %s\n", l.GetId(), l.GetResource(), l.GetProvider(), l.GetAmount(), l.GetState(),
				rcTime(l.GetUpdatedAt()), dashIfEmpty(l.GetError()))
		}
	}
	if len(v.GetLeases()) > 0 {
		fmt.Fprintf(b, "\n%-12s %-36s %s\n", "PROVIDER", "LEASE_OWNER", "LEASE_UNTIL")
		for _, l := range v.GetLeases() {
			fmt.Fprintf(b, "%-12s %-36s %s\n", l.GetProvider(), l.GetOwner(), rcTime(l.GetExpires()))
		}
	}
}

// WriteSupplyErrors writes badmin rc error: the providers' recent errors,
// oldest first.
func WriteSupplyErrors(w io.Writer, v *api.SupplyView) error {
	var b bytes.Buffer
	if len(v.GetErrors()) == 0 {
		b.WriteString("No provider errors\n")
		return flush(w, &b)
	}
	for _, e := range v.GetErrors() {
		tmpl := ""
		if e.GetTemplate() != "" {
			tmpl = " template " + e.GetTemplate()
		}
		fmt.Fprintf(&b, "%s provider %s%s: %s\n", rcTime(e.GetTime()), e.GetProvider(), tmpl, e.GetMessage())
	}
	return flush(w, &b)
}
