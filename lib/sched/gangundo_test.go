package sched

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestGangUndoMatchesRerun: a gang placed in part and taken back within
// the run (gangundo.go) leaves the decision a run without the gang gives:
// the same cycles with a limit that matches no job (which the trial does
// not take back, so the cycle runs again without the gang) decide the
// same, when one gang at most fits in part.
func TestGangUndoMatchesRerun(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 33))
	compared, taken := 0, 0
	for round := range 300 {
		var hs []Host
		for i := range 2 + r.IntN(6) {
			hs = append(hs, mkHost(fmt.Sprintf("h%02d %d", i, 1+r.IntN(4))))
		}
		s := snapshot(hs)
		q := "normal"
		switch round % 3 {
		case 1:
			// Fairshare: the users' counts are taken back too.
			s.Queues[0].Fairshare = &Fairshare{}
		case 2:
			s.Queues[0].HostSlotLimit = 2 // per-host counts
		}
		job := func(id int64) Job {
			rs := []string{"", "rusage[mem=4000]", "select[mem>2000] rusage[mem=6000]", "span[hosts=1]"}[r.IntN(4)]
			opts := []string{fmt.Sprintf("n=%d", 1+r.IntN(3)), "u=" + []string{"alice", "bob", "carol"}[r.IntN(3)], "q=" + q}
			if r.IntN(8) == 0 {
				opts = append(opts, "x")
			}
			if r.IntN(2) == 0 {
				opts = append(opts, fmt.Sprintf("W=%dm", 10+r.IntN(50)))
			}
			return mkJob(id, rs, opts...)
		}
		id := int64(0)
		for g := range 1 + r.IntN(3) {
			path := fmt.Sprintf("/g%d", g)
			n := 2 + r.IntN(4)
			s.GangGroups = append(s.GangGroups, GangGroup{path, n})
			for range n {
				id++
				s.Jobs = append(s.Jobs, inGroup(job(id), path))
			}
			for range r.IntN(3) {
				id++
				s.Jobs = append(s.Jobs, job(id))
			}
		}
		for i := range r.IntN(3) {
			s.Running = append(s.Running, mkRun(int64(100+i), fmt.Sprintf("dave normal 10m 1h %s*1", hs[r.IntN(len(hs))].Name), "rusage[mem=3000]", 0))
		}
		r.Shuffle(len(s.Jobs), func(i, j int) { s.Jobs[i], s.Jobs[j] = s.Jobs[j], s.Jobs[i] })
		undo := Schedule(s)
		s.Limits = []Limit{{Name: "none", Users: []string{"nobody"}, Slots: 1}}
		rerun := Schedule(s)
		if partialGangs(undo) > 1 || partialGangs(rerun) > 1 {
			continue // the runs again leave out gangs a run without the first would place
		}
		undo.Buckets, rerun.Buckets = 0, 0 // the gang's buckets count where it was tried
		if !reflect.DeepEqual(undo, rerun) {
			t.Fatalf("round %d: taking the gang back gives\n%+v\nrunning again without it\n%+v", round, undo, rerun)
		}
		compared++
		taken += partialGangs(undo)
	}
	if compared < 100 || taken < 30 {
		t.Errorf("a weak test: %d rounds compared, %d with a gang taken back", compared, taken)
	}
	t.Logf("%d rounds compared, %d with a gang taken back", compared, taken)
}

// partialGangs counts the gangs whose members say some but not all fit.
func partialGangs(d *Decision) int {
	seen := map[string]bool{}
	for _, lines := range d.Pending {
		if len(lines) > 0 && strings.HasPrefix(lines[0], "Gang group ") && !strings.Contains(lines[0], ": 0 of") && strings.Contains(lines[0], "can be placed now") {
			seen[lines[0]] = true
		}
	}
	return len(seen)
}
