package sched

import "slices"

// cpuState is the scheduler's accounting of a host's cores, when the
// host binds jobs to cores (Host.CPUs).
type cpuState struct {
	ids   []int       // Host.CPUs, ascending, each once (not to be changed)
	pos   map[int]int // CPU number -> index in ids; nil when ids[i] == i
	busy  []bool      // by index: held by a running or placed job
	nfree int
}

func newCPUState(ids []int) *cpuState {
	if !strictlyAscending(ids) {
		ids = slices.Clone(ids)
		slices.Sort(ids)
		ids = slices.Compact(ids)
	}
	cs := &cpuState{ids: ids, busy: make([]bool, len(ids)), nfree: len(ids)}
	// The usual list, 0..n-1, is its own index.
	if len(ids) > 0 && ids[0] == 0 && ids[len(ids)-1] == len(ids)-1 {
		return cs
	}
	cs.pos = make(map[int]int, len(ids))
	for i, id := range ids {
		cs.pos[id] = i
	}
	return cs
}

// index is the position of CPU id, false when the host has no such core.
func (cs *cpuState) index(id int) (int, bool) {
	if cs.pos == nil {
		return id, id >= 0 && id < len(cs.ids)
	}
	i, ok := cs.pos[id]
	return i, ok
}

// take marks the cores at positions pos busy.
func (cs *cpuState) take(pos []int) {
	for _, i := range pos {
		if !cs.busy[i] {
			cs.busy[i] = true
			cs.nfree--
		}
	}
}

// free counts the cores neither busy nor in taken (positions an earlier
// part of the same job took).
func (cs *cpuState) free(taken []int) int {
	n := cs.nfree
	for _, i := range taken {
		if !cs.busy[i] {
			n--
		}
	}
	return n
}

// pick chooses n free cores (positions), none of taken: the first run of
// n cores with consecutive numbers, else the lowest free ones. nil when
// fewer than n are free.
func (cs *cpuState) pick(n int, taken []int) []int {
	if n <= 0 {
		return []int{}
	}
	ok := func(i int) bool { return !cs.busy[i] && !slices.Contains(taken, i) }
	run := 0
	for i := range cs.ids {
		switch {
		case !ok(i):
			run = 0
			continue
		case run > 0 && cs.ids[i] == cs.ids[i-1]+1:
			run++
		default:
			run = 1
		}
		if run == n {
			return seq(i-n+1, n)
		}
	}
	out := make([]int, 0, n)
	for i := range cs.ids {
		if ok(i) {
			out = append(out, i)
			if len(out) == n {
				return out
			}
		}
	}
	return nil
}

func seq(from, n int) []int {
	out := make([]int, n)
	for k := range out {
		out[k] = from + k
	}
	return out
}

// numbers turns positions into CPU numbers, ascending.
func (cs *cpuState) numbers(pos []int) []int {
	out := make([]int, len(pos))
	for k, i := range pos {
		out[k] = cs.ids[i]
	}
	slices.Sort(out)
	return out
}

// coresFor is how many cores a job takes on a host for slots there: one
// per slot, or every core of the host for an exclusive job (nothing else
// may run there; see the package doc).
func (cs *cpuState) coresFor(slots int, excl bool) int {
	if excl {
		return len(cs.ids)
	}
	return slots
}

// chargeCPUs records an allocation's cores on a host. A running job
// without a core list (dispatched before the host bound jobs to cores) is
// charged the cores a new job would get now, so that it still counts.
func (c *cycle) chargeCPUs(hs *hostState, ha *HostAlloc, excl bool) {
	cs := hs.cpus
	if ha.CPUs != nil {
		pos := make([]int, 0, len(ha.CPUs))
		for _, id := range ha.CPUs {
			if i, ok := cs.index(id); ok {
				pos = append(pos, i)
			}
		}
		cs.take(pos)
		return
	}
	n := min(cs.coresFor(ha.Slots, excl), cs.nfree)
	cs.take(cs.pick(n, nil))
}

func strictlyAscending(ids []int) bool {
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			return false
		}
	}
	return true
}
