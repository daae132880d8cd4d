package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"xce/lib/sched"
)

// TestHostList: the compact host lists give back the exec host form the
// placements' hosts join to, for runs, gaps, backward steps, repeated
// hosts and slots.
func TestHostList(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 1))
	tab := newHostNames([]sched.Host{{Name: "h010"}, {Name: "h011"}, {Name: "h013"}})
	for range 2000 {
		var has []sched.HostAlloc
		h := r.IntN(50)
		for range r.IntN(12) {
			switch r.IntN(4) {
			case 0:
				h = r.IntN(50) // anywhere, backwards too
			default:
				h++ // the next one: runs
			}
			slots := 1
			if r.IntN(4) == 0 {
				slots = 1 + r.IntN(16)
			}
			has = append(has, sched.HostAlloc{Host: fmt.Sprintf("h%03d", h), Slots: slots})
		}
		var want []string
		for _, ha := range has {
			if ha.Slots > 1 {
				want = append(want, fmt.Sprintf("%d*%s", ha.Slots, ha.Host))
			} else {
				want = append(want, ha.Host)
			}
		}
		hl, slots := makeHostList(tab, has)
		j := JobResult{hosts: hl}
		if got := j.Hosts(); got != strings.Join(want, ":") {
			t.Fatalf("%v: got %q, want %q", has, got, strings.Join(want, ":"))
		}
		wantSlots := 0
		for _, ha := range has {
			wantSlots += ha.Slots
		}
		if slots != wantSlots {
			t.Fatalf("%v: %d slots, want %d", has, slots, wantSlots)
		}
	}
}
