package tests

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// A rolling upgrade of a highly available trio, as README's Installing
// says to do it: each candidate restarted in turn (SIGTERM, start again,
// wait until it follows), the standbys first and the leader last, while
// users submit and query all along. Every command succeeds and every
// acknowledged job is there once. (The binary is the same before and
// after: what is tested is that serving goes on through the restarts.)
func TestHARollingRestart(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 2)
	l := h.leader()
	h.waitFollowers(3)

	began := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var acked, failures []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := h.run(nil, "", "bsub", "-o", "/dev/null", "true")
			m := submittedRE.FindStringSubmatch(r.stdout)
			mu.Lock()
			if r.code != 0 || m == nil {
				failures = append(failures, fmt.Sprintf("bsub: exit %d: %s%s", r.code, r.stdout, r.stderr))
			} else {
				acked = append(acked, m[1])
			}
			mu.Unlock()
			if r := h.run(nil, "", "bjobs", "-a", "-u", "all", "-noheader", "-o", "jobid"); r.code != 0 {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("bjobs: exit %d: %s", r.code, r.stderr))
				mu.Unlock()
			}
		}
	}()
	order := []int{}
	for i := range h.cands {
		if i != l {
			order = append(order, i)
		}
	}
	order = append(order, l)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	// waitMore waits until n more submissions have gone through.
	waitMore := func(n int) {
		for want := count() + n; count() < want; {
			time.Sleep(20 * time.Millisecond)
			if time.Since(began) > 3*time.Minute {
				t.Fatalf("submissions stopped going through\n%s", h.logs())
			}
		}
	}
	waitMore(2)
	for _, i := range order {
		h.cands[i].stop()
		h.cands[i].start()
		h.leader()
		h.waitFollowers(3)
		waitMore(2)
	}
	close(stop)
	wg.Wait()

	if len(failures) > 0 {
		t.Errorf("%d commands failed during the rolling restart:\n%s\n%s", len(failures), strings.Join(failures, "\n"), h.logs())
	}
	if len(acked) == 0 {
		t.Fatal("no submission went through")
	}
	seen := map[string]int{}
	for _, id := range h.allJobIDs() {
		seen[id]++
	}
	for _, id := range acked {
		if seen[id] != 1 {
			t.Errorf("acknowledged job %s is shown %d times", id, seen[id])
		}
	}
	t.Logf("%d submissions acknowledged across %d restarts", len(acked), len(order))
}
