package sched

// SharedHeld is what running jobs (and held claims) hold of each shared
// resource of s.Shared: Look(s).SharedReserved without the hosts, queues
// and limits a whole view accounts, for callers that need only the
// shared resources' use often (the provisioners' return of idle loans,
// the simulator). Resources nothing holds are absent. It does not
// modify the snapshot.
func SharedHeld(s *Snapshot) map[string]float64 {
	out := map[string]float64{}
	if len(s.Shared) == 0 {
		return out
	}
	if len(s.Claims) > 0 {
		s2, _ := claimSnapshot(s) // what claims hold is held (claim.go)
		s = &s2
	}
	// A suspended job gives back the preemptable resources (release in
	// preempt.go).
	var rel map[string]bool
	for _, r := range s.Preempt.Resources {
		if rel == nil {
			rel = map[string]bool{}
		}
		rel[r] = true
	}
	for i := range s.Running {
		a := &s.Running[i]
		elapsed := s.Now.Sub(a.Start)
		for _, ha := range a.Hosts {
			for _, u := range ha.Rusage {
				for _, r := range u.Resources {
					if _, ok := s.Shared[r.Name]; !ok || (a.Preempt.Suspended && rel[r.Name]) {
						continue
					}
					out[r.Name] += amount(ha.Rusage, r.Name, elapsed, ha.Slots, ha.Lead, true)
				}
			}
		}
	}
	for name, v := range out {
		if v == 0 {
			delete(out, name)
		}
	}
	return out
}
