package lsfout

import (
	"bytes"
	"strings"

	"xce/lib/api"
)

// instanceAllocs are the named instances held on hosts, one string per
// resource in the order first met: "fpga: hostA/fpga0,fpga1 hostB/fpga0"
// (the shape of bjobs -o gpu_alloc).
func instanceAllocs(hosts []*api.HostSlots) []string {
	var order []string
	parts := map[string][]string{}
	for _, h := range hosts {
		for _, ia := range h.GetInstances() {
			r := ia.GetResource()
			if _, seen := parts[r]; !seen {
				order = append(order, r)
			}
			parts[r] = append(parts[r], h.GetHost()+"/"+strings.Join(ia.GetNames(), ","))
		}
	}
	out := make([]string, len(order))
	for i, r := range order {
		out[i] = r + ": " + strings.Join(parts[r], " ")
	}
	return out
}

// instancesLong writes bjobs -l's INSTANCES ALLOCATED section (XCE's;
// LSF has named instances only for GPUs): one line per resource, as
// instanceAllocs gives it; nothing for a job that holds none.
func instancesLong(b *bytes.Buffer, j *api.Job) {
	allocs := instanceAllocs(j.GetExecHosts())
	if len(allocs) == 0 {
		return
	}
	b.WriteString("\n INSTANCES ALLOCATED:\n")
	for _, a := range allocs {
		b.WriteString(" " + a + "\n")
	}
}
