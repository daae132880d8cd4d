package worker

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xce/lib/testenv"
)

// TestRemoveKeepsShepherdLog: what a shepherd logged reaches the worker's
// log before the job's run directory, and the log in it, is removed; an
// empty log adds nothing, a long one is cut, and a link planted where the
// log was is not followed.
func TestRemoveKeepsShepherdLog(t *testing.T) {
	w, _ := newWorker(t, "/bin/false")
	var logged testenv.LockedBuffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	lines := func(job string) []string {
		var out []string
		for _, l := range strings.Split(logged.String(), "\n") {
			if strings.Contains(l, "shepherd logged") && strings.Contains(l, " job="+job+" ") {
				out = append(out, l)
			}
		}
		return out
	}
	withLog := func(id int64, write func(path string)) {
		t.Helper()
		dir := w.JobDir(id, 0)
		if err := os.MkdirAll(dir, 0o711); err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(dir, logName))
		w.Remove(id, 0)
		if _, err := os.Lstat(dir); !os.IsNotExist(err) {
			t.Errorf("job %d: run directory still there (%v)", id, err)
		}
	}

	withLog(7, func(p string) {
		os.WriteFile(p, []byte("level=WARN msg=\"cannot write the usage file\"\n"), 0o600)
	})
	if l := lines("7"); len(l) != 1 || !strings.Contains(l[0], "cannot write the usage file") || !strings.Contains(l[0], "cut=false") {
		t.Errorf("job 7's shepherd log in the worker's: %q", l)
	}

	withLog(8, func(p string) { os.WriteFile(p, nil, 0o600) })
	if l := lines("8"); len(l) != 0 {
		t.Errorf("an empty shepherd log was passed on: %q", l)
	}

	withLog(9, func(p string) { os.WriteFile(p, bytes.Repeat([]byte("x"), 2*maxShepherdLog), 0o600) })
	if l := lines("9"); len(l) != 1 || !strings.Contains(l[0], "cut=true") || strings.Count(l[0], "x") > maxShepherdLog+10 {
		t.Errorf("a long shepherd log: %d lines, cut=true %v", len(l), len(l) == 1 && strings.Contains(l[0], "cut=true"))
	}

	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("SECRET"), 0o600)
	withLog(10, func(p string) { os.Symlink(secret, p) })
	if strings.Contains(logged.String(), "SECRET") {
		t.Error("the link planted as the shepherd's log was followed")
	}
}
