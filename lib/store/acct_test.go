package store

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// acctRec is an accounting record as the controller builds it: the job
// without its submitted spec, with the effective values bacct reports.
func acctRec(id int64, idx int32, end int64, state api.JobState) *api.Job {
	return &api.Job{
		JobId: id, ArrayIndex: idx, State: state,
		SubmitTime: end - 30e9, StartTime: end - 20e9, EndTime: end,
		ExecHosts: []*api.HostSlots{{Host: "hostA", Slots: 1}},
		Usage:     &api.ResourceUsage{CpuTimeMs: 1500, MaxMemKb: 2048},
		Effective: &api.JobSpec{Queue: "normal", User: "user1", Project: "default"},
	}
}

// ids lists records as "id[idx]@end".
func ids(jobs []*api.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, fmt.Sprintf("%d[%d]@%d", j.JobId, j.ArrayIndex, j.EndTime))
	}
	return out
}

// scanAll pages through ScanAcct, pageSize records a call.
func scanAll(t *testing.T, st *Store, from, to int64, pageSize int) []*api.Job {
	t.Helper()
	var out []*api.Job
	var cursor []byte
	for calls := 0; ; calls++ {
		if calls > 1000 {
			t.Fatal("ScanAcct does not end")
		}
		n := 0
		next, err := st.ScanAcct(cursor, from, to, true, func(j *api.Job) bool {
			out = append(out, j)
			n++
			return n >= pageSize
		})
		if err != nil {
			t.Fatal(err)
		}
		if next == nil {
			return out
		}
		cursor = next
	}
}

