package elim

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuf is a log a test reads while the runner writes it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func script(t *testing.T, dir, name, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor polls until cond holds (no fixed sleeps; the bound only stops
// a broken test).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestRunner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("elims run only when root owns them")
	}
	dir := t.TempDir()
	counter := filepath.Join(t.TempDir(), "starts")
	script(t, dir, "elim.scratch", "while :; do echo '2 scratch 100 bogus 1'; sleep 0.05; done\n", 0o755)
	script(t, dir, "elim.garbage", "while :; do echo 'not a report'; echo '3 x'; sleep 0.05; done\n", 0o755)
	script(t, dir, "elim.dies", "echo x >> "+counter+"\necho '1 lic 5'\nexit 3\n", 0o755)
	script(t, dir, "elim.open", "echo '1 open 1'\nsleep 100\n", 0o757)
	script(t, dir, "notelim.x", "echo '1 other 1'\nsleep 100\n", 0o755)
	if err := os.Symlink(filepath.Join(dir, "elim.scratch"), filepath.Join(dir, "elim.link")); err != nil {
		t.Fatal(err)
	}
	var log syncBuf
	known := map[string]bool{"scratch": true, "lic": true, "open": true, "other": true}
	r := New(Config{Dir: dir, StaleAfter: time.Hour, Known: func(n string) bool { return known[n] },
		MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(&log, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	waitFor(t, "scratch and lic", func() bool {
		v := r.Values(time.Now())
		return v["scratch"] == "100" && v["lic"] == "5"
	})
	waitFor(t, "the dying elim restarted", func() bool {
		b, _ := os.ReadFile(counter)
		return strings.Count(string(b), "x") >= 3
	})
	v := r.Values(time.Now())
	for _, n := range []string{"bogus", "open", "other", "x"} {
		if _, ok := v[n]; ok {
			t.Errorf("%s reported: %v", n, v)
		}
	}
	if got := r.Values(time.Now().Add(2 * time.Hour)); got["scratch"] != "" || got["lic"] != "" || len(got) != 2 {
		t.Errorf("values past the stale age: %v, want scratch and lic empty", got)
	}
	waitFor(t, "the log", func() bool {
		s := log.String()
		return strings.Contains(s, "malformed elim report") && strings.Contains(s, "elim.open is writable")
	})
	s := log.String()
	for _, want := range []string{"resource=bogus", "elim.link is a symbolic link"} {
		if !strings.Contains(s, want) {
			t.Errorf("log lacks %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "resource=bogus"); n != 1 {
		t.Errorf("the unknown resource warned %d times, want once", n)
	}
	cancel()
	<-done
}

func TestUnsafeDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("elims run only when root owns them")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	script(t, dir, "elim.a", "echo '1 a 1'\n", 0o755)
	var log syncBuf
	r := New(Config{Dir: dir, Log: slog.New(slog.NewTextHandler(&log, nil))})
	if got := r.scan(); got != nil {
		t.Fatalf("scan of a world-writable directory = %v", got)
	}
	if !strings.Contains(log.String(), "writable by its group or others") {
		t.Errorf("log: %s", log.String())
	}
}
