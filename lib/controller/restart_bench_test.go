package controller

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/store"
)

// The memory and restart figures of issue 13 in-process, where
// runtime.MemStats and a CPU profile see the controller alone (make bench
// measures the whole xced, by its RSS):
//
//	go test ./lib/controller/ -run '^$' -bench JobMemory -benchtime 1x
//	go test ./lib/controller/ -run '^$' -bench Restart -benchtime 3x
//
// BenchmarkJobMemory reports the Go heap a held job costs once submitted
// and once restored by a restart, after a GC; BenchmarkRestart the time
// from opening the store to the first full listing's reply, after a clean
// stop and after a crash (a copy of the store taken while it was open).

// benchSpec is a submission as bsub sends one: the same pattern each time.
func benchSpec() *api.JobSpec {
	env := []string{"HOME=/home/user1", "PATH=/usr/local/bin:/usr/bin:/bin", "TERM=xterm-256color", "SHELL=/bin/bash",
		"LANG=en_US.UTF-8", "USER=user1", "LOGNAME=user1", "PWD=/home/user1/work", "EDITOR=vi", "TZ=UTC"}
	return &api.JobSpec{Command: "./run_simulation --input data/case.in", Hold: true, SubmitCwd: "/home/user1/work",
		SubmitHost: "hostA", Env: env}
}

// fillStore submits n held jobs to a fresh store in dir through the
// controller (16 concurrent submitters), and leaves the store stopped
// cleanly; with crashCopy set it also copies the open store there first,
// as a crash would leave it.
func fillStore(b *testing.B, dir string, n int, crashCopy string) {
	st, err := store.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	c := benchController(b, st)
	var wg sync.WaitGroup
	const workers = 16
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if _, err := c.Submit(alice, benchSpec()); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if crashCopy != "" {
		if out, err := exec.Command("cp", "-a", "--sparse=always", dir, crashCopy).CombinedOutput(); err != nil {
			b.Fatalf("copy the open store: %v: %s", err, out)
		}
	}
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
}

func benchController(b *testing.B, st *store.Store) *Controller {
	conf, err := config.Parse("test.toml", []byte(testConfig))
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(Config{Host: "hostA", Slots: 4, NCPUs: 4, Cluster: conf}, st, &fakeExec{running: map[key]bool{}, autoExit: -1})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// listAll is bjobs -u all's request, answered whole.
func listAll(b *testing.B, c *Controller, want int) {
	got := 0
	err := c.QueryParts(alice, &api.QueryRequest{Scope: api.QueryRequest_UNFINISHED, User: "all"}, 10000, func(p *api.QueryReplyEncoded) error {
		got += len(p.Jobs)
		return nil
	})
	if err != nil || got != want {
		b.Fatalf("listing: %d jobs, %v; want %d", got, err, want)
	}
}

// BenchmarkJobMemory's figures, Go heap after a GC divided by the jobs:
// B/job-restored, the controller's restored records beside the store
// opened (the figure of a pending job); B/job-restored-with-store, with
// the store's own (its memtable, about 20 MB whatever it holds);
// B/job-submitted, after the submissions, with what the store's memtables
// hold at that moment.
func BenchmarkJobMemory(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			st, err := store.Open(filepath.Join(dir, "db"))
			if err != nil {
				b.Fatal(err)
			}
			c := benchController(b, st)
			listAll(b, c, 0)
			before := heapAlloc()
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < n; i += 16 {
						if _, err := c.Submit(alice, benchSpec()); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			listAll(b, c, n)
			filled := heapAlloc()
			runtime.KeepAlive(c)
			c.Close()
			st.Close()
			c = nil

			empty := heapAlloc()
			st, err = store.Open(filepath.Join(dir, "db"))
			if err != nil {
				b.Fatal(err)
			}
			base := heapAlloc()
			c = benchController(b, st)
			listAll(b, c, n)
			restored := heapAlloc()
			runtime.KeepAlive(c)
			st.Close()
			b.ReportMetric(float64(filled-before)/float64(n), "B/job-submitted")
			b.ReportMetric(float64(restored-base)/float64(n), "B/job-restored")
			b.ReportMetric(float64(restored-empty)/float64(n), "B/job-restored-with-store")
			b.ReportMetric(float64(base-empty)/1e6, "MB-store-open")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func BenchmarkRestart(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			clean, crashed := filepath.Join(dir, "db"), filepath.Join(dir, "crashed")
			fillStore(b, clean, n, crashed)
			for _, v := range []struct{ name, dir string }{{"clean", clean}, {"crash", crashed}} {
				b.Run(v.name, func(b *testing.B) { benchRestart(b, v.dir, v.name == "crash", n) })
			}
		})
	}
}

// benchRestart restarts on dir b.N times; a crashed store is started
// afresh from its copy each time, a clean one as the start before left it.
func benchRestart(b *testing.B, dir string, crashed bool, n int) {
	var total time.Duration
	for range b.N {
		from := dir
		if crashed {
			from = filepath.Join(b.TempDir(), "db")
			if out, err := exec.Command("cp", "-a", "--sparse=always", dir, from).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
		runtime.GC()
		began := time.Now()
		st, err := store.Open(from)
		if err != nil {
			b.Fatal(err)
		}
		c := benchController(b, st)
		listAll(b, c, n)
		total += time.Since(began)
		st.Close()
		if crashed {
			os.RemoveAll(from)
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/restart")
	b.ReportMetric(0, "ns/op")
}
