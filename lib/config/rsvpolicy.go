package config

import (
	"fmt"
	"strconv"
	"strings"
)

// RsvPolicy is an advance reservation policy ([[reservation_policies]],
// LSF's lsb.resources ResourceReservation section): the users it names
// may create reservations themselves (brsvadd) on its hosts inside its
// time windows.
type RsvPolicy struct {
	Name string `toml:"name"`
	// Users are users and user groups, "all", and "~name" to leave one
	// out; empty: all.
	Users []string `toml:"users"`
	// Hosts are hosts and host groups, "all", and "~name"; empty: all.
	Hosts []string `toml:"hosts"`
	// TimeWindows are "[day:]hour[:minute]-[day:]hour[:minute]" windows
	// a reservation must lie inside; empty: any time.
	TimeWindows []string `toml:"time_windows"`
}

func (c *Config) checkRsvPolicies(k *checker) {
	seen := map[string]bool{}
	for i, p := range c.RsvPolicies {
		key := fmt.Sprintf("reservation_policies.%d", i)
		switch {
		case p.Name == "" || !ValidName(p.Name):
			k.add(key+".name", "%q is not a valid policy name: use letters, digits, '_', '-', '.' and '@' (no blanks)", p.Name)
		case seen[p.Name]:
			k.add(key+".name", "reservation policy %s is defined twice", p.Name)
		}
		seen[p.Name] = true
		for _, w := range p.TimeWindows {
			if !validWindow(w) {
				k.add(key+".time_windows", "%q is not a time window: [day:]hour[:minute]-[day:]hour[:minute]", w)
			}
		}
	}
}

// validWindow checks a window's form (lib/policy reads it).
func validWindow(w string) bool {
	a, b, ok := strings.Cut(w, "-")
	if !ok {
		return false
	}
	fa, fb := strings.Split(a, ":"), strings.Split(b, ":")
	if len(fa) != len(fb) || len(fa) > 3 {
		return false
	}
	for _, f := range append(fa, fb...) {
		if n, err := strconv.Atoi(f); err != nil || n < 0 || n > 59 {
			return false
		}
	}
	return true
}
