package worker

import (
	"syscall"
	"testing"

	"xce/lib/api"
	"xce/lib/testenv"
)

// A signal asked for between the shepherd's go and its word on the job's
// process group (a bkill -s or bstop right after the dispatch) waits and
// reaches the job at its start, instead of being refused and lost.
func TestSignalBeforeStart(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	if err := w.Start(job(1, "sleep 30", t.TempDir())); err != nil {
		t.Fatal(err)
	}
	// Start has given the go; the shepherd has yet to start the job and
	// say so (it is a new process, milliseconds away).
	if err := w.Signal(1, 0, syscall.SIGTERM); err != nil {
		t.Fatalf("Signal right after Start: %v", err)
	}
	ev := rs.finished(t)
	if ev.State != api.JobState_EXIT || ev.ExitStatus != 128+int32(syscall.SIGTERM) {
		t.Errorf("the job ended as %v with %d, want EXIT by SIGTERM (%d)", ev.State, ev.ExitStatus, 128+int32(syscall.SIGTERM))
	}
}
