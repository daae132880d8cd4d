package exec

import (
	"strings"

	"xce/lib/api"
)

// instanceEnv tells the job the named instances it holds
// ([resources.NAME] instances = true): XCE_ALLOC_NAME (the resource's
// name in capitals) lists them, comma-separated, host after host in
// LSB_DJOB_HOSTFILE's order and on each host in the order given; nil
// when it holds none. It comes after the submission environment, so a
// job cannot be told other instances than its own.
func (s *shepherd) instanceEnv() []string {
	return instanceEnv(s.hosts)
}

func instanceEnv(hosts []*api.HostSlots) []string {
	var order []string
	names := map[string][]string{}
	for _, h := range hosts {
		for _, ia := range h.GetInstances() {
			r := ia.GetResource()
			if _, seen := names[r]; !seen {
				order = append(order, r)
			}
			names[r] = append(names[r], ia.GetNames()...)
		}
	}
	var out []string
	for _, r := range order {
		out = append(out, "XCE_ALLOC_"+strings.ToUpper(r)+"="+strings.Join(names[r], ","))
	}
	return out
}
