package worker

import (
	"os"
	"slices"
	"testing"

	"xce/lib/api"
	"xce/lib/testenv"
)

// The shepherd runs with one P; its job never sees GOMAXPROCS, though
// the shepherd is its parent.
func TestShepherdEnv(t *testing.T) {
	if env := shepherdEnv(0); !slices.Contains(env, "GOMAXPROCS=1") {
		t.Errorf("the shepherd's environment has no GOMAXPROCS=1")
	}
	if os.Geteuid() != 0 {
		t.Skip("the shepherd's /proc environ is root's to read (it is not dumpable)")
	}
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	// Exit 3: the job has GOMAXPROCS; 4: its parent, the shepherd, lacks it.
	cmd := `test -z "${GOMAXPROCS+x}" || exit 3; tr '\0' '\n' < /proc/$PPID/environ | grep -qx GOMAXPROCS=1 || exit 4`
	if err := w.Start(job(1, cmd, t.TempDir())); err != nil {
		t.Fatal(err)
	}
	if ev := rs.finished(t); ev.State != api.JobState_DONE {
		t.Errorf("job ended %v, exit %d (3: the job had GOMAXPROCS; 4: the shepherd had not)", ev.State, ev.ExitStatus)
	}
}
