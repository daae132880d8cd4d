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

// HostsOptions selects the variant of the bhosts output.
type HostsOptions struct {
	Wide     bool // -w: full host names and the detailed status
	NoHeader bool // -noheader
}

// WriteHosts writes the default bhosts table (or -w) for hosts in the order
// given: HOST_NAME cut to 18 (not cut with -w), STATUS in 11 columns (14 with
// -w), JL/U "%5s", MAX "%6s" ("-" for none), then NJOBS RUN SSUSP USUSP RSV as
// "%6d". XCE has no per-user host limit, so JL/U is always "-".
func WriteHosts(w io.Writer, hosts []*api.Host, opt HostsOptions) error {
	var b bytes.Buffer
	name, status := fixed, fixed
	statusWidth := 11
	if opt.Wide {
		name, status = padRight, padRight
		statusWidth = 14
	}
	if !opt.NoHeader {
		fmt.Fprintf(&b, "%s %s %5s %6s %6s %6s %6s %6s %6s \n",
			padRight("HOST_NAME", 18), padRight("STATUS", statusWidth),
			"JL/U", "MAX", "NJOBS", "RUN", "SSUSP", "USUSP", "RSV")
	}
	for _, h := range hosts {
		fmt.Fprintf(&b, "%s %s %5s %6s %6d %6d %6d %6d %6d\n",
			name(h.GetName(), 18), status(HostStatus(h, opt.Wide), statusWidth),
			"-", dashIfZero(h.GetMaxSlots()),
			h.GetNjobs(), h.GetRun(), h.GetSsusp(), h.GetUsusp(), h.GetRsv())
	}
	return flush(w, &b)
}

// HostStatus is a host's STATUS: ok, closed, unavail or unreach; with detail
// (bhosts -w, -l) a closed host shows why, as in closed_Adm or closed_Full,
// when the controller said.
func HostStatus(h *api.Host, detail bool) string {
	switch h.GetState() {
	case api.HostState_HOST_OK:
		return "ok"
	case api.HostState_HOST_CLOSED:
		if d := h.GetStatusDetail(); detail && d != "" {
			return d
		}
		return "closed"
	case api.HostState_HOST_UNAVAIL:
		return "unavail"
	case api.HostState_HOST_UNREACH:
		return "unreach"
	}
	return "-"
}

// hostLoadIndex is one column of bhosts -l's CURRENT LOAD table: its
// header, width, whether a larger value means a more loaded host (Total
// is then the load plus what is reserved, else the amount left after the
// reservations), and how a value prints.
type hostLoadIndex struct {
	name       string
	width      int
	increasing bool
	value      func(h *api.Host) (float64, bool) // the current load; false: not reported
	format     func(v float64) string
}

