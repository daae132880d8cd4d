package tests

import (
	"math/rand"
	"sync"
	"testing"
	"time"
)

// haKills is how many leader kills TestFaultHALeaderKills makes: a fifth
// of -fault-restarts (one in make test, ten in make soak), as each kill
// waits for an election and for the killed candidate to catch up.
func haKills() int {
	return max(1, restarts()/5)
}

// The HA leader killed with SIGKILL again and again under a storm of
// submissions: after each kill another candidate leads, the killed one
// comes back as a standby, and every acknowledged job is listed exactly
// once by the leader of the moment.
func TestFaultHALeaderKills(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 2)
	h.waitFollowers(3)
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	n := haKills()

	var mu sync.Mutex
	acked := map[string]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := h.run([]string{"XCE_FAILOVER_TIMEOUT=30s"}, "", "bsub", "-H", "true")
				if m := submittedRE.FindStringSubmatch(r.stdout); r.code == 0 && m != nil {
					mu.Lock()
					acked[m[1]]++
					mu.Unlock()
				}
			}
		}()
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	survived, lost := 0, map[string]bool{}
	start := time.Now()
	defer func() {
		faultFigures(t, "HA leader kills", survived, n, count(), len(lost), seed, time.Since(start))
	}()
	var once sync.Once
	halt := func() { once.Do(func() { close(stop); wg.Wait() }) }
	defer halt()

	for round := 1; round <= n; round++ {
		time.Sleep(time.Duration(500+rng.Intn(1500)) * time.Millisecond)
		l := h.leader()
		killed := time.Now()
		h.cands[l].crash()
		before := count()
		for count() < before+4 {
			if time.Since(killed) > 60*time.Second {
				t.Fatalf("round %d: no submission acknowledged 60 s after the leader's kill\n%s", round, h.logs())
			}
			time.Sleep(50 * time.Millisecond)
		}
		h.cands[l].start()
		h.waitFollowers(3)

		// Every job acknowledged before the listing is asked for is in
		// it, once; one acknowledged meanwhile is checked next round.
		mu.Lock()
		var ids []string
		for id, k := range acked {
			if k != 1 {
				t.Errorf("round %d: job id %s acknowledged %d times", round, id, k)
			}
			ids = append(ids, id)
		}
		mu.Unlock()
		seen := map[string]int{}
		for _, id := range h.allJobIDs() {
			seen[id]++
		}
		for _, id := range ids {
			if seen[id] != 1 {
				t.Errorf("round %d: acknowledged job %s is listed %d times", round, id, seen[id])
				if seen[id] == 0 {
					lost[id] = true
				}
			}
		}
		if t.Failed() {
			break
		}
		survived++
	}
	// The last check, with the submitters stopped: every acknowledged
	// job is there exactly once.
	halt()
	seen := map[string]int{}
	for _, id := range h.allJobIDs() {
		seen[id]++
	}
	for id := range acked {
		if seen[id] != 1 {
			t.Errorf("acknowledged job %s is listed %d times", id, seen[id])
			if seen[id] == 0 {
				lost[id] = true
			}
		}
	}
}
