package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/store"
)

// t0 is the first submission of the store built below, unix nanoseconds.
const t0 = int64(1_700_000_000) * 1e9

func sub(id int64, n int, spec, eff *api.JobSpec, submit int64) *store.Submission {
	effRaw, err := api.Marshal(eff)
	if err != nil {
		panic(err)
	}
	s := &store.Submission{Spec: spec, EffectiveRaw: effRaw}
	for i := range n {
		idx := int32(0)
		if n > 1 {
			idx = int32(i + 1)
		}
		s.Jobs = append(s.Jobs, &api.Job{JobId: id, ArrayIndex: idx, State: api.JobState_PEND, SubmitTime: submit, Seq: 1})
		s.Events = append(s.Events, &api.Event{JobId: id, ArrayIndex: idx, Type: api.EventType_SUBMIT})
	}
	return s
}

func finished(id int64, idx int32, state api.JobState, submit, start, end int64, slots int32, eff *api.JobSpec) *api.Job {
	return &api.Job{JobId: id, ArrayIndex: idx, State: state, SubmitTime: submit, StartTime: start, EndTime: end,
		AllocSlots: slots, Seq: 2, Effective: eff}
}

// makeStore builds a state directory: job 1 accounted; array 2 still
// held, element 1 done, element 2 killed before it started; job 3 both
// accounted and held (clean() forgetting it); job 4 pending.
func makeStore(t testing.TB) (stateDir string) {
	t.Helper()
	stateDir = t.TempDir()
	st, err := store.Open(filepath.Join(stateDir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	eff1 := &api.JobSpec{Queue: "normal", User: "alice", UserGroup: "phys", MinTasks: 2, MaxTasks: 2, RunLimitSec: 600, ResReq: []string{"rusage[mem=512]"}}
	spec1 := &api.JobSpec{Command: "run", Queue: "normal", User: "alice", UserGroup: "phys", MinTasks: 2, MaxTasks: 2,
		ResReq: []string{"rusage[mem=512]"}, RunLimitSec: 600, MemLimitKb: 1 << 20, Dependency: "done(7)", Env: []string{"A=1"}}
	spec2 := &api.JobSpec{Command: "arr", User: "bob", ResReq: []string{"select[mem>100]", "rusage[mem=256]"}}
	eff2 := &api.JobSpec{Queue: "short", User: "bob", MinTasks: 1, MaxTasks: 1}
	spec3 := &api.JobSpec{Command: "three", User: "carol", Queue: "normal"}
	eff3 := &api.JobSpec{Queue: "normal", User: "carol", MinTasks: 1}
	for _, s := range []*store.Submission{
		sub(1, 1, spec1, eff1, t0),
		sub(2, 2, spec2, eff2, t0+10e9),
		sub(3, 1, spec3, eff3, t0+20e9),
		sub(4, 1, spec3, eff3, t0+30e9),
	} {
		if err := st.Submit(s); err != nil {
			t.Fatal(err)
		}
	}
	rec1 := finished(1, 0, api.JobState_DONE, t0, t0+5e9, t0+65e9, 2, eff1)
	rec3 := finished(3, 0, api.JobState_EXIT, t0+20e9, t0+21e9, t0+22e9, 1, eff3)
	if _, err := st.AddAcct([]*api.Job{rec1, rec3}); err != nil {
		t.Fatal(err)
	}
	live := []store.Change{
		{Job: finished(2, 1, api.JobState_DONE, t0+10e9, t0+70e9, t0+100e9, 1, nil)},
		{Job: finished(2, 2, api.JobState_EXIT, t0+10e9, 0, t0+15e9, 0, nil)},
		{Job: finished(3, 0, api.JobState_EXIT, t0+20e9, t0+21e9, t0+22e9, 1, nil)},
	}
	for i := range live {
		live[i].Job.Effective = nil
	}
	if err := st.Apply(live); err != nil {
		t.Fatal(err)
	}
	return stateDir
}

func TestReadAcct(t *testing.T) {
	dir := makeStore(t)
	tr, err := Read(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: 1, Submit: 0, Run: time.Minute, Slots: 2, Limit: 10 * time.Minute, MemMB: 512, MemLimitMB: 1024,
			User: "alice", Group: "phys", Queue: "normal", ResReq: "rusage[mem=512]", DependsOn: 7},
		{ID: 2, Index: 1, Submit: 10 * time.Second, Run: 30 * time.Second, Slots: 1, MemMB: 256,
			User: "bob", Queue: "short", ResReq: "select[mem > 100] rusage[mem=256]"},
		{ID: 3, Submit: 20 * time.Second, Run: time.Second, Slots: 1, User: "carol", Queue: "normal"},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("jobs:\n got %+v\nwant %+v", tr.Jobs, want)
	}
	if tr.Format != Acct || tr.Header["UnixStartTime"] != "1700000000" || len(tr.Malformed) != 0 {
		t.Errorf("format %v header %v malformed %v", tr.Format, tr.Header, tr.Malformed)
	}
	if len(tr.Skipped) != 1 || tr.Skipped[0].String() != dir+": job 2[2]: never started" {
		t.Errorf("skipped %v", tr.Skipped)
	}
	// The db directory itself reads the same.
	if tr2, err := ReadAcct(filepath.Join(dir, "db")); err != nil || !reflect.DeepEqual(tr2.Jobs, tr.Jobs) {
		t.Errorf("db directory: %v", err)
	}

	// While the store is open (xced runs), it reads the same.
	st, err := store.Open(filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	open, err := ReadAcct(dir)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err != nil || !reflect.DeepEqual(open.Jobs, tr.Jobs) {
		t.Errorf("store in use: %v", err)
	}
	// A backup of the store reads the same, and is recognised as one.
	backup := backupOf(t, dir)
	file := filepath.Join(t.TempDir(), "backup")
	if err := os.WriteFile(file, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := Detect(file); err != nil || f != Acct {
		t.Fatalf("Detect(backup) = %q, %v", f, err)
	}
	bt, err := Read(file, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(bt.Jobs, tr.Jobs) || len(bt.Skipped) != 1 {
		t.Errorf("from the backup:\n got %+v\nwant %+v", bt.Jobs, tr.Jobs)
	}
	// A backup cut short is an error, not a shorter trace.
	if _, err := ReadAcctBackup(bytes.NewReader(backup[:len(backup)-3]), "cut"); err == nil {
		t.Error("a cut backup read without error")
	}
	if _, err := ReadAcct(t.TempDir()); err == nil {
		t.Error("an empty directory read without error")
	}
}

// backupOf makes what `xced store backup` writes of a state directory.
func backupOf(t testing.TB, stateDir string) []byte {
	st, err := store.Open(filepath.Join(stateDir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := st.Backup(&buf); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzReadAcctBackup: no input makes the backup reader panic.
func FuzzReadAcctBackup(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{4, 0, 0, 0, 0, 0, 0, 0, 0x0a, 2, 0x0a, 0})
	f.Add(backupOf(f, makeStore(f)))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadAcctBackup(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		for _, j := range tr.Jobs {
			if j.Slots <= 0 || j.Run < 0 || j.Submit < 0 {
				t.Fatalf("bad job %+v", j)
			}
		}
	})
}
