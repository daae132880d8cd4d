package tests

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A candidate's store applies the replicated log without syncing (the log
// is the durable record; lib/store's replica.go). These tests crash the
// candidates at each step of that path and take away the store's
// unsynced writes, and find every acknowledged job there exactly once.

// haStorm submits held jobs from several goroutines, failing over as the
// commands do, and counts each acknowledged job id.
type haStorm struct {
	mu    sync.Mutex
	acked map[string]int
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

func (h *ha) storm(goroutines int) *haStorm {
	s := &haStorm{acked: map[string]int{}, stop: make(chan struct{})}
	for range goroutines {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				select {
				case <-s.stop:
					return
				default:
				}
				r := h.run([]string{"XCE_FAILOVER_TIMEOUT=30s"}, "", "bsub", "-H", "true")
				if m := submittedRE.FindStringSubmatch(r.stdout); r.code == 0 && m != nil {
					s.mu.Lock()
					s.acked[m[1]]++
					s.mu.Unlock()
				}
			}
		}()
	}
	return s
}

func (s *haStorm) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.acked)
}

func (s *haStorm) halt() { s.once.Do(func() { close(s.stop); s.wg.Wait() }) }

// checkAcked lists the jobs and says which acknowledged ones are not
// there exactly once; it returns how many are missing.
func (h *ha) checkAcked(t *testing.T, s *haStorm, when string) int {
	t.Helper()
	s.mu.Lock()
	acked := map[string]int{}
	for id, k := range s.acked {
		acked[id] = k
	}
	s.mu.Unlock()
	seen := map[string]int{}
	for _, id := range h.allJobIDs() {
		seen[id]++
	}
	lost := 0
	for id, k := range acked {
		if k != 1 {
			t.Errorf("%s: job id %s acknowledged %d times", when, id, k)
		}
		if seen[id] != 1 {
			t.Errorf("%s: acknowledged job %s is listed %d times", when, id, seen[id])
			if seen[id] == 0 {
				lost++
			}
		}
	}
	return lost
}

// exited says whether the candidate's process has ended (by itself: it
// is not waited for yet).
func (c *candProc) exited() bool {
	if c.cmd == nil {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

var crashPoints = []string{"before-append", "after-append", "before-apply", "after-apply"}

// bringBack restarts every candidate that has ended until all of them
// answer as leader or follower. It goes on restarting while it waits: two
// candidates may reach their crash points with the same batch, and the
// second may still be on its way down (killed, not yet a zombie) when the
// first is noticed and the points are disarmed.
func (h *ha) bringBack() {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, c := range h.cands {
			if c.exited() {
				c.crash()
				c.start()
			}
		}
		out := h.run(nil, "", "lsid").stdout
		if strings.Count(out, "(follower)")+strings.Count(out, "(leader)") == len(h.cands) {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the candidates did not come back: %s\n%s", out, h.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Every candidate armed to kill itself at a step of the replicated write
// path (lib/replica's crash.go), each at a count of its own, under a
// storm of submissions: whichever dies first, leader or follower, comes
// back, its store is brought up to the log, and every acknowledged job is
// listed once. One pass over the steps in make test, more in make soak.
func TestFaultHACrashPoints(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 1)
	// The candidates read their crash point from a file of their own,
	// armed and disarmed while they run.
	armFile := func(c *candProc) string { return filepath.Join(c.dir, "crash-point") }
	for _, c := range h.cands {
		c.crash()
		c.env = []string{"XCE_REPLICA_CRASH=@" + armFile(c)}
		c.start()
	}
	h.waitFollowers(3)
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	passes := haKills()
	s := h.storm(4)
	defer s.halt()
	survived, lost := 0, 0
	start := time.Now()
	defer func() {
		faultFigures(t, "crashes at a step of the replicated apply", survived, passes*len(crashPoints), s.count(), lost, seed, time.Since(start))
	}()
	arm := func(c *candProc, v string) {
		if err := os.WriteFile(armFile(c), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for pass := 0; pass < passes; pass++ {
		for _, point := range crashPoints {
			for _, c := range h.cands {
				arm(c, fmt.Sprintf("%s:%d", point, 2+rng.Intn(10)))
			}
			deadline := time.Now().Add(60 * time.Second)
			for !h.cands[0].exited() && !h.cands[1].exited() && !h.cands[2].exited() {
				if time.Now().After(deadline) {
					t.Fatalf("%s: no candidate reached its crash point in 60 s (seed %d)\n%s", point, seed, h.logs())
				}
				time.Sleep(20 * time.Millisecond)
			}
			for _, c := range h.cands {
				arm(c, "")
			}
			h.bringBack()
			lost += h.checkAcked(t, s, point)
			if t.Failed() {
				t.Fatalf("seed %d\n%s", seed, h.logs())
			}
			survived++
		}
	}
	s.halt()
	lost += h.checkAcked(t, s, "at the end")
}

// A power cut takes what the stores wrote since they last synced: here,
// every candidate's store is put back to a copy of its files taken before
// a run of submissions, as if none of the writes since had reached the
// disk, while the raft logs (synced on every append) keep them. The
// candidates apply their logs again from the index each store records,
// and every acknowledged job is there once, with new job ids above them.
func TestFaultHAPowerCut(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 1)
	h.waitFollowers(3)
	first := h.submit("-H", "true")
	// Each candidate's store has applied the first job (so the
	// cluster's identity) before its files are copied: the followers
	// apply what the leader commits at its next heartbeat, well within
	// the pause.
	time.Sleep(500 * time.Millisecond)
	copies := filepath.Join(h.root, "copies")
	for i, c := range h.cands {
		copyTree(t, filepath.Join(c.dir, "db"), filepath.Join(copies, strconv.Itoa(i)))
	}
	s := h.storm(4)
	for s.count() < 60 {
		time.Sleep(20 * time.Millisecond)
	}
	s.halt()
	for _, c := range h.cands {
		c.crash()
	}
	for i, c := range h.cands {
		db := filepath.Join(c.dir, "db")
		if err := os.RemoveAll(db); err != nil {
			t.Fatal(err)
		}
		copyTree(t, filepath.Join(copies, strconv.Itoa(i)), db)
		c.start()
	}
	h.waitFollowers(3)
	if lost := h.checkAcked(t, s, "after the power cut"); lost > 0 {
		t.Fatalf("%d acknowledged jobs lost\n%s", lost, h.logs())
	}
	next, _ := strconv.Atoi(h.submit("-H", "true"))
	low, _ := strconv.Atoi(first)
	for id := range s.acked {
		if n, _ := strconv.Atoi(id); n >= next || n <= low {
			t.Errorf("job %d acknowledged during the storm; first job %d, next after the cut %d", n, low, next)
		}
	}
}
