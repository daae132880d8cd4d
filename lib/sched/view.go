package sched

import (
	"math"
	"strings"

	"xce/lib/hostlist"
	"xce/lib/resreq"
)

// View is what the scheduler sees of a snapshot before it places anything:
// the hosts' values as select and order read them, what running jobs
// hold, and the fairshare accounts' use. The query commands show it
// (bhosts -l and -s, bqueues -r, the -R host filters), so that they tell
// what the scheduler would see, computed by the same accounting.
type View struct {
	Hosts map[string]HostView
	// SharedReserved is what running jobs hold of each shared resource.
	SharedReserved map[string]float64
	// Fair holds, per fairshare queue and account, what its running jobs
	// hold now.
	Fair map[string]map[string]FairRun
}

// HostView is the scheduler's view of one host.
type HostView struct {
	// Values are what select and order read: the host's values net of
	// running jobs' reservations, slots and maxslots its free and total
	// job slots. Treat them as read-only.
	Values *resreq.Host
	// Reserved is what running jobs hold of each host resource they
	// reserve (for a gauge such as mem only the part a job does not use
	// yet), in the resource's unit.
	Reserved map[string]float64
	// GPUs is what running jobs hold of each of the host's devices, in
	// Host.GPUs order (nil: the host lists none): bhosts -gpu's NJOBS,
	// JEXCL and MRSV.
	GPUs []GPUView
}

// GPUView is one device as the scheduler accounts it.
type GPUView struct {
	Index     int
	Jobs      int     // jobs using it
	Exclusive bool    // held by an exclusive job
	MemRsv    float64 // gmem its jobs reserve, MB
}

// FairRun is an account's running jobs in a fairshare queue: the slots
// they hold and their slot-hours so far (DynamicPriority's arguments).
type FairRun struct {
	Slots    int
	RunHours float64
}

// Look computes the view of a snapshot. It does not modify the snapshot.
func Look(s *Snapshot) *View {
	if len(s.Claims) > 0 {
		s2, _ := claimSnapshot(s) // what claims hold is reserved (claim.go)
		s = &s2
	}
	c := newCycle(s, nil) // the view hands out the hosts' values: no scratch
	v := &View{Hosts: make(map[string]HostView, len(c.hosts)), SharedReserved: map[string]float64{}, Fair: map[string]map[string]FairRun{}}
	for i := range c.hosts {
		hs := &c.hosts[i]
		hv := HostView{Values: c.valsOf(i), Reserved: map[string]float64{}}
		orig := s.Hosts[i].Values
		for ri, info := range c.resInfo {
			if info.num < 0 || orig == nil {
				continue
			}
			if r := orig.Num[info.num] - hs.avail[ri]; !math.IsNaN(r) && r != 0 {
				hv.Reserved[info.name] = r
			}
		}
		if gp := hs.gpus; gp != nil {
			for i, d := range gp.devs {
				hv.GPUs = append(hv.GPUs, GPUView{Index: d.Index, Jobs: gp.holders(i), Exclusive: gp.heldAlone(i), MemRsv: d.memRes})
			}
		}
		v.Hosts[s.Hosts[i].Name] = hv
	}
	for name, total := range s.Shared {
		if r := total - c.shared[name]; r != 0 {
			v.SharedReserved[name] = r
		}
	}
	for name, qs := range c.queues {
		if qs.q.Fairshare == nil {
			continue
		}
		m := map[string]FairRun{}
		for acct, n := range qs.slots {
			m[acct] = FairRun{Slots: n, RunHours: qs.run[acct]}
		}
		v.Fair[name] = m
	}
	return v
}

// HostListIncludes reports whether a host list (a queue's HOSTS: host and
// group names, "all", "~name" exclusions, "name+N" preferences) names
// host, with groups as Snapshot.HostGroups gives them. The scheduler
// reads queue host lists the same way.
func HostListIncludes(list []string, host string, groups map[string][]string) bool {
	if len(list) == 0 {
		return true
	}
	return hostSet(list, map[string]int{host: 0}, 1, groups)[0]
}

// hostSet marks the hosts (by their index in byName) that a host list
// names.
func hostSet(names []string, byName map[string]int, n int, groups map[string][]string) []bool {
	set := make([]bool, n)
	seen := map[string]bool{}
	var add func(n string)
	add = func(n string) {
		n = hostlist.Parse(n).Name
		if n == "all" {
			for i := range set {
				set[i] = true
			}
			return
		}
		if m, ok := groups[n]; ok {
			if seen[n] {
				return
			}
			seen[n] = true
			for _, x := range m {
				add(x)
			}
			return
		}
		if i, ok := byName[n]; ok {
			set[i] = true
		}
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "~") {
			add(n)
		}
	}
	// "~name" removes a host or group: HOSTS = all ~hostA.
	for _, n := range names {
		if strings.HasPrefix(n, "~") {
			ex := make([]bool, len(set))
			set, ex = ex, set // add writes into set
			clear(seen)
			add(n[1:])
			set, ex = ex, set
			for i := range set {
				set[i] = set[i] && !ex[i]
			}
		}
	}
	return set
}
