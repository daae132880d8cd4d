package store

import (
	"os"
	"testing"

	"xce/lib/api"
)

// TestMakeStoreFixture writes the small store of testdata/store-v1.tar.gz
// with the store code it is compiled with, into $XCE_MAKE_STORE_FIXTURE.
// testdata/make-store-fixture.sh compiles it with an older release's
// lib/store (it uses only calls every release has) to make the fixture
// of that release's layout; otherwise it is skipped.
func TestMakeStoreFixture(t *testing.T) {
	dir := os.Getenv("XCE_MAKE_STORE_FIXTURE")
	if dir == "" {
		t.Skip("XCE_MAKE_STORE_FIXTURE not set: testdata/make-store-fixture.sh runs this")
	}
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"A=1", "B=two"}
	if err := st.Submit(fixtureSubmission(7, 1, env)); err != nil {
		t.Fatal(err)
	}
	if err := st.Submit(fixtureSubmission(8, 3, env)); err != nil {
		t.Fatal(err)
	}
	run := &api.Job{JobId: 7, State: api.JobState_RUN, Seq: 10, ExecHosts: []*api.HostSlots{{Host: "h", Slots: 1}}}
	if err := st.Apply([]Change{{Job: run, Event: &api.Event{JobId: 7, Type: api.EventType_START}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetIDCeiling(2000); err != nil {
		t.Fatal(err)
	}
	if err := st.SetMeta("queue/night", []byte("closed")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// fixtureSubmission is store_test.go's submission, kept here so that the
// fixture's maker compiles against an older lib/store on its own.
func fixtureSubmission(id int64, n int, env []string) *Submission {
	s := &Submission{Spec: &api.JobSpec{Command: "true", Env: env, Queue: "normal"}}
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
