package worker

import (
	"xce/lib/testenv"

	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

// peekFor polls Peek until its data is want (or a generous deadline).
func peekFor(t *testing.T, w *Worker, id int64, want string) (size int64, path string) {
	t.Helper()
	var data []byte
	var err error
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		data, size, path, err = w.Peek(id, 0, 0, 0)
		if err == nil && string(data) == want {
			return size, path
		}
	}
	t.Fatalf("Peek(%d) = %q, %v; want %q", id, data, err, want)
	return 0, ""
}

// A running job's output so far is read from its spool file, from an
// offset and capped; with LSB_STDOUT_DIRECT from its -o file; a spool
// file the job replaced with a link is refused, not followed.
func TestPeek(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	dir := t.TempDir()
	uid, gid := testenv.JobUser(t, w.cfg.RunDir, dir)
	userJob := func(id int64, cmd string) *api.Job {
		j := job(id, cmd, dir)
		j.Spec.Uid, j.Spec.Gid = uint32(uid), uint32(gid)
		j.SpoolOutput = w.SpoolOutput(id, 0) // as the controller sets it
		j.Effective = &api.JobSpec{Uid: uint32(uid), Gid: uint32(gid)}
		return j
	}
	defer func() {
		for _, id := range []int64{1, 2, 3} {
			w.Signal(id, 0, 9)
		}
	}()

	if err := w.Start(userJob(1, "echo hi; sleep 30")); err != nil {
		t.Fatal(err)
	}
	size, path := peekFor(t, w, 1, "hi\n")
	if size != 3 || path != w.SpoolOutput(1, 0) {
		t.Errorf("Peek = size %d, path %s; want 3, %s", size, path, w.SpoolOutput(1, 0))
	}
	if data, _, _, err := w.Peek(1, 0, 1, 1); err != nil || string(data) != "i" {
		t.Errorf("Peek(offset 1, max 1) = %q, %v; want \"i\"", data, err)
	}
	if data, _, _, err := w.Peek(1, 0, 10, 0); err != nil || len(data) != 0 {
		t.Errorf("Peek past the end = %q, %v; want nothing", data, err)
	}

	// The job swaps its spool file for a link to a file it cannot read.
	spool := w.SpoolOutput(2, 0)
	if err := w.Start(userJob(2, "echo hi; rm -f "+spool+"; ln -s /etc/shadow "+spool+"; sleep 30")); err != nil {
		t.Fatal(err)
	}
	var err error
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if fi, lerr := os.Lstat(spool); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			var data []byte
			data, _, _, err = w.Peek(2, 0, 0, 0)
			if err == nil {
				t.Fatalf("Peek followed the job's link: %q", data)
			}
			break
		}
	}
	if err == nil {
		t.Fatal("the job did not replace its spool file")
	}

	// LSB_STDOUT_DIRECT: the job writes into its -o file (relative to its
	// working directory), which Peek reads.
	w.cfg.StdoutDirect = true
	j := userJob(3, "echo direct; sleep 30")
	j.Spec.OutputFile, j.Effective.OutputFile = "out.%J", "out.%J"
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	if _, path := peekFor(t, w, 3, "direct\n"); path != filepath.Join(dir, "out.3") {
		t.Errorf("Peek read %s, want the -o file %s", path, filepath.Join(dir, "out.3"))
	}

	if r := w.Running(); len(r) != 3 || r[0].JobId != 1 || r[2].JobId != 3 || !w.Watches(2, 0) {
		t.Errorf("Running = %v, want jobs 1, 2 and 3", r)
	}
	if _, _, _, err := w.Peek(9, 0, 0, 0); err == nil || !strings.Contains(err.Error(), "no files") {
		t.Errorf("Peek of an unknown job: %v", err)
	}
	for _, id := range []int64{1, 2, 3} {
		w.Signal(id, 0, 9)
	}
	for range 3 {
		rs.finished(t)
	}
	if r := w.Running(); len(r) != 0 {
		t.Errorf("Running after the ends = %v", r)
	}
}

// openAsUser opens with the user's file system identity: a root-only file
// and a file of the user's in a directory closed to the user fail alike;
// the user's own file in reach opens; and the goroutines after it still
// have root's identity.
func TestOpenAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to take another user's identity")
	}
	uid, gid := testenv.User(t, "xcetest1")
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755) // the test's own temporary directory
	os.Chmod(dir, 0o755)
	closed := filepath.Join(dir, "closed")
	os.Mkdir(closed, 0o700)
	write := func(path string, owner int) {
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chown(path, owner, owner)
	}
	shadow := filepath.Join(dir, "shadow")
	write(shadow, 0)
	hidden := filepath.Join(closed, "mine")
	write(hidden, uid)
	mine := filepath.Join(dir, "mine")
	write(mine, uid)
	for _, p := range []string{shadow, hidden, filepath.Join(closed, "nosuch")} {
		if f, _, err := openAsUser(p, uid, gid, "xcetest1"); err == nil {
			f.Close()
			t.Errorf("%s opened as uid %d", p, uid)
		}
	}
	f, _, err := openAsUser(mine, uid, gid, "xcetest1")
	if err != nil {
		t.Fatalf("the user's own file: %v", err)
	}
	f.Close()
	for i := 0; i < 20; i++ { // root's identity everywhere after it
		ch := make(chan error, 1)
		go func() {
			f, err := os.Open(shadow)
			if err == nil {
				f.Close()
			}
			ch <- err
		}()
		if err := <-ch; err != nil {
			t.Fatalf("root cannot open its own file after openAsUser: %v", err)
		}
	}
}
