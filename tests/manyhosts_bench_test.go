package tests

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/clusterauth"
	"xce/lib/version"
	"xce/tools/loadgen"
)

var (
	manyHosts       = flag.Int("many-hosts", 10000, "BenchmarkManyHosts: the simulated hosts")
	manyHostsWindow = flag.Duration("many-hosts-window", 20*time.Second, "BenchmarkManyHosts: how long the controller's CPU is measured each time")
)

// manyHostsGrace is the cluster's host_unavail_grace in BenchmarkManyHosts.
const manyHostsGrace = 3 * time.Second

// BenchmarkManyHosts (issue 32): one controller and -many-hosts (10,000)
// simulated hosts of one slot each from tools/loadgen, each a real worker
// session (TLS, the cluster token, registration, a load every 5 s, job
// starts and ends reported). Measured, each beside its reference in the
// same run: the controller's CPU (share of one core) and RSS with the
// hosts heartbeating, against the same controller with no hosts; with
// every host running a job; the time from a new host's registration to
// its first job (a job pending because every host is full), from a load
// sent to the controller's host list showing it, and from a host's loss
// to `unavail` in bhosts, at 10 hosts and at the full count.
func BenchmarkManyHosts(b *testing.B) {
	n := *manyHosts
	const ref = 10
	if n <= ref {
		b.Fatalf("-many-hosts %d: more than %d needed", n, ref)
	}
	addr := freePort(b)
	conf := filepath.Join(b.TempDir(), "cluster.toml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "[cluster]\nhost_unavail_grace = %q\n\n[hosts.%s]\nserver = false\n",
		manyHostsGrace.String(), benchHostName()), 0o644); err != nil {
		b.Fatal(err)
	}
	c := newBenchCluster(b, "--listen", addr, "--config", conf)
	pid := c.cmd.Process.Pid
	tok, err := clusterauth.LoadToken(filepath.Join(c.state, "cluster.token"))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := loadgen.New(ctx, loadgen.Config{Controller: addr, Token: tok, Version: version.Short()})
	defer g.Close()
	first := firstStarts(g)

	// The controller alone.
	cpu0, rss0 := cpuShare(b, pid, *manyHostsWindow), c.rssKB()

	// Ten hosts: the references of a new host's first job and of a
	// lost host.
	if err := g.AddMany(hostNames("ref-", ref), ref); err != nil {
		b.Fatal(err)
	}
	fill(b, c, g, "ref", ref)
	joinRef := firstJobAfterJoin(b, c, g, first, "ref-new")
	seenRef := heartbeatVisible(b, c, g, "ref-0002")
	lossRef := lossToUnavail(b, c, g, "ref-0001")

	// The full count.
	began := time.Now()
	if err := g.AddMany(hostNames("sim-", n-ref), 64); err != nil {
		b.Fatal(err)
	}
	regRate := float64(n-ref) / time.Since(began).Seconds()
	time.Sleep(5*time.Second + time.Second) // every host has sent its load since
	cpuN, rssN := cpuShare(b, pid, *manyHostsWindow), c.rssKB()
	dispBegan := time.Now()
	fill(b, c, g, "sim", n-ref)
	dispRate := float64(n-ref) / time.Since(dispBegan).Seconds()
	cpuBusy := cpuShare(b, pid, *manyHostsWindow)
	joinN := firstJobAfterJoin(b, c, g, first, "sim-new")
	seenN := heartbeatVisible(b, c, g, "sim-0002")
	lossN := lossToUnavail(b, c, g, "sim-0001")
	if _, _, errs := g.Counts(); errs > 0 {
		b.Errorf("%d simulated host sessions failed; the last: %v", errs, g.LastError())
	}

	N := fmt.Sprintf("%d hosts", n)
	report(b, "controller CPU, no hosts (reference)", 100*cpu0, "%core-idle", nil)
	report(b, "controller CPU, "+N+" heartbeating", 100*cpuN, "%core", atMost(25))
	report(b, "controller CPU, "+N+" each running a job", 100*cpuBusy, "%core-busy", nil)
	report(b, "controller RSS, no hosts (reference)", rss0/1024, "MB-idle", nil)
	report(b, "controller RSS, "+N, rssN/1024, "MB", nil)
	report(b, "  RSS per host", (rssN-rss0)/float64(n), "KB/host", nil)
	report(b, "hosts registered per second", regRate, "hosts/s", nil)
	report(b, "jobs dispatched per second to "+N, dispRate, "jobs/s", nil)
	report(b, "heartbeat to visible (median), 10 hosts (ref)", ms(seenRef), "ms-seen-ref", nil)
	report(b, "heartbeat to visible (median), "+N, ms(seenN), "ms-seen", nil)
	report(b, "new host to its first job, 10 hosts (ref)", ms(joinRef), "ms-ref", nil)
	report(b, "new host to its first job, "+N, ms(joinN), "ms", atMost(1000))
	target := ms(manyHostsGrace + time.Second)
	report(b, "host loss to unavail (grace 3 s), 10 hosts (ref)", ms(lossRef), "ms-loss-ref", atMost(target))
	report(b, "host loss to unavail (grace 3 s), "+N, ms(lossN), "ms-loss", atMost(target))
}

