package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/store"
)

// acctConfig forgets finished jobs after a second; the queue "watched"
// reports jobs that exit within an hour as underrun.
const acctConfig = `
[cluster]
name = "test"
default_queue = "normal"
clean_period = "1s"

[hosts.hostA]

[queues.normal]
priority = 30

[queues.watched]
priority = 30
job_underrun = "1h"
`

// acctCluster is a controller on a state directory that outlives it.
type acctCluster struct {
	t    *testing.T
	dir  string
	conf string
	c    *Controller
	fx   *fakeExec
	stop func()
}

func newAcctCluster(t *testing.T, conf string) *acctCluster {
	a := &acctCluster{t: t, dir: t.TempDir(), conf: conf}
	a.start()
	t.Cleanup(func() { a.stop() })
	return a
}

func (a *acctCluster) start() {
	a.t.Helper()
	st, err := store.Open(a.dir)
	if err != nil {
		a.t.Fatal(err)
	}
	conf, err := config.Parse("test.toml", []byte(a.conf))
	if err != nil {
		a.t.Fatal(err)
	}
	fx := &fakeExec{running: map[key]bool{}, autoExit: 0}
	c, err := New(Config{Host: "hostA", Slots: 4, NCPUs: 4, Cluster: conf}, st, fx)
	if err != nil {
		a.t.Fatal(err)
	}
	fx.c = c
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	a.c, a.fx = c, fx
	a.stop = func() {
		if a.c == nil {
			return
		}
		cancel()
		<-done
		c.Close()
		st.Close()
		a.c = nil
	}
}

func (a *acctCluster) restart() {
	a.stop()
	a.start()
}

