package store

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

func submission(id int64, n int, env []string) *Submission {
	s := &Submission{
		Spec:         &api.JobSpec{Command: "true", Env: env, Queue: "normal"},
		EffectiveRaw: mustMarshal(&api.JobSpec{Command: "true", Queue: "normal"}),
	}
	for i := 0; i < n; i++ {
		idx := int32(0)
		if n > 1 {
			idx = int32(i + 1)
		}
		s.Jobs = append(s.Jobs, &api.Job{JobId: id, ArrayIndex: idx, State: api.JobState_PEND, Seq: int64(i + 1)})
		s.Events = append(s.Events, &api.Event{JobId: id, ArrayIndex: idx, Type: api.EventType_SUBMIT})
	}
	return s
}

// Everything written comes back after a reopen, with specs shared by an
// array's elements and the environment restored by reference.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"A=1", "B=two"}
	if err := st.Submit(submission(7, 1, env)); err != nil {
		t.Fatal(err)
	}
	if err := st.Submit(submission(8, 3, env)); err != nil {
		t.Fatal(err)
	}
	run := &api.Job{JobId: 7, State: api.JobState_RUN, Seq: 10, ExecHosts: []*api.HostSlots{{Host: "h", Slots: 1}}}
	if err := st.Apply([]Change{{Job: run, Event: &api.Event{JobId: 7, Type: api.EventType_START}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Apply([]Change{{Job: &api.Job{JobId: 7, Spec: &api.JobSpec{}}}}); err == nil {
		t.Error("a record carrying its spec was stored")
	}
	if err := st.SetIDCeiling(2000); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Jobs) != 4 {
		t.Fatalf("%d jobs, want 4", len(l.Jobs))
	}
	if !proto.Equal(l.Jobs[0], run) {
		t.Errorf("job 7 = %v, want %v", l.Jobs[0], run)
	}
	eff := &api.JobSpec{}
	if err := proto.Unmarshal(l.Effective[8], eff); err != nil || eff.Command != "true" || len(l.Effective) != 2 {
		t.Errorf("effective specs %v", l.Effective)
	}
	spec, _, err := st.Spec(7)
	if err != nil || spec.Env != nil || spec.Queue != "normal" {
		t.Fatalf("spec %v %v", spec, err)
	}
	got, err := st.Env(spec.EnvRef)
	if err != nil || len(got) != 2 || got[1] != "B=two" {
		t.Errorf("env %v %v", got, err)
	}
	evs, err := st.Events(7, 0)
	if err != nil || len(evs) != 2 || evs[1].Type != api.EventType_START {
		t.Errorf("events %v %v", evs, err)
	}
	all, _ := st.Events(8, -1)
	if len(all) != 3 {
		t.Errorf("array events %d, want 3", len(all))
	}
	if c, _ := st.IDCeiling(); c != 2000 {
		t.Errorf("ceiling %d", c)
	}
	if err := st.Forget([]*api.Job{run}); err != nil {
		t.Fatal(err)
	}
	l, _ = st.Load()
	if len(l.Jobs) != 3 {
		t.Errorf("after Forget %d jobs, want 3", len(l.Jobs))
	}
	if evs, _ := st.Events(7, 0); len(evs) != 2 {
		t.Errorf("Forget dropped the event log")
	}
}

// Concurrent submissions all land.
func TestConcurrentSubmit(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := st.Submit(submission(int64(w*100+i+1), 1, []string{"X=1"})); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	l, err := st.Load()
	if err != nil || len(l.Jobs) != 400 {
		t.Fatalf("%d jobs, %v", len(l.Jobs), err)
	}
}

func BenchmarkSubmitParallel(b *testing.B) {
	st, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var mu sync.Mutex
	next := int64(0)
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			next++
			id := next
			mu.Unlock()
			if err := st.Submit(submission(id, 1, []string{"X=1"})); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func mustMarshal(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// A submission the store cannot take (here: a spec larger than Badger's
// largest value) fails whole: none of its jobs is stored, and submissions
// that shared its batch are stored all the same.
func TestFailedSubmitWritesNothing(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	huge := submission(1, 3, []string{"A=1"})
	huge.Spec.Command = strings.Repeat("x", valueLogFileSize+1)
	var wg sync.WaitGroup
	var hugeErr, smallErr error
	wg.Add(2)
	go func() { defer wg.Done(); hugeErr = st.Submit(huge) }()
	go func() { defer wg.Done(); smallErr = st.Submit(submission(2, 1, []string{"A=1"})) }()
	wg.Wait()
	if hugeErr == nil {
		t.Fatal("an oversized submission was accepted")
	}
	if smallErr != nil {
		t.Fatalf("the other submission failed too: %v", smallErr)
	}
	l, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Jobs) != 1 || l.Jobs[0].JobId != 2 {
		t.Errorf("after the failed submission the store holds %d jobs", len(l.Jobs))
	}
	if evs, _ := st.Events(1, -1); len(evs) != 0 {
		t.Errorf("%d events of the failed submission were stored", len(evs))
	}
}

// A store another process still holds (a controller killed with -9 whose
// locks the kernel has not released yet) is waited for, not reported as
// damaged: Open returns once the holder lets go.
func TestOpenWaitsForHolder(t *testing.T) {
	dir := t.TempDir()
	first, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		released <- first.Close()
	}()
	second, err := Open(dir)
	if cerr := <-released; cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatalf("open while the first holder closes: %v", err)
	}
	second.Close()
}

