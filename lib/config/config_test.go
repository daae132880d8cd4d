package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files")

// golden compares got with the file, or rewrites the file with -update.
func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", file, got)
	}
}

// TestLoadErrors loads every broken configuration in testdata/bad and
// compares the error with its .golden file.
func TestLoadErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad/*.toml")
	if len(files) == 0 {
		t.Fatal("no testdata/bad/*.toml")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := Load(f)
			if err == nil {
				t.Fatal("loaded without error")
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %T is not Errors: %v", err, err)
			}
			for _, e := range es {
				if e.File != f || e.Line == 0 && !strings.HasPrefix(e.Msg, "not set") {
					t.Errorf("error without file or line: %q", e)
				}
			}
			golden(t, strings.TrimSuffix(f, ".toml")+".golden", err.Error()+"\n")
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load("testdata/nosuch.toml"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want a not-exist error", err)
	}
}

// TestEffective prints the effective configuration of the example, of
// the layering tests' configuration and of the built-in default.
func TestEffective(t *testing.T) {
	for _, f := range []string{"testdata/example.toml", "testdata/layer.toml"} {
		c, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, strings.TrimSuffix(f, ".toml")+".golden", c.Effective())
	}
	golden(t, "testdata/default.golden", Default("node1", 8).String())
}

// TestEffectiveRoundTrip: the printed configuration loads back to the
// same configuration.
func TestEffectiveRoundTrip(t *testing.T) {
	for _, f := range []string{"testdata/example.toml", "testdata/layer.toml"} {
		c, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		text := c.Effective()
		c2, err := Parse("effective.toml", []byte(text))
		if err != nil {
			t.Fatalf("%s: the effective configuration does not load: %v\n%s", f, err, text)
		}
		c2.File = c.File
		if got := c2.Effective(); got != text {
			t.Errorf("%s: round trip differs:\n%s\nwant:\n%s", f, got, text)
		}
	}
	d := Default("node1", 8)
	c2, err := Parse("default.toml", []byte(d.Effective()))
	if err != nil {
		t.Fatal(err)
	}
	c2.File = ""
	if c2.Effective() != d.Effective() {
		t.Errorf("default: round trip differs")
	}
}

func TestDefault(t *testing.T) {
	c := Default("node1", 8)
	q := c.Queues["normal"]
	if c.Cluster.DefaultQueue != "normal" || q == nil || q.Priority != 30 || q.Name != "normal" {
		t.Fatalf("default queue: %+v", q)
	}
	if h := c.Hosts["node1"]; h == nil || h.Slots != 8 {
		t.Errorf("host: %+v", h)
	}
	if got := c.ExpandHosts(q.Hosts); len(got) != 1 || got[0] != "node1" {
		t.Errorf("queue hosts: %v", got)
	}
	if !c.UserIn("anyone", q.Users) {
		t.Errorf("the default queue is for everyone")
	}
	if c.Cluster.CleanPeriod != 3600 || c.Cluster.MaxArraySize != 1000 || c.Cluster.DefaultProject != "default" {
		t.Errorf("cluster defaults: %+v", c.Cluster)
	}
}

// An empty file is the built-in queue with no hosts.
func TestEmptyFile(t *testing.T) {
	c, err := Parse("empty.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Cluster.DefaultQueue != "normal" || c.Queues["normal"] == nil {
		t.Errorf("empty file: %+v", c.Cluster)
	}
}

func TestGroups(t *testing.T) {
	c, err := Load("testdata/example.toml")
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]string{
		"cpu":      "node01 node02",
		"gpunodes": "gpu01",
	}
	for g, want := range hosts {
		if got := strings.Join(c.ExpandHosts([]string{g}), " "); got != want {
			t.Errorf("%s: got %q, want %q", g, got, want)
		}
	}
	if got := strings.Join(c.ExpandHosts([]string{"all", "~cpu", "node01+2"}), " "); got != "gpu01 node01" {
		t.Errorf("all ~cpu node01+2: %q", got)
	}
	users := []struct {
		user string
		list []string
		want bool
	}{
		{"alice", []string{"physics"}, true}, // through chem
		{"carol", []string{"physics"}, true},
		{"erin", []string{"physics"}, false},
		{"erin", []string{"all"}, true},
		{"alice", []string{"all", "~chem"}, false},
		{"carol", []string{"all", "~chem"}, true},
		{"alice", []string{"physics", "~alice"}, false},
		{"alice", nil, false},
	}
	for _, u := range users {
		if got := c.UserIn(u.user, u.list); got != u.want {
			t.Errorf("UserIn(%s, %v) = %v", u.user, u.list, got)
		}
	}
	if !c.IsAdmin("hpcadmin") || c.IsAdmin("alice") {
		t.Errorf("IsAdmin")
	}
	if got := strings.Join(c.QueueNames(), " "); got != "short normal night" {
		t.Errorf("QueueNames: %s", got)
	}
}

func TestMemory(t *testing.T) {
	tests := []struct {
		in   string
		kb   int64
		text string
	}{
		{"64GB", 64 << 20, "64GB"},
		{"64gb", 64 << 20, "64GB"},
		{"64G", 64 << 20, "64GB"},
		{"1.5TB", 3 << 29, "1536GB"},
		{"512 MB", 512 << 10, "512MB"},
		{"100KB", 100, "100KB"},
		{"0MB", 0, "0KB"},
		{"64", 0, `64: write the amount with a unit, as in "64GB" (KB, MB, GB or TB)`},
		{"-1GB", 0, "-1GB: a memory amount cannot be negative"},
		{"64 parsecs", 0, `64 parsecs: unknown unit "parsecs"; use KB, MB, GB or TB`},
		{"GB", 0, `"GB" is not an amount of memory; write it as in "64GB"`},
	}
	for _, tc := range tests {
		var m Memory
		err := m.UnmarshalText([]byte(tc.in))
		got := m.String()
		if err != nil {
			got = err.Error()
		}
		if got != tc.text || err == nil && int64(m) != tc.kb {
			t.Errorf("%q: got %d %q, want %d %q", tc.in, m, got, tc.kb, tc.text)
		}
	}
	if got := Memory(512 << 20).Human(); got != "512 GB" {
		t.Errorf("Human: %q", got)
	}
}

func TestDuration(t *testing.T) {
	tests := []struct{ in, text string }{
		{"90m", "1h30m"},
		{"12h", "12h"},
		{"45s", "45s"},
		{"1h0m30s", "1h0m30s"},
		{"0s", "0s"},
		{"30", `30: write the time with a unit, as in "90m" or "12h"`},
		{"-1h", "-1h: a duration cannot be negative"},
		{"1.5s", "1.5s: durations are whole seconds"},
		{"soon", `"soon" is not a duration; write it as in "90m", "12h" or "1h30m"`},
	}
	for _, tc := range tests {
		var d Duration
		err := d.UnmarshalText([]byte(tc.in))
		got := d.String()
		if err != nil {
			got = err.Error()
		}
		if got != tc.text {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.text)
		}
	}
}

func TestWindow(t *testing.T) {
	parse := func(s string) Window {
		t.Helper()
		var w Window
		if err := w.UnmarshalText([]byte(s)); err != nil {
			t.Fatal(err)
		}
		return w
	}
	// 2026-11-30 is a Monday (day 1).
	at := func(day, h, m int) time.Time { return time.Date(2026, 11, 29+day, h, m, 0, 0, time.UTC) }
	tests := []struct {
		win  string
		text string
		in   []time.Time
		out  []time.Time
	}{
		{"20:00-08:00", "20:00-08:00", []time.Time{at(1, 20, 0), at(2, 3, 0), at(2, 7, 59)}, []time.Time{at(1, 8, 0), at(1, 12, 0), at(1, 19, 59)}},
		{"8-17:30", "08:00-17:30", []time.Time{at(3, 8, 0), at(3, 17, 29)}, []time.Time{at(3, 17, 30), at(3, 7, 0)}},
		{"5:18:00-1:08:00", "5:18:00-1:08:00", []time.Time{at(5, 18, 0), at(6, 12, 0), at(0, 12, 0), at(1, 7, 0)}, []time.Time{at(5, 17, 0), at(1, 8, 0), at(3, 12, 0)}},
		{"1:9:00-1:17:00", "1:09:00-1:17:00", []time.Time{at(1, 9, 0)}, []time.Time{at(2, 9, 0), at(1, 17, 0)}},
	}
	for _, tc := range tests {
		w := parse(tc.win)
		if w.String() != tc.text {
			t.Errorf("%s prints as %s", tc.win, w)
		}
		for _, tm := range tc.in {
			if !w.Contains(tm) {
				t.Errorf("%s should contain %s", tc.win, tm.Format("Mon 15:04"))
			}
		}
		for _, tm := range tc.out {
			if w.Contains(tm) {
				t.Errorf("%s should not contain %s", tc.win, tm.Format("Mon 15:04"))
			}
		}
	}
	for _, bad := range []string{"20:00", "25:00-3", "1:20:00-08:00", "7:00:00-1:00:00", "8:00-8:00", "a-b", "1:2:3:4-5"} {
		var w Window
		if err := w.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParse: no input makes Parse panic, and what loads prints a
// configuration that loads again.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.toml")
	bad, _ := filepath.Glob("testdata/bad/*.toml")
	for _, name := range append(files, bad...) {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.toml", data)
		if err != nil {
			return
		}
		if _, err := Parse("effective.toml", []byte(c.Effective())); err != nil {
			t.Fatalf("effective configuration does not load: %v\n%s", err, c.Effective())
		}
	})
}

func TestAPIQueues(t *testing.T) {
	c, err := Load("testdata/example.toml")
	if err != nil {
		t.Fatal(err)
	}
	qs := c.APIQueues()
	if len(qs) != 3 || qs[0].Name != "short" || qs[1].Name != "normal" || !qs[1].IsDefault || qs[0].IsDefault {
		t.Fatalf("queues: %v", qs)
	}
	s := qs[0]
	if s.Priority != 50 || s.MaxSlots != 128 || s.HostSlotLimit != 8 || s.RunLimitSec != 3600 || !s.Open || !s.Active {
		t.Errorf("short: %v", s)
	}
	if qs[1].UserSlotLimit != 64 || qs[1].Nice != 20 {
		t.Errorf("normal: %v", qs[1])
	}
}

// TestUserPendLimit: MAX_PEND_JOBS, the user's own, else the default
// user's, else the cluster's; a negative one does not load.
func TestUserPendLimit(t *testing.T) {
	c, err := Parse("t.toml", []byte("[cluster]\nmax_pend_jobs = 10\n[users.alice]\nmax_pend_jobs = 2\n[users.bob]\nmax_slots = 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	for user, want := range map[string]int{"alice": 2, "bob": 10, "carol": 10} {
		if got := c.UserPendLimit(user); got != want {
			t.Errorf("%s: %d, want %d", user, got, want)
		}
	}
	c, err = Parse("t.toml", []byte("[users.default]\nmax_pend_jobs = 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.UserPendLimit("carol"); got != 5 {
		t.Errorf("default user: %d, want 5", got)
	}
	if _, err := Parse("t.toml", []byte("[cluster]\nmax_pend_jobs = -1\n")); err == nil {
		t.Error("a negative max_pend_jobs loaded")
	}
}