// acct runs an Accounting request and lists what came back as
// "id[idx] STATE", with the refs not found as "?id".
func (a *acctCluster) acct(who Caller, req *api.AcctRequest) []string {
	a.t.Helper()
	var out []string
	pages := 0
	err := a.c.Accounting(who, req, func(r *api.AcctReply) error {
		pages++
		for _, j := range r.Jobs {
			out = append(out, fmt.Sprintf("%d[%d] %s", j.JobId, j.ArrayIndex, j.State))
		}
		for _, ref := range r.NotFound {
			out = append(out, fmt.Sprintf("?%d", ref.JobId))
		}
		return nil
	})
	if err != nil {
		a.t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func (a *acctCluster) submit(who Caller, spec *api.JobSpec) int64 {
	a.t.Helper()
	spec.Env = []string{"A=1"}
	r, err := a.c.Submit(who, spec)
	if err != nil {
		a.t.Fatal(err)
	}
	return r.JobId
}

// Finished jobs are accounted when they end, stay accounted after clean()
// forgot them and after a restart, and the filters select among them.
func TestAcctOutlivesClean(t *testing.T) {
	a := newAcctCluster(t, acctConfig)
	bob := Caller{UID: 1001, GID: 1001}
	done := a.submit(alice, &api.JobSpec{Command: "true", JobName: "first"})
	arr := a.submit(alice, &api.JobSpec{Command: "true", JobName: "sweep", ArraySpec: "[1-3]", Project: "p1"})
	held := a.submit(alice, &api.JobSpec{Command: "true", Hold: true, Queue: "watched"})
	other := a.submit(bob, &api.JobSpec{Command: "true", Queue: "watched", JobGroup: "/g/sub"})
	waitFor(t, "jobs done", func() bool {
		return a.c.stateOf(done, 0) == api.JobState_DONE && a.c.stateOf(arr, 3) == api.JobState_DONE &&
			a.c.stateOf(other, 0) == api.JobState_DONE
	})
	// Killed while pending: accounted too, as LSF logs it.
	if rep := a.c.Signal(alice, &api.SignalRequest{Refs: []*api.JobRef{{JobId: held, ArrayIndex: -1}}}); rep.Results[0].Error != "" {
		t.Fatal(rep.Results[0].Error)
	}
	waitFor(t, "held job killed", func() bool { return a.c.stateOf(held, 0) == api.JobState_EXIT })

	rec := func(id int64, idx int32, s string) string { return fmt.Sprintf("%d[%d] %s", id, idx, s) }
	all := []string{rec(done, 0, "DONE"), rec(arr, 1, "DONE"), rec(arr, 2, "DONE"), rec(arr, 3, "DONE"), rec(held, 0, "EXIT"), rec(other, 0, "DONE")}
	mine := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == rec(other, 0, "DONE") })
	if got := a.acct(alice, &api.AcctRequest{AllUsers: true}); !slices.Equal(got, all) {
		t.Fatalf("before clean: %v, want %v", got, all)
	}

	// clean() forgets them (clean_period 1s); accounting keeps them.
	waitFor(t, "jobs forgotten", func() bool {
		return len(a.c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all"}).Jobs) == 0
	})
	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			name string
			who  Caller
			req  *api.AcctRequest
			want []string
		}{
			{"everyone", alice, &api.AcctRequest{AllUsers: true}, all},
			{"the caller's", alice, &api.AcctRequest{}, mine},
			{"bob's, asked by name", alice, &api.AcctRequest{Users: []string{userName(t, bob)}}, []string{rec(other, 0, "DONE")}},
			{"by id, whoever's", bob, &api.AcctRequest{Refs: []*api.JobRef{{JobId: arr, ArrayIndex: -1}, {JobId: 999, ArrayIndex: -1}}},
				[]string{rec(arr, 1, "DONE"), rec(arr, 2, "DONE"), rec(arr, 3, "DONE"), "?999"}},
			{"one element", alice, &api.AcctRequest{Refs: []*api.JobRef{{JobId: arr, ArrayIndex: 2}}}, []string{rec(arr, 2, "DONE")}},
			{"-e", alice, &api.AcctRequest{AllUsers: true, States: []api.JobState{api.JobState_EXIT}}, []string{rec(held, 0, "EXIT")}},
			{"-q", alice, &api.AcctRequest{AllUsers: true, Queues: []string{"watched"}}, []string{rec(held, 0, "EXIT"), rec(other, 0, "DONE")}},
			{"-P", alice, &api.AcctRequest{AllUsers: true, Projects: []string{"p1"}}, []string{rec(arr, 1, "DONE"), rec(arr, 2, "DONE"), rec(arr, 3, "DONE")}},
			{"-J wildcard", alice, &api.AcctRequest{AllUsers: true, Name: "sw*"}, []string{rec(arr, 1, "DONE"), rec(arr, 2, "DONE"), rec(arr, 3, "DONE")}},
			{"-J element", alice, &api.AcctRequest{AllUsers: true, Name: "sweep[2]"}, []string{rec(arr, 2, "DONE")}},
			{"-g takes subgroups", alice, &api.AcctRequest{AllUsers: true, JobGroup: "/g"}, []string{rec(other, 0, "DONE")}},
			{"-m", alice, &api.AcctRequest{AllUsers: true, Hosts: []string{"hostA"}, States: []api.JobState{api.JobState_EXIT}}, nil},
			{"-D: never dispatched", alice, &api.AcctRequest{AllUsers: true, Dispatched: &api.TimeRange{Start: 1}}, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == rec(held, 0, "EXIT") })},
			{"-C in the future", alice, &api.AcctRequest{AllUsers: true, Completed: &api.TimeRange{Start: time.Now().Add(time.Hour).UnixNano()}}, nil},
			{"-S up to the epoch", alice, &api.AcctRequest{AllUsers: true, Submitted: &api.TimeRange{Start: 0, End: 1}}, nil},
		} {
			if got := a.acct(c.who, c.req); !slices.Equal(got, c.want) {
				t.Errorf("%s, %s: got %v, want %v", when, c.name, got, c.want)
			}
		}
	}
	check("after clean")
	a.restart()
	check("after a restart")

	// A record keeps what bacct -l prints.
	var got *api.Job
	a.c.Accounting(alice, &api.AcctRequest{Refs: []*api.JobRef{{JobId: done, ArrayIndex: 0}}, Specs: true}, func(r *api.AcctReply) error {
		got = r.Jobs[0]
		return nil
	})
	if got.GetSpec().GetJobName() != "first" || got.GetSpec().GetCommand() != "true" || len(got.GetSpec().GetEnv()) != 0 ||
		got.GetEffective().GetQueue() != "normal" || got.GetStartTime() == 0 || len(got.GetExecHosts()) != 1 || got.GetUsage() == nil {
		t.Errorf("record %v", got)
	}
	// Without Specs only what the SUMMARY needs travels.
	a.c.Accounting(alice, &api.AcctRequest{Refs: []*api.JobRef{{JobId: done, ArrayIndex: 0}}}, func(r *api.AcctReply) error {
		got = r.Jobs[0]
		return nil
	})
	if got.Spec != nil || got.Effective != nil || got.EndTime == 0 {
		t.Errorf("summary record %v", got)
	}

	// Past the retention they are pruned.
	a.c.pruneAcct(time.Now().Add(time.Duration(config.DefaultAcctRetention)*time.Second + time.Minute))
	if got := a.acct(alice, &api.AcctRequest{AllUsers: true}); len(got) != 0 {
		t.Errorf("after pruning: %v", got)
	}
}