func oneDecimal(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func noDecimal(v float64) string  { return strconv.FormatFloat(v, 'f', 0, 64) }
func percent(v float64) string    { return strconv.FormatFloat(v*100, 'f', 0, 64) + "%" }

// mbMem is an amount in MB as bhosts -l prints it (OpenLava's makeFields,
// IBM's example "4231M"): whole Mbytes while that takes at most 5
// characters, else whole Gbytes.
func mbMem(v float64) string {
	if s := strconv.FormatFloat(max(0, v), 'f', 0, 64) + "M"; len(s) <= 5 {
		return s
	}
	return strconv.FormatFloat(v/1024, 'f', 0, 64) + "G"
}

// hostLoadIndices are the built-in load indices of bhosts -l (OpenLava's
// widths: 6, ls 5), values in the index's unit (mem, swp, tmp in MB).
var hostLoadIndices = []hostLoadIndex{
	{"r15s", 6, true, func(h *api.Host) (float64, bool) { return h.GetR15S(), true }, oneDecimal},
	{"r1m", 6, true, func(h *api.Host) (float64, bool) { return h.GetR1M(), true }, oneDecimal},
	{"r15m", 6, true, func(h *api.Host) (float64, bool) { return h.GetR15M(), true }, oneDecimal},
	{"ut", 6, true, func(h *api.Host) (float64, bool) { return h.GetUt(), true }, percent},
	{"pg", 6, true, func(h *api.Host) (float64, bool) { return h.GetPg(), h.Pg != nil }, oneDecimal},
	{"io", 6, true, func(h *api.Host) (float64, bool) { return h.GetIo(), h.Io != nil }, noDecimal},
	{"ls", 5, true, func(h *api.Host) (float64, bool) { return float64(h.GetLs()), h.Ls != nil }, noDecimal},
	{"it", 6, false, func(h *api.Host) (float64, bool) { return h.GetIt(), h.It != nil }, noDecimal},
	{"tmp", 6, false, func(h *api.Host) (float64, bool) { return float64(h.GetTmpKb()) / 1024, measured(h, h.GetTmpKb()) }, mbMem},
	{"swp", 6, false, func(h *api.Host) (float64, bool) { return float64(h.GetSwpKb()) / 1024, measured(h, h.GetSwpKb()) }, mbMem},
	{"mem", 6, false, func(h *api.Host) (float64, bool) { return float64(h.GetMemKb()) / 1024, measured(h, h.GetMemKb()) }, mbMem},
}

// measured reports whether a host gave an amount of tmp, swp or mem: 0 is
// a value (no swap) when the host measured its load.
func measured(h *api.Host, kb int64) bool { return kb > 0 || h.GetLoadMeasured() }

// WriteHostsLong writes bhosts -l for hosts in the order given (OpenLava's
// prtHostsLong, LSF 10.1's slots column): "HOST  name"; the STATUS CPUF
// JL/U MAX NJOBS RUN SSUSP USUSP RSV DISPATCH_WINDOW table with the
// detailed status; for a host in contact, CURRENT LOAD USED FOR
// SCHEDULING with a Total row (the load plus what running jobs reserve for
// indices that grow with load, what is left after the reservations for
// the others; slots: the free slots) and a Reserved row, followed by the
// shared resources located on the host (their amount left and reserved)
// and the resources the host reports (writeReportedLoad); LOAD THRESHOLD USED FOR SCHEDULING (XCE has no thresholds: "-"); and
// for a host closed with badmin hclose -C, "ADMIN ACTION COMMENT:  text".
// Records end with a blank line.
func WriteHostsLong(w io.Writer, hosts []*api.Host, shared []*api.SharedResource) error {
	var b bytes.Buffer
	for _, h := range hosts {
		hostLong(&b, h, shared)
	}
	return flush(w, &b)
}

func hostLong(b *bytes.Buffer, h *api.Host, shared []*api.SharedResource) {
	b.WriteString("HOST  " + h.GetName() + "\n")
	fmt.Fprintf(b, "%-14s %6s %5s %6s %6s %6s %6s %6s %6s %s\n",
		"STATUS", "CPUF", "JL/U", "MAX", "NJOBS", "RUN", "SSUSP", "USUSP", "RSV", "DISPATCH_WINDOW")
	fmt.Fprintf(b, "%-14s %6.2f %5s %6s %6d %6d %6d %6d %6d %6s\n\n",
		HostStatus(h, true), h.GetCpuFactor(), "-", dashIfZero(h.GetMaxSlots()),
		h.GetNjobs(), h.GetRun(), h.GetSsusp(), h.GetUsusp(), h.GetRsv(), "-")
	if s := h.GetState(); s != api.HostState_HOST_UNAVAIL && s != api.HostState_HOST_UNREACH {
		b.WriteString(" CURRENT LOAD USED FOR SCHEDULING:\n")
		head, total, rsv := strings.Repeat(" ", 12), " Total      ", " Reserved   "
		for _, ix := range hostLoadIndices {
			r := h.GetReserved()[ix.name]
			t := "-"
			if v, ok := ix.value(h); ok {
				if ix.increasing {
					t = ix.format(v + r)
				} else {
					t = ix.format(max(0, v-r))
				}
			}
			head += padLeft(ix.name, ix.width)
			total += padLeft(t, ix.width)
			rsv += padLeft(ix.format(r), ix.width)
		}
		slots := "-"
		if h.GetMaxSlots() > 0 {
			slots = strconv.Itoa(int(max(0, h.GetMaxSlots()-h.GetNjobs())))
		}
		b.WriteString(head + padLeft("slots", 7) + "\n")
		b.WriteString(total + padLeft(slots, 7) + "\n")
		b.WriteString(rsv + padLeft("-", 7) + "\n\n")
		var here []*api.SharedResource
		for _, s := range shared {
			if slices.Contains(s.GetHosts(), h.GetName()) {
				here = append(here, s)
			}
		}
		if len(here) > 0 {
			head, total, rsv = strings.Repeat(" ", 12), " Total      ", " Reserved   "
			for _, s := range here {
				t, r := sharedLeft(s), oneDecimal(s.GetReserved())
				width := max(runeLen(s.GetName()), len(t), len(r)) + 1
				head += padLeft(s.GetName(), width)
				total += padLeft(t, width)
				rsv += padLeft(r, width)
			}
			b.WriteString(head + "\n" + total + "\n" + rsv + "\n\n")
		}
		writeReportedLoad(b, h)
	}
	b.WriteString(" LOAD THRESHOLD USED FOR SCHEDULING:\n" + thresholdTable + "\n")
	if c := strings.TrimSpace(h.GetAdminComment()); c != "" && h.GetStatusDetail() == "closed_Adm" {
		b.WriteString("ADMIN ACTION COMMENT:  " + c + "\n\n")
	}
}

// sharedLeft is what is left of a shared resource for scheduling: its
// amount less what running jobs reserve.
func sharedLeft(s *api.SharedResource) string {
	return trimZero(strconv.FormatFloat(max(0, s.GetTotal()-s.GetReserved()), 'f', 1, 64))
}

// WriteSharedResources writes bhosts -s: RESOURCE TOTAL RESERVED LOCATION
// (OpenLava's "%-20s%10s%15s%15s"), one line per shared resource: TOTAL
// the amount left for scheduling, RESERVED what running jobs hold ("%.1f",
// as IBM's example), LOCATION the hosts sharing it, each followed by a
// space, wrapped at 80 columns under the column.
func WriteSharedResources(w io.Writer, shared []*api.SharedResource) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-20s%10s%15s%15s\n", "RESOURCE", "TOTAL", "RESERVED", "LOCATION")
	for _, s := range shared {
		fmt.Fprintf(&b, "%-20s%10s%15s       ", s.GetName(), sharedLeft(s), oneDecimal(s.GetReserved()))
		writeLocation(&b, s.GetHosts(), 52)
	}
	return flush(w, &b)
}

// writeLocation writes a LOCATION list that starts at column col: each
// host followed by a space, a new line indented to col before a host that
// would pass column 80.
func writeLocation(b *bytes.Buffer, hosts []string, col int) {
	pos := col
	for _, h := range hosts {
		pos += runeLen(h) + 1
		if pos > 80 && pos-runeLen(h)-1 > col {
			b.WriteString("\n" + strings.Repeat(" ", col))
			pos = col + runeLen(h) + 1
		}
		b.WriteString(h + " ")
	}
	b.WriteByte('\n')
}
