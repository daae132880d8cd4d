package worker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xce/lib/api/rpc"
	"xce/lib/testenv"
)

// TestHostContainerTask: a task of a container job whose first host is
// another runs in a container of its own here: the job's image (as the
// job chose it), named for the task and labelled for the sweep, with
// the task's directory and environment; the container is removed by
// name once the task has ended. (A fake podman runs the command after
// the image on the host.)
func TestHostContainerTask(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, _ := newWorker(t, shep)
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	fake := "#!/bin/sh\necho \"$*\" >>" + log + "\ncase \"$1\" in\nrun) while [ $# -gt 0 ] && [ \"$1\" != img2 ]; do shift; done; shift; exec \"$@\";;\nesac\nexit 0\n"
	if err := os.WriteFile(filepath.Join(bin, "podman"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ts := &rpc.TaskStart{JobId: 3, TaskId: 2, Host: "hostA", Argv: []string{"echo", "hi", "$LSF_PM_TASKID", "$(pwd)"}, Cwd: dir,
		Env:  []string{"PATH=" + bin + ":/usr/bin:/bin", "LSB_CONTAINER_IMAGE=img2"},
		User: "", Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()), Container: "podman[image($LSB_CONTAINER_IMAGE) options(--net=host)]"}
	out, exit := runTask(t, w, ts)
	if exit.ExitCode != 0 || out != "hi 2 "+dir+"\n" {
		t.Errorf("the task ended %v with output %q, want hi 2 %s", exit, out, dir)
	}
	b, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(calls) != 2 {
		t.Fatalf("runtime calls %q, want a run and a rm", calls)
	}
	for _, want := range []string{"run --rm ", " --name xce-c-3-t2 ", " --label xce.job=3 ", " --label xce.task=2 ", " -w " + dir + " -v " + dir + ":" + dir + " ",
		" --env LSF_PM_TASKID ", " --net=host img2 /bin/sh -c echo hi $LSF_PM_TASKID $(pwd)"} {
		if !strings.Contains(calls[0], want) {
			t.Errorf("the run lacks %q: %s", want, calls[0])
		}
	}
	if calls[1] != "rm -f --ignore --time 0 xce-c-3-t2" {
		t.Errorf("the removal: %q", calls[1])
	}
}

// An apptainer job's blaunch task on the job's own host: apptainer keeps
// no container to exec into, so the task is started from the job's image
// (apptainer exec, with its working directory bound), not on the host
// outside it.
func TestApptainerTaskOnFirstHost(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	fake := "#!/bin/sh\necho \"$*\" >>" + log + "\nwhile [ $# -gt 0 ] && [ \"$1\" != /images/a.sif ]; do shift; done; shift; exec \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "apptainer"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := w.Start(job(4, "sleep 60", dir)); err != nil {
		t.Fatal(err)
	}
	killAtEnd(t, w, rs, 4)
	ts := &rpc.TaskStart{JobId: 4, TaskId: 1, Host: "hostA", Argv: []string{"echo", "hi", "$LSF_PM_TASKID", "$(pwd)"}, Cwd: dir,
		Env:  []string{"PATH=" + bin + ":/usr/bin:/bin"},
		User: "", Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()), Container: "apptainer[image(/images/a.sif) options(--cleanenv)]"}
	out, exit := runTask(t, w, ts)
	if exit.ExitCode != 0 || out != "hi 1 "+dir+"\n" {
		t.Errorf("the task ended %v with output %q, want hi 1 %s", exit, out, dir)
	}
	b, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(calls) != 1 {
		t.Fatalf("runtime calls %q, want one exec", calls)
	}
	for _, want := range []string{"exec --pwd " + dir + " --bind " + dir + " ", " --cleanenv /images/a.sif /bin/sh -c echo hi $LSF_PM_TASKID $(pwd)"} {
		if !strings.Contains(calls[0], want) {
			t.Errorf("the exec lacks %q: %s", want, calls[0])
		}
	}
}

// runTask starts ts on w and gathers its output (given back as it comes)
// until it ends.
func runTask(t *testing.T, w *Worker, ts *rpc.TaskStart) (string, *rpc.TaskExit) {
	t.Helper()
	events := make(chan *rpc.TaskEvent, 16)
	w.StartTask(ts, func(ev *rpc.TaskEvent) { events <- ev })
	var out string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if o := ev.GetOutput(); o != nil {
				out += string(o.Data)
				w.giveBack(jobKey{ts.JobId, ts.Index}, o.TaskId, ts.Host, len(o.Data))
			}
			if exit := ev.GetExit(); exit != nil {
				return out, exit
			}
		case <-timeout:
			t.Fatalf("the task did not end; output %q", out)
		}
	}
}
