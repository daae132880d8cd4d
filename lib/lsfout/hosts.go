package lsfout

import (
	"bytes"
	"fmt"
	"io"

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