func TestAcctRecords(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Job 5 has a submitted spec in the store; its record gets a copy.
	if err := st.Submit(submission(5, 1, []string{"SECRET=1"})); err != nil {
		t.Fatal(err)
	}
	if err := st.Submit(submission(6, 3, []string{"SECRET=1"})); err != nil {
		t.Fatal(err)
	}
	bad := acctRec(6, 1, 1, api.JobState_DONE)
	bad.Spec = &api.JobSpec{}
	if _, err := st.AddAcct([]*api.Job{bad}); err == nil {
		t.Error("a record carrying its submitted spec was stored")
	}
	if err := st.Apply([]Change{{Job: &api.Job{JobId: 6, ArrayIndex: 1}, Acct: bad}}); err == nil {
		t.Error("a record carrying its submitted spec was stored")
	}
	// A change can carry a record (brequeue of a finished job).
	requeued := &api.Job{JobId: 5, State: api.JobState_PEND, Seq: 9}
	if err := st.Apply([]Change{{Job: requeued, Event: &api.Event{JobId: 5, Type: api.EventType_PEND_AGAIN}, Acct: acctRec(5, 0, 5000, api.JobState_DONE)}}); err != nil {
		t.Fatal(err)
	}
	recs := []*api.Job{
		acctRec(6, 1, 1000, api.JobState_DONE),
		acctRec(6, 2, 3000, api.JobState_EXIT),
		acctRec(6, 3, 2000, api.JobState_DONE),
		acctRec(6, 2, 4000, api.JobState_DONE), // element 2 ran again
		acctRec(9, 0, 2000, api.JobState_EXIT), // no spec in the store
	}
	if n, err := st.AddAcct(recs); err != nil || n != 5 {
		t.Fatalf("AddAcct = %d, %v; want 5", n, err)
	}
	// Records already there are not written again.
	if n, err := st.AddAcct(append(recs, acctRec(5, 0, 5000, api.JobState_DONE))); err != nil || n != 0 {
		t.Fatalf("AddAcct again = %d, %v; want 0", n, err)
	}
	st.Close()

	// Everything survives a restart.
	st, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	all := []string{"6[1]@1000", "6[3]@2000", "9[0]@2000", "6[2]@3000", "6[2]@4000", "5[0]@5000"}
	for _, c := range []struct {
		name     string
		from, to int64
		page     int
		want     []string
	}{
		{"all in one page", 0, 0, 100, all},
		{"one a page", 0, 0, 1, all},
		{"pages of two", 0, 0, 2, all},
		{"from", 2000, 0, 100, all[1:]},
		{"to", 0, 2000, 3, all[:3]},
		{"between", 2001, 4000, 1, all[3:5]},
		{"none", 6000, 0, 10, nil},
		{"to before from", 3000, 1000, 10, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ids(scanAll(t, st, c.from, c.to, c.page)); !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}

	// Without the spec, records come the same but for it.
	var bare []*api.Job
	if _, err := st.ScanAcct(nil, 5000, 5000, false, func(j *api.Job) bool { bare = append(bare, j); return false }); err != nil {
		t.Fatal(err)
	}
	if len(bare) != 1 || bare[0].Spec != nil || !proto.Equal(bare[0].Effective, acctRec(5, 0, 5000, api.JobState_DONE).Effective) || bare[0].Usage.GetCpuTimeMs() != 1500 {
		t.Errorf("record without spec: %v", bare)
	}

	for _, c := range []struct {
		id   int64
		idx  int32
		want []string
	}{
		{6, -1, []string{"6[1]@1000", "6[2]@3000", "6[2]@4000", "6[3]@2000"}},
		{6, 2, []string{"6[2]@3000", "6[2]@4000"}},
		{6, 7, nil},
		{5, 0, []string{"5[0]@5000"}},
		{7, -1, nil},
	} {
		got, err := st.AcctOf(c.id, c.idx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), c.want) {
			t.Errorf("AcctOf(%d, %d) = %v, want %v", c.id, c.idx, ids(got), c.want)
		}
	}

	// The record carries the submitted spec, without the environment.
	got, _ := st.AcctOf(5, 0)
	if s := got[0].GetSpec(); s.GetCommand() != "true" || s.GetQueue() != "normal" || len(s.GetEnv()) != 0 {
		t.Errorf("record spec %v", s)
	}
	if !proto.Equal(got[0].Effective, acctRec(5, 0, 5000, api.JobState_DONE).Effective) || got[0].Usage.GetCpuTimeMs() != 1500 {
		t.Errorf("record %v", got[0])
	}
	if got, _ := st.AcctOf(9, 0); got[0].Spec != nil {
		t.Errorf("job 9 has no spec in the store; its record got %v", got[0].Spec)
	}

	// Pruning removes records that ended before the cutoff, and their
	// index entries.
	if n, err := st.PruneAcct(3000); err != nil || n != 3 {
		t.Fatalf("PruneAcct = %d, %v; want 3", n, err)
	}
	if got := ids(scanAll(t, st, 0, 0, 100)); !slices.Equal(got, all[3:]) {
		t.Errorf("after pruning: %v", got)
	}
	if got, _ := st.AcctOf(6, -1); !slices.Equal(ids(got), []string{"6[2]@3000", "6[2]@4000"}) {
		t.Errorf("after pruning, job 6: %v", ids(got))
	}
	if n, _ := st.PruneAcct(3000); n != 0 {
		t.Errorf("pruning again deleted %d", n)
	}
	// A pruned record may be added again (its job was forgotten late).
	if n, _ := st.AddAcct(recs[:1]); n != 1 {
		t.Errorf("re-adding a pruned record wrote %d", n)
	}
}

// BenchmarkAcctScan100k reads 100,000 accounting records of the size a
// plain job's has, decoding each (what bacct -u all costs the
// controller, before filtering and sending), with their submitted specs
// (bacct -b, -l) and without (the SUMMARY alone).
func BenchmarkAcctScan100k(b *testing.B) {
	st, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const n = 100000
	for id := int64(1); id <= n/1000; id++ {
		if err := st.Submit(submission(id, 1, []string{"A=1"})); err != nil {
			b.Fatal(err)
		}
	}
	recs := make([]*api.Job, 0, n)
	for i := 0; i < n; i++ {
		r := acctRec(int64(i/1000+1), int32(i%1000+1), int64(1e18)+int64(i)*1e9, api.JobState_DONE)
		r.Effective.ResReq = []string{"select[mem>100] rusage[mem=100]"}
		r.ExecCwd, r.ExecHome = "/home/user1/work/project", "/home/user1"
		recs = append(recs, r)
	}
	if _, err := st.AddAcct(recs); err != nil {
		b.Fatal(err)
	}
	for _, spec := range []bool{true, false} {
		name := "with-spec"
		if !spec {
			name = "summary"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				count := 0
				var cursor []byte
				for {
					page := 0
					next, err := st.ScanAcct(cursor, 0, 0, spec, func(*api.Job) bool { count++; page++; return page >= 1000 })
					if err != nil {
						b.Fatal(err)
					}
					if next == nil {
						break
					}
					cursor = next
				}
				if count != n {
					b.Fatalf("read %d records", count)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
		})
	}
}