func benchHostName() string {
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	return host
}

func hostNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%04d", prefix, i+1)
	}
	return out
}

// firstStarts follows the generator's dispatches: the first job start
// each host received, and when.
func firstStarts(g *loadgen.Gen) *sync.Map {
	var m sync.Map
	go func() {
		for s := range g.Starts {
			m.LoadOrStore(s.Host, s.At)
		}
	}()
	return &m
}

// cpuShare is the controller's CPU time over a window, as a share of one
// core.
func cpuShare(b *testing.B, pid int, window time.Duration) float64 {
	c0, t0 := cpuTime(b, pid), time.Now()
	time.Sleep(window)
	return float64(cpuTime(b, pid)-c0) / float64(time.Since(t0))
}

// fill submits n jobs that run until killed (arrays of at most 1,000)
// and waits until the simulated hosts have started them all.
func fill(b *testing.B, c *benchCluster, g *loadgen.Gen, name string, n int) {
	b.Helper()
	started0, _, _ := g.Counts()
	for left, k := n, 0; left > 0; k++ {
		m := min(left, 1000)
		c.submit("-J", fmt.Sprintf("%s%d[1-%d]", name, k, m), "-o", "/dev/null", "sleep 100000")
		left -= m
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		started, _, _ := g.Counts()
		if started-started0 >= int64(n) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d jobs started in 10 minutes\nxced:\n%s", started-started0, n, c.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// firstJobAfterJoin submits a job that pends (every host is full), then
// registers a host, and returns the time from its welcome to the job's
// dispatch arriving there.
func firstJobAfterJoin(b *testing.B, c *benchCluster, g *loadgen.Gen, first *sync.Map, name string) time.Duration {
	b.Helper()
	id := c.submit("-o", "/dev/null", "sleep 100000")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var out bytes.Buffer
		c.run(&out, "bjobs", "-noheader", "-o", "stat", fmt.Sprint(id))
		if strings.TrimSpace(out.String()) == "PEND" {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("job %d is not pending (%q): the hosts are not full", id, out.String())
		}
	}
	joined, err := g.Add(name)
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if at, ok := first.Load(name); ok {
			return at.(time.Time).Sub(joined)
		}
		if time.Now().After(deadline) {
			b.Fatalf("the new host %s got no job in a minute\nxced:\n%s", name, c.logTail())
		}
	}
}

// heartbeatVisible sends loads of a host with new values and returns the
// median time until the controller's host list (what lsload and bhosts
// read) shows each.
func heartbeatVisible(b *testing.B, c *benchCluster, g *loadgen.Gen, name string) time.Duration {
	b.Helper()
	cl := c.dial()
	defer cl.Close()
	const samples = 21
	ds := make([]time.Duration, 0, samples)
	for i := range samples {
		v := 10 + float64(i)/4
		sent := time.Now()
		if err := g.SendLoad(name, v); err != nil {
			b.Fatal(err)
		}
		for deadline := sent.Add(30 * time.Second); ; {
			reply, err := cl.ListHosts(context.Background(), &api.ListHostsRequest{Names: []string{name}})
			if err != nil {
				b.Fatal(err)
			}
			if hs := reply.GetHosts(); len(hs) == 1 && hs[0].GetR15S() == v {
				ds = append(ds, time.Since(sent))
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("the load of %s sent was not visible in 30 s", name)
			}
		}
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// lossToUnavail ends a host's session and returns how long bhosts took
// to show it unavail.
func lossToUnavail(b *testing.B, c *benchCluster, g *loadgen.Gen, name string) time.Duration {
	b.Helper()
	lost := time.Now()
	g.Drop(name)
	for deadline := lost.Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var out bytes.Buffer
		c.run(&out, "bhosts", "-w", name)
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == name && f[1] == "unavail" {
				return time.Since(lost)
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s not unavail a minute after its loss:\n%s", name, out.String())
		}
	}
}
