package sim

import (
	"encoding/binary"
	"strconv"

	"xce/lib/sched"
)

// A job's exec hosts are kept compact for the run's whole length (a
// million jobs on thousands of hosts: the joined names were most of a
// run's memory): runs of hosts next to each other in the run's name
// table with the same slots, three varints each. Hosts formats them as
// LSF's exec host form when a report needs it.

// hostNames is a run's host names, in the order first placed on; idx
// finds them while the run places jobs (dropped at its end).
type hostNames struct {
	names []string
	idx   map[string]int
}

// newHostNames returns a table with the hosts' names in their order,
// where placements' runs of hosts follow it.
func newHostNames(hosts []sched.Host) *hostNames {
	t := &hostNames{idx: make(map[string]int, len(hosts))}
	for i := range hosts {
		t.index(hosts[i].Name)
	}
	return t
}

// index returns the name's place in the table, adding it the first time.
func (t *hostNames) index(name string) int {
	i, ok := t.idx[name]
	if !ok {
		i = len(t.names)
		t.names = append(t.names, name)
		t.idx[name] = i
	}
	return i
}

// hostList is one job's hosts in placement order: for each run, the
// index of its first host less the end of the run before (zigzag), its
// length and its slots, as varints.
type hostList struct {
	tab *hostNames
	b   []byte
}

// makeHostList encodes a placement's hosts, and returns their slots.
func makeHostList(tab *hostNames, has []sched.HostAlloc) (hostList, int) {
	var b []byte
	end, first, n, slots, total := 0, -1, 0, 0, 0
	flush := func() {
		if n > 0 {
			b = binary.AppendVarint(b, int64(first-end))
			b = binary.AppendUvarint(b, uint64(n))
			b = binary.AppendUvarint(b, uint64(slots))
			end = first + n
		}
	}
	for k := range has {
		ha := &has[k] // not copied
		total += ha.Slots
		if n > 0 && ha.Slots == slots && first+n < len(tab.names) && tab.names[first+n] == ha.Host {
			n++ // the run goes on, found without hashing the name
			continue
		}
		i := tab.index(ha.Host)
		flush()
		first, n, slots = i, 1, ha.Slots
	}
	flush()
	return hostList{tab: tab, b: b}, total
}

// appendTo appends the hosts as "host" or "N*host", joined with ':'.
func (l hostList) appendTo(out []byte) []byte {
	b, end, k := l.b, 0, 0
	for len(b) > 0 {
		d, w1 := binary.Varint(b)
		n, w2 := binary.Uvarint(b[w1:])
		slots, w3 := binary.Uvarint(b[w1+w2:])
		b = b[w1+w2+w3:]
		first := end + int(d)
		for i := first; i < first+int(n); i++ {
			if k > 0 {
				out = append(out, ':')
			}
			k++
			if slots > 1 {
				out = strconv.AppendUint(out, slots, 10)
				out = append(out, '*')
			}
			out = append(out, l.tab.names[i]...)
		}
		end = first + int(n)
	}
	return out
}

// Hosts is the job's exec hosts, "host" or "N*host" joined with ':'
// (LSF's exec host form); "" when it never started.
func (j JobResult) Hosts() string { return string(j.hosts.appendTo(nil)) }