// BenchmarkFinishBatch compares, for 100 jobs, the finish path's one
// synced transaction (Apply: the jobs' records and FINISH events) with the
// batch that writes their accounting records when the controller forgets
// them (AddAcct: a look-up, a read of the submitted spec and two keys each,
// one synced transaction). Writing the records in the finish transaction
// would add about the second to the first; the controller writes them in
// clean() instead.
func BenchmarkFinishBatch(b *testing.B) {
	const batch = 100
	setup := func(b *testing.B) *Store {
		st, err := Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		for id := int64(1); id <= batch; id++ {
			sub := submission(id, 1, []string{"A=1"})
			sub.Spec.Command = "./run_simulation --input data/case.in --steps 100000"
			sub.Spec.ResReq = []string{"select[mem>1000] rusage[mem=1000]"}
			sub.Spec.OutputFile = "/home/user1/logs/out.%J"
			if err := st.Submit(sub); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		return st
	}
	b.Run("finish", func(b *testing.B) {
		st := setup(b)
		defer st.Close()
		for i := 0; i < b.N; i++ {
			changes := make([]Change, 0, batch)
			for id := int64(1); id <= batch; id++ {
				end := int64(i)*1e9 + id
				j := &api.Job{JobId: id, State: api.JobState_DONE, Seq: int64(i*batch) + id, SubmitTime: end - 3e10, StartTime: end - 2e10, EndTime: end,
					ExecHosts: []*api.HostSlots{{Host: "hostA", Slots: 1}}, Usage: &api.ResourceUsage{CpuTimeMs: 1500, MaxMemKb: 2048}}
				changes = append(changes, Change{Job: j, Event: &api.Event{JobId: id, Type: api.EventType_FINISH, Time: end, State: j.State}})
			}
			if err := st.Apply(changes); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("acct-records", func(b *testing.B) {
		st := setup(b)
		defer st.Close()
		for i := 0; i < b.N; i++ {
			recs := make([]*api.Job, 0, batch)
			for id := int64(1); id <= batch; id++ {
				recs = append(recs, acctRec(id, 0, int64(i)*1e9+id, api.JobState_DONE))
			}
			if n, err := st.AddAcct(recs); err != nil || n != batch {
				b.Fatal(n, err)
			}
		}
	})
}

// Pruning a forgotten job's last accounting record deletes its specs and
// event log; a job still live, or with records left, keeps them.
func TestPruneDropsForgottenJobs(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []int64{1, 2, 3} {
		if err := st.Submit(submission(id, 1, []string{"A=1"})); err != nil {
			t.Fatal(err)
		}
	}
	// 1 and 2 are forgotten (past the clean period); 3 is live.
	if err := st.Forget([]*api.Job{{JobId: 1}, {JobId: 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddAcct([]*api.Job{acctRec(1, 0, 1000, api.JobState_DONE), acctRec(2, 0, 1000, api.JobState_DONE),
		acctRec(2, 0, 5000, api.JobState_DONE), acctRec(3, 0, 1000, api.JobState_DONE)}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.PruneAcct(2000); err != nil || n != 3 {
		t.Fatalf("PruneAcct = %d, %v; want 3", n, err)
	}
	kept := func(id int64) (spec bool, events int) {
		s, _, _ := st.Spec(id)
		evs, _ := st.Events(id, 0)
		return s != nil, len(evs)
	}
	if spec, evs := kept(1); spec || evs != 0 {
		t.Errorf("job 1 (forgotten, no record left) kept its spec %v and %d events", spec, evs)
	}
	if spec, evs := kept(2); !spec || evs == 0 {
		t.Errorf("job 2 (a record left) lost its spec (%v) or events (%d)", spec, evs)
	}
	if spec, evs := kept(3); !spec || evs == 0 {
		t.Errorf("job 3 (live) lost its spec (%v) or events (%d)", spec, evs)
	}
}