func userName(t *testing.T, who Caller) string {
	t.Helper()
	name, _ := lookupUser(who.UID)
	return name
}

// A job that exits early in a queue with job_underrun is recorded with
// the exception; -x selects it.
func TestAcctExceptions(t *testing.T) {
	a := newAcctCluster(t, acctConfig)
	a.fx.autoExit = 3
	under := a.submit(alice, &api.JobSpec{Command: "false", Queue: "watched"})
	plain := a.submit(alice, &api.JobSpec{Command: "false"})
	waitFor(t, "jobs exited", func() bool {
		return a.c.stateOf(under, 0) == api.JobState_EXIT && a.c.stateOf(plain, 0) == api.JobState_EXIT
	})
	if got := a.acct(alice, &api.AcctRequest{Exceptions: true}); !slices.Equal(got, []string{fmt.Sprintf("%d[0] EXIT", under)}) {
		t.Errorf("-x: %v", got)
	}
	var rec *api.Job
	a.c.Accounting(alice, &api.AcctRequest{Refs: []*api.JobRef{{JobId: under, ArrayIndex: -1}}}, func(r *api.AcctReply) error {
		rec = r.Jobs[0]
		return nil
	})
	if !slices.Equal(api.ExceptionNames(rec.GetExceptions()), []string{"underrun"}) || rec.ExitStatus != 3 {
		t.Errorf("record exceptions %v, exit %d", rec.GetExceptions(), rec.ExitStatus)
	}
}

// A finished job the controller still holds is accounted from memory;
// while clean() has stored its record but not yet forgotten it (or after
// a crash in between), it is counted once; so after a restart.
func TestAcctHeldOnce(t *testing.T) {
	a := newAcctCluster(t, `
[cluster]
name = "test"
default_queue = "normal"

[hosts.hostA]

[queues.normal]
priority = 30
`)
	id := a.submit(alice, &api.JobSpec{Command: "true", JobName: "held"})
	waitFor(t, "job done", func() bool { return a.c.stateOf(id, 0) == api.JobState_DONE })
	want := []string{fmt.Sprintf("%d[0] DONE", id)}
	if got := a.acct(alice, &api.AcctRequest{}); !slices.Equal(got, want) {
		t.Errorf("held: %v", got)
	}
	a.c.mu.Lock()
	recs := a.c.finishedRecords([]*api.Job{a.c.jobs[key{id, 0}].job})
	a.c.mu.Unlock()
	if n, err := a.c.store.AddAcct(recs); err != nil || n != 1 {
		t.Fatalf("storing the record: %d, %v", n, err)
	}
	for _, req := range []*api.AcctRequest{{}, {Refs: []*api.JobRef{{JobId: id, ArrayIndex: -1}}}, {Name: "held", Specs: true}} {
		if got := a.acct(alice, req); !slices.Equal(got, want) {
			t.Errorf("held and stored, %v: %v", req, got)
		}
	}
	a.restart()
	if got := a.acct(alice, &api.AcctRequest{}); !slices.Equal(got, want) {
		t.Errorf("after a restart: %v", got)
	}
	// A job that is not finished is known: not "not found", just no record.
	run := a.submit(alice, &api.JobSpec{Command: "true", Hold: true})
	if got := a.acct(alice, &api.AcctRequest{Refs: []*api.JobRef{{JobId: run, ArrayIndex: -1}}}); len(got) != 0 {
		t.Errorf("unfinished job: %v", got)
	}
}

