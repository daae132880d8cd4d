package replica

import (
	"path/filepath"
	"testing"
	"time"

	"xce/lib/store"
	"xce/lib/testenv"
)

// BenchmarkLoneWrite is the store path of one client's submission: a
// write through three candidates in this process (their stores opened as
// candidates' are, the raft log synced), beside the same write to one
// synced store, alternated write by write so that both see the same
// machine. It reports each one's median and what replication adds: about
// one fsync when the leader's and the followers' appends overlap
// (third_party/raft), two before. The processes, TLS and the API of
// tests/BenchmarkHA are left out.
func BenchmarkLoneWrite(b *testing.B) {
	const writes = 300
	addrs := freeAddrs(b, 3)
	var cs []*candidate
	for _, a := range addrs {
		c := &candidate{addr: a, dir: b.TempDir()}
		var err error
		if c.st, err = store.OpenReplica(filepath.Join(c.dir, "db"), false); err != nil {
			b.Fatal(err)
		}
		if err := c.start(b, addrs); err != nil {
			b.Fatal(err)
		}
		defer c.stop()
		cs = append(cs, c)
	}
	l := leaderOf(b, cs)
	one, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer one.Close()
	timed := func(st *store.Store, id int64) time.Duration {
		t0 := time.Now()
		if err := submit(st, id); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var single, replicated, added []float64
	id := int64(1)
	for range b.N {
		for range writes {
			s, r := timed(one, id), timed(l.st, id)
			id++
			single = append(single, ms(s))
			replicated = append(replicated, ms(r))
			added = append(added, ms(r-s))
		}
	}
	b.ReportMetric(testenv.Median(single), "ms-single")
	b.ReportMetric(testenv.Median(replicated), "ms-replicated")
	b.ReportMetric(testenv.Median(added), "ms-added")
	b.ReportMetric(0, "ns/op")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
