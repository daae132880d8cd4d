package tests

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Fault injection: xced killed with SIGKILL during a submission storm,
// during dispatch, during reconfiguration and at random moments, then
// started again; after every restart every acknowledged job (bsub printed
// its id) is there exactly once, with a state and a history that agree.
//
// Each test restarts -fault-restarts times (5; `make soak` runs 50, or set
// XCE_FAULT_RESTARTS).

var faultRestarts = flag.Int("fault-restarts", 0, "restarts per fault-injection test (default 5, or $XCE_FAULT_RESTARTS)")

func restarts() int {
	if *faultRestarts > 0 {
		return *faultRestarts
	}
	if n, err := strconv.Atoi(os.Getenv("XCE_FAULT_RESTARTS")); err == nil && n > 0 {
		return n
	}
	return 5
}

// ledger is the jobs bsub acknowledged.
type ledger struct {
	mu    sync.Mutex
	acked map[string]bool
	t     *testing.T
}

func newLedger(t *testing.T) *ledger { return &ledger{acked: map[string]bool{}, t: t} }

func (l *ledger) add(stdout string) {
	m := submittedRE.FindStringSubmatch(stdout)
	if m == nil {
		l.t.Errorf("bsub said %q", stdout)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.acked[m[1]] {
		l.t.Errorf("job id %s acknowledged twice", m[1])
	}
	l.acked[m[1]] = true
}

func (l *ledger) ids() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for id := range l.acked {
		out = append(out, id)
	}
	return out
}

// storm runs submitters until stop is closed: short jobs that finish
// (their ends race the crash and the restart) and held ones.
func storm(c *cluster, l *ledger, workers int, stop chan struct{}, wg *sync.WaitGroup) {
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				args := []string{"true"}
				if (i+w)%3 == 0 {
					args = []string{"-H", "true"}
				}
				r := c.run("", "bsub", args...)
				if r.code == 0 {
					l.add(r.stdout)
				}
			}
		}(w)
	}
}

var bhistJobRE = regexp.MustCompile(`(?m)^Job <(\d+)>`)

// checkLedger checks that every acknowledged job is listed exactly once by
// bjobs and by bhist, and that its history agrees with its state. It
// returns the acknowledged jobs bjobs does not list.
func checkLedger(c *cluster, l *ledger, round int) (lost []string) {
	c.t.Helper()
	ids := l.ids()
	if len(ids) == 0 {
		return nil
	}
	// States before and after the histories: a job that ends between
	// two queries is not an inconsistency, so states are compared only
	// for the jobs that did not change meanwhile.
	seen, before := listJobs(c)
	hist := c.must("", "bhist", append([]string{"-l"}, ids...)...)
	_, after := listJobs(c)
	state := map[string]string{}
	for id, st := range before {
		if after[id] == st {
			state[id] = st
		}
	}
	for _, id := range ids {
		if seen[id] != 1 {
			c.t.Errorf("round %d: acknowledged job %s is listed %d times by bjobs", round, id, seen[id])
			if seen[id] == 0 {
				lost = append(lost, id)
			}
		}
	}
	for id, n := range seen {
		if n != 1 {
			c.t.Errorf("round %d: job %s listed %d times", round, id, n)
		}
	}
	// One bhist -l for them all: each job's history once, submitted once,
	// ended at most once, and as bjobs says.
	blocks := map[string]string{}
	locs := bhistJobRE.FindAllStringSubmatchIndex(hist, -1)
	for i, loc := range locs {
		end := len(hist)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		id := hist[loc[2]:loc[3]]
		if _, dup := blocks[id]; dup {
			c.t.Errorf("round %d: bhist shows job %s twice", round, id)
		}
		blocks[id] = strings.Join(strings.Fields(hist[loc[0]:end]), " ")
	}
	for _, id := range ids {
		b, ok := blocks[id]
		if !ok {
			c.t.Errorf("round %d: bhist has no history of acknowledged job %s", round, id)
			continue
		}
		if n := strings.Count(b, "Submitted from host"); n != 1 {
			c.t.Errorf("round %d: job %s submitted %d times in its history: %s", round, id, n, b)
		}
		done, exited := strings.Count(b, "Done successfully"), strings.Count(b, "Exited")
		switch st, ok := state[id]; {
		case !ok:
		case st == "DONE":
			if done != 1 || exited != 0 {
				c.t.Errorf("round %d: job %s is DONE, its history: %s", round, id, b)
			}
		case st == "EXIT":
			if exited != 1 || done != 0 {
				c.t.Errorf("round %d: job %s is EXIT, its history: %s", round, id, b)
			}
		case st == "PEND" || st == "PSUSP" || st == "RUN":
			if done+exited != 0 {
				c.t.Errorf("round %d: job %s is %s, its history says it ended: %s", round, id, st, b)
			}
		}
	}
	return lost
}

