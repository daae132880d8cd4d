package tests

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// kill -9 of xced while clients submit: after the restart every job whose
// submission was acknowledged is there exactly once.
func TestCrashWhileSubmitting(t *testing.T) {
	c := newCluster(t)
	var mu sync.Mutex
	acked := map[string]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := c.run("", "bsub", "-H", "true")
				if r.code != 0 {
					continue
				}
				m := submittedRE.FindStringSubmatch(r.stdout)
				if m == nil {
					t.Errorf("bsub said %q", r.stdout)
					return
				}
				mu.Lock()
				if acked[m[1]] {
					t.Errorf("job id %s acknowledged twice", m[1])
				}
				acked[m[1]] = true
				mu.Unlock()
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	c.crash()
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	c.start()
	out := c.must("", "bjobs", "-a", "-u", "all", "-noheader", "-o", "jobid")
	seen := map[string]int{}
	for _, id := range strings.Fields(out) {
		seen[id]++
	}
	if len(acked) == 0 {
		t.Fatal("no submission was acknowledged before the crash")
	}
	for id := range acked {
		if seen[id] != 1 {
			t.Errorf("acknowledged job %s is there %d times after the restart", id, seen[id])
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("job %s listed %d times", id, n)
		}
	}
	t.Logf("%d acknowledged submissions, %d jobs after the restart", len(acked), len(seen))
}
