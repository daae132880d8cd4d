package tests

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// rackSlots counts a job's slots per rack from its exec_host
// ("2*hA:hC:..."), given each host's rack.
func rackSlots(t *testing.T, execHost string, rackOf map[string]string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, part := range strings.Split(execHost, ":") {
		n, host := 1, part
		if a, b, ok := strings.Cut(part, "*"); ok {
			var err error
			if n, err = strconv.Atoi(a); err != nil {
				t.Fatalf("exec_host %q", execHost)
			}
			host = b
		}
		r, ok := rackOf[host]
		if !ok {
			t.Fatalf("exec_host %q: %s is in no rack", execHost, host)
		}
		out[r] += n
	}
	return out
}

// Four workers in two racks of two hosts with two slots each: cu[balance]
// splits a job evenly over the fewest racks, cu[maxcus=1] keeps a job in
// one rack (the one with room), and a job no rack can hold pends with a
// reason that names the racks and their free slots; bmgroup -cu lists
// the racks.
func TestClusterComputeUnits(t *testing.T) {
	m := newMulti(t, `compute_unit_types = ["rack"]`, "",
		"[hosts.hA]\nslots = 2\n[hosts.hB]\nslots = 2\n[hosts.hC]\nslots = 2\n[hosts.hD]\nslots = 2\n",
		"[queues.normal]\npriority = 30\nexclusive_cu = \"rack\"\n",
		"[[compute_units]]\nname = \"rack1\"\ntype = \"rack\"\nmembers = [\"hA\", \"hB\"]\ncondense = true\n",
		"[[compute_units]]\nname = \"rack2\"\ntype = \"rack\"\nmembers = [\"hC\", \"hD\"]\n")
	rackOf := map[string]string{"hA": "rack1", "hB": "rack1", "hC": "rack2", "hD": "rack2"}
	for h := range rackOf {
		m.worker(h, 2)
	}
	m.waitHosts(map[string]string{"hA": "ok", "hB": "ok", "hC": "ok", "hD": "ok"})

	want := "CU_NAME       TYPE          HOSTS\nrack1         rack          hA hB\nrack2         rack          hC hD\n"
	if got := m.must("", "bmgroup", "-cu"); got != want {
		t.Errorf("bmgroup -cu:\n%s\nwant:\n%s", got, want)
	}

	// First fit would take all of rack1 and two slots of rack2.
	id := m.submit("true", "-n", "6", "-R", "cu[balance]", "-o", "/dev/null")
	m.waitState(id, "DONE")
	if got := rackSlots(t, m.execHosts(id), rackOf); got["rack1"] != 3 || got["rack2"] != 3 {
		t.Errorf("cu[balance] -n 6: %v, want 3 slots in each rack", got)
	}

	// One slot of rack1 taken: a 4-slot job in one rack goes to rack2.
	sleeper := m.submit("sleep 60", "-n", "1", "-m", "hA", "-o", "/dev/null")
	m.waitStarted(sleeper)
	id = m.submit("true", "-n", "4", "-R", "cu[maxcus=1]", "-o", "/dev/null")
	m.waitState(id, "DONE")
	if got := rackSlots(t, m.execHosts(id), rackOf); got["rack2"] != 4 {
		t.Errorf("cu[maxcus=1] -n 4: %v, want all 4 slots in rack2", got)
	}
	id = m.submit("true", "-n", "5", "-R", "cu[maxcus=1]", "-o", "/dev/null")
	why := m.pendReason(id)
	if !strings.Contains(why, "cu[type=rack:maxcus=1]: the job needs 5 slots in at most 1 rack; free slots: rack1 3, rack2 4") {
		t.Errorf("cu[maxcus=1] -n 5: pending reason %q", why)
	}
	// Without maxcus the same job spans both racks.
	id2 := m.submit("true", "-n", "5", "-R", "cu[type=rack]", "-o", "/dev/null")
	m.waitState(id2, "DONE")
	m.must("", "bkill", id, sleeper)
	m.waitState(sleeper, "EXIT")

	// A cu[excl] job holds rack1 whole: its hosts are closed_cu_excl,
	// the one it runs on too; bhosts shows the condensed rack1 as one
	// line, -X host by host, and takes a unit's name for its hosts.
	ex := m.submit("sleep 60", "-n", "1", "-R", "cu[excl]", "-o", "/dev/null")
	m.waitStarted(ex)
	if got := rackSlots(t, m.execHosts(ex), rackOf); got["rack1"] != 1 {
		t.Fatalf("cu[excl] -n 1: %v, want rack1", got)
	}
	m.waitHosts(map[string]string{"hA": "closed_cu_excl", "hB": "closed_cu_excl", "hC": "ok", "hD": "ok"})
	out := m.must("", "bhosts", "-w")
	if !regexp.MustCompile(`(?m)^rack1 +closed_cu_excl +- +4 +1 +1 +0 +0 +0 *$`).MatchString(out) || strings.Contains(out, "hA") {
		t.Errorf("bhosts -w: want rack1 condensed, closed_cu_excl with 4 slots and 1 job:\n%s", out)
	}
	if out := m.must("", "bhosts", "rack1"); !strings.Contains(out, "rack1 ") || !strings.Contains(out, "closed") {
		t.Errorf("bhosts rack1:\n%s", out)
	}
	if out := m.must("", "bhosts", "-X", "rack1"); !strings.Contains(out, "hA") || !strings.Contains(out, "hB") || strings.Contains(out, "hC") {
		t.Errorf("bhosts -X rack1:\n%s", out)
	}
	m.must("", "bkill", ex)
	m.waitState(ex, "EXIT")
	m.waitHosts(map[string]string{"hA": "ok", "hB": "ok"})
}