// listJobs returns how many times bjobs lists each job, and its state.
func listJobs(c *cluster) (map[string]int, map[string]string) {
	c.t.Helper()
	out := c.must("", "bjobs", "-a", "-u", "all", "-noheader", "-o", "jobid stat")
	seen, state := map[string]int{}, map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 {
			seen[f[0]]++
			state[f[0]] = f[1]
		}
	}
	return seen, state
}

// faultLoop runs rounds of: load (started by during), a kill -9 at a random
// moment, a restart, the ledger check. It reports the figures.
func faultLoop(t *testing.T, c *cluster, l *ledger, during func(stop chan struct{}, wg *sync.WaitGroup)) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	n := restarts()
	survived, lost := 0, map[string]bool{}
	start := time.Now()
	defer func() {
		faultFigures(t, "kill -9 restarts", survived, n, len(l.ids()), len(lost), seed, time.Since(start))
	}()
	for round := 1; round <= n; round++ {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		during(stop, &wg)
		time.Sleep(time.Duration(100+rng.Intn(900)) * time.Millisecond)
		c.crash()
		time.Sleep(time.Duration(rng.Intn(200)) * time.Millisecond)
		close(stop)
		wg.Wait()
		c.start()
		for _, id := range checkLedger(c, l, round) {
			lost[id] = true
		}
		if t.Failed() {
			break
		}
		survived++
	}
}

// faultFigures prints one test's figures on one line of a fixed form, for
// a report to quote (grep 'fault figures:' in `make soak`'s output). A
// restart survived is one after which every acknowledged job was still
// listed once; lost counts each acknowledged job missing at least once.
func faultFigures(t *testing.T, what string, survived, of, acked, lost int, seed int64, took time.Duration) {
	t.Logf("fault figures: %s: %d of %d %s survived; %d acknowledged jobs, %d lost; %s, seed %d",
		t.Name(), survived, of, what, acked, lost, took.Round(time.Second), seed)
}

func TestFaultKillDuringSubmissionStorm(t *testing.T) {
	c := newCluster(t)
	l := newLedger(t)
	faultLoop(t, c, l, func(stop chan struct{}, wg *sync.WaitGroup) { storm(c, l, 4, stop, wg) })
}

// Kill -9 while jobs are being dispatched and are finishing: their ends
// are reported by the worker as the restarted controller comes up (the
// restart panic of issue 11), and every job still runs to its end.
func TestFaultKillDuringDispatch(t *testing.T) {
	c := newCluster(t)
	l := newLedger(t)
	faultLoop(t, c, l, func(stop chan struct{}, wg *sync.WaitGroup) {
		for i := 0; i < 40; i++ {
			r := c.run("", "bsub", "sleep 0.0$RANDOM")
			if r.code == 0 {
				l.add(r.stdout)
			}
		}
	})
	for _, id := range l.ids() {
		c.waitState(id, "DONE")
	}
}

// Kill -9 while badmin reconfig runs, with submissions going on.
func TestFaultKillDuringReconfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	writeConfig(t, path, "\n[queues.short]\npriority = 40\n")
	c := newCluster(t, "--config", path)
	l := newLedger(t)
	var flip atomic.Int32
	faultLoop(t, c, l, func(stop chan struct{}, wg *sync.WaitGroup) {
		storm(c, l, 2, stop, wg)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				limit := 1 + flip.Add(1)%3
				writeConfig(t, path, fmt.Sprintf("\n[queues.short]\npriority = 40\nmax_slots_per_user = %d\n", limit))
				c.run("", "badmin", "reconfig")
			}
		}()
	})
}

// Kill -9 at random moments of a mixed workload: submissions, kills,
// holds released, queries.
func TestFaultKillAtRandomMoments(t *testing.T) {
	c := newCluster(t)
	l := newLedger(t)
	faultLoop(t, c, l, func(stop chan struct{}, wg *sync.WaitGroup) {
		storm(c, l, 2, stop, wg)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ids := l.ids()
				if len(ids) == 0 {
					continue
				}
				id := ids[i%len(ids)]
				switch i % 3 {
				case 0:
					c.run("", "bkill", id)
				case 1:
					c.run("", "bresume", id)
				default:
					c.run("", "bjobs", "-a", id)
				}
			}
		}()
	})
}