// A store held past the wait is refused as in use, not as damaged.
func TestOpenHeldIsInUse(t *testing.T) {
	defer func(w time.Duration) { lockWait = w }(lockWait)
	lockWait = 100 * time.Millisecond
	dir := t.TempDir()
	first, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = Open(dir)
	var d *DamageError
	if err == nil || errors.As(err, &d) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("open of a held store: %v, want an in-use error", err)
	}
}

// Load reads jobs whose ids span several of its ranges, with the specs of
// forgotten jobs lying between the live ones' (stepped over, and sought
// past where many are gone), and shares equal effective encodings.
func TestLoadRanges(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 5 * minLoadRange
	var gone []*api.Job
	want := map[int64]string{}
	for id := int64(1); id <= n; id += 3 {
		sub := submission(id, 1+int(id%4), nil)
		cmd := []string{"a", "b"}[id%2] // two submission patterns
		sub.EffectiveRaw = mustMarshal(&api.JobSpec{Command: cmd})
		if err := st.Submit(sub); err != nil {
			t.Fatal(err)
		}
		// Every job of the second quarter and every fifth elsewhere is
		// forgotten: its effective spec stays in the store.
		if id > n/4 && id <= n/2 || id%5 == 0 {
			gone = append(gone, sub.Jobs...)
		} else {
			want[id] = cmd
		}
	}
	if err := st.Forget(gone); err != nil {
		t.Fatal(err)
	}
	l, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	var last *api.Job
	jobs := 0
	for _, j := range l.Jobs {
		if last != nil && (j.JobId < last.JobId || j.JobId == last.JobId && j.ArrayIndex <= last.ArrayIndex) {
			t.Fatalf("job %d.%d after %d.%d", j.JobId, j.ArrayIndex, last.JobId, last.ArrayIndex)
		}
		last = j
		if _, ok := want[j.JobId]; !ok {
			t.Fatalf("job %d loaded, want it forgotten", j.JobId)
		}
		jobs++
	}
	wantJobs := 0
	for id := range want {
		wantJobs += 1 + int(id%4)
	}
	if jobs != wantJobs || len(l.Effective) != len(want) {
		t.Fatalf("%d jobs and %d specs, want %d and %d", jobs, len(l.Effective), wantJobs, len(want))
	}
	distinct := map[*byte]bool{}
	for id, cmd := range want {
		spec := &api.JobSpec{}
		if err := proto.Unmarshal(l.Effective[id], spec); err != nil || spec.Command != cmd {
			t.Fatalf("job %d: effective %v %v, want command %q", id, spec, err, cmd)
		}
		distinct[&l.Effective[id][0]] = true
	}
	if len(distinct) > 2*runtime.GOMAXPROCS(0) {
		t.Errorf("%d copies of 2 effective encodings", len(distinct))
	}
}