// A job requeued after it finished and finished again has two records.
func TestAcctRequeuedJob(t *testing.T) {
	a := newAcctCluster(t, `
[cluster]
name = "test"
default_queue = "normal"

[hosts.hostA]

[queues.normal]
priority = 30
`)
	id := a.submit(alice, &api.JobSpec{Command: "true"})
	waitFor(t, "job done", func() bool { return a.c.stateOf(id, 0) == api.JobState_DONE })
	rep := a.c.Control(alice, &api.ControlRequest{Action: api.ControlRequest_REQUEUE, Refs: []*api.JobRef{{JobId: id, ArrayIndex: -1}},
		States: []api.JobState{api.JobState_DONE}})
	if len(rep.Results) != 1 || rep.Results[0].Error != "" {
		t.Fatalf("requeue: %v", rep.Results)
	}
	waitFor(t, "job done again", func() bool {
		return len(a.acct(alice, &api.AcctRequest{})) == 2
	})
}

// BenchmarkAccounting100k answers bacct over 100,000 stored records: -u
// all with the specs (what bacct -b and -l get), the SUMMARY's records
// alone, and a filter that keeps none (every record is still read).
func BenchmarkAccounting100k(b *testing.B) {
	st, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	conf, err := config.Parse("test.toml", []byte(testConfig))
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(Config{Host: "hostA", Slots: 4, NCPUs: 4, Cluster: conf}, st, &fakeExec{running: map[key]bool{}})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const n = 100000
	for id := int64(1); id <= n/1000; id++ {
		// The submitted spec each record gets a copy of.
		spec := &api.JobSpec{Command: "./run_simulation --input data/case.in", User: "user1", Uid: 1000, Queue: "normal",
			SubmitHost: "hostA", SubmitCwd: "/home/user1/work", ResReq: []string{"rusage[mem=1000]"}, Env: []string{"A=1"}}
		sub := &store.Submission{Spec: spec, EffectiveRaw: []byte{}}
		sub.Jobs = []*api.Job{{JobId: id, ArrayIndex: 1, State: api.JobState_PEND}}
		if err := st.Submit(sub); err != nil {
			b.Fatal(err)
		}
	}
	base := time.Now().Add(-24 * time.Hour).UnixNano()
	recs := make([]*api.Job, 0, n)
	for i := 0; i < n; i++ {
		end := base + int64(i)*1e8
		eff := &effSpec{queue: "normal", user: "user1", uid: 1000, project: "default", resReq: "rusage[mem=1000]"}
		j := &api.Job{JobId: int64(i/1000 + 1), ArrayIndex: int32(i%1000 + 1), State: api.JobState_DONE,
			SubmitTime: end - 3e10, StartTime: end - 2e10, EndTime: end,
			ExecHosts: []*api.HostSlots{{Host: "hostA", Slots: 1}}, ExecCwd: "/home/user1/work", ExecHome: "/home/user1",
			Usage: &api.ResourceUsage{CpuTimeMs: 15000, MaxMemKb: 204800, AvgMemKb: 102400}}
		recs = append(recs, acctRecord(conf, j, eff))
	}
	if _, err := st.AddAcct(recs); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		req  *api.AcctRequest
		want int
	}{
		{"all-specs", &api.AcctRequest{AllUsers: true, Specs: true}, n},
		{"all-summary", &api.AcctRequest{AllUsers: true}, n},
		{"none-match", &api.AcctRequest{Users: []string{"nobody"}}, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				got := 0
				err := c.Accounting(alice, bc.req, func(r *api.AcctReply) error {
					got += len(r.Jobs)
					return nil
				})
				if err != nil || got != bc.want {
					b.Fatalf("%d records, %v", got, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
		})
	}
}
