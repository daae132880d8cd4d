package resreq

import "time"

// phase returns, for resource i of the usage string, the amount (in MB for
// memory resources), the length (0 when not given) and the decay of phase p.
func (u *Usage) phase(i, p int) (amount float64, length time.Duration, decay bool) {
	a := u.Resources[i].Amounts
	amount = a[p].MB()
	if p < len(u.Durations) {
		length = u.Durations[p].D()
	}
	if p < len(u.Decays) {
		decay = u.Decays[p] == 1
	}
	return amount, length, decay
}

// AmountAt returns how much of resource name the usage string reserves
// once the job has run for elapsed, and whether it names the resource.
// Amounts of memory resources are in MB.
//
// Without a duration the amount is reserved for the whole job. With one it
// is reserved for that long and then released; with decay=1 it decreases
// linearly over the duration, from the amount to 0. In a multi-phase
// reservation each phase lasts its duration (the last one, if it has
// none, until the job ends); a decaying phase decreases linearly to the
// amount of the next phase (to 0 for the last one).
func (u *Usage) AmountAt(name string, elapsed time.Duration) (float64, bool) {
	for i := range u.Resources {
		if u.Resources[i].Name != name {
			continue
		}
		return u.amountAt(i, elapsed), true
	}
	return 0, false
}

func (u *Usage) amountAt(i int, elapsed time.Duration) float64 {
	if elapsed < 0 {
		elapsed = 0
	}
	n := len(u.Resources[i].Amounts)
	start := time.Duration(0)
	for p := 0; p < n; p++ {
		amount, length, decay := u.phase(i, p)
		if length <= 0 {
			if p < len(u.Durations) {
				// An explicit zero duration: nothing reserved in it.
				continue
			}
			return amount // until the job ends
		}
		if elapsed < start+length {
			if !decay {
				return amount
			}
			next := 0.0
			if p+1 < n {
				next = u.Resources[i].Amounts[p+1].MB()
			}
			f := float64(elapsed-start) / float64(length)
			return amount - (amount-next)*f
		}
		start += length
	}
	return 0
}

// AmountAt returns the amount of resource name the usage strings of the
// set reserve after elapsed, and whether any of them names it.
func (set UsageSet) AmountAt(name string, elapsed time.Duration) (float64, bool) {
	for i := range set {
		if v, ok := set[i].AmountAt(name, elapsed); ok {
			return v, true
		}
	}
	return 0, false
}

// Names returns the resources the set reserves, in the order written.
func (set UsageSet) Names() []string {
	var out []string
	for _, u := range set {
		for _, r := range u.Resources {
			out = append(out, r.Name)
		}
	}
	return out
}
