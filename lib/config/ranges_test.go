package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNumbersInRange: a count beyond int32 wrapped on its way to the
// scheduler and the commands (priority 2147483648 became negative,
// slots 2147483648 became 0, no limit). Each is refused, naming file,
// line and key.
func TestNumbersInRange(t *testing.T) {
	tests := []struct{ toml, want string }{
		{"[queues.normal]\npriority = 2147483648\n", "xce.toml:2: queues.normal.priority: 2147483648 is out of range (at most 2147483647)"},
		{"[queues.normal]\nmax_slots = 4294967297\n", "xce.toml:2: queues.normal.max_slots: 4294967297 is out of range"},
		{"[hosts.h1]\nslots = 2147483648\n", "xce.toml:2: hosts.h1.slots: 2147483648 is out of range"},
		{"[cluster]\nmax_pend_jobs = 9999999999\n", "xce.toml:2: cluster.max_pend_jobs: 9999999999 is out of range"},
		{"[cluster]\nmax_user_priority = 99999999999\n", "xce.toml:2: cluster.max_user_priority: 99999999999 is out of range"},
		{"[users.alice]\nmax_slots = 2147483648\n", "xce.toml:2: users.alice.max_slots: 2147483648 is out of range"},
		{"[queues.normal]\nnice = -2147483649\n", "xce.toml:2: queues.normal.nice: -2147483649 is out of range"},
		{"[queues.normal]\nfairshare = { alice = 2147483648 }\n", "queues.normal.fairshare.alice: 2147483648 is out of range"},
		{"[resources.lic]\ntotal = 2147483648\n", "xce.toml:2: resources.lic.total: 2147483648 is out of range"},
		{"[cluster]\nunit_for_limits = \"ZB\"\n", `xce.toml:2: cluster.unit_for_limits: "ZB": use KB, MB, GB, TB, PB or EB`},
		{"[queues.normal]\ninteractive = \"sometimes\"\n", `xce.toml:2: queues.normal.interactive: "sometimes": use "yes", "no" or "only"`},
		{"[hosts.h1]\ncpu_factor = -1.0\n", "xce.toml:2: hosts.h1.cpu_factor: -1: must be a positive number"},
	}
	for _, tt := range tests {
		_, err := Parse("xce.toml", []byte(tt.toml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.toml, err, tt.want)
		}
	}
	// The largest values are taken.
	ok := "[queues.normal]\npriority = 2147483647\nmax_slots = 2147483647\n[cluster]\nmax_user_priority = 2147483647\nunit_for_limits = \"KB\"\n"
	if _, err := Parse("xce.toml", []byte(ok)); err != nil {
		t.Errorf("int32's maximum is refused: %v", err)
	}
}

// TestLongNames: a 20 MB cluster name was accepted; names are at most
// MaxNameLen bytes.
func TestLongNames(t *testing.T) {
	long := strings.Repeat("c", 20<<20)
	_, err := Parse("xce.toml", []byte("[cluster]\nname = \""+long+"\"\n"))
	if err == nil || !strings.Contains(err.Error(), "xce.toml:2: cluster.name: a name of 20971520 bytes is too long (at most 255)") {
		t.Errorf("a 20 MB cluster name: %.300v", err)
	}
	q := strings.Repeat("q", 300)
	_, err = Parse("xce.toml", []byte("[cluster]\ndefault_queue = \""+q+"\"\n[queues."+q+"]\n"))
	if err == nil || !strings.Contains(err.Error(), "a name of 300 bytes is too long") {
		t.Errorf("a 300-byte queue name: %.300v", err)
	}
	if _, err := Parse("xce.toml", []byte("[cluster]\nname = \""+strings.Repeat("c", MaxNameLen)+"\"\n")); err != nil {
		t.Errorf("a name of MaxNameLen bytes: %v", err)
	}
	// Through Load, the file itself is too large first.
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte("[cluster]\nname = \""+long+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "too large for a configuration file") {
		t.Errorf("a 20 MB xce.toml: %v", err)
	}
}

// TestLoadRegularFilesOnly: "xced config check" on a FIFO waited for a
// writer forever, and on /dev/zero read until memory ran out. Only a
// regular file is read, of at most MaxFileSize bytes.
func TestLoadRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
		t.Errorf("a FIFO: %v", err)
	}
	if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file (a character device)") {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file (a directory)") {
		t.Errorf("a directory: %v", err)
	}
	huge := filepath.Join(dir, "huge.toml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(huge); err == nil || !strings.Contains(err.Error(), "too large for a configuration file") {
		t.Errorf("a file over MaxFileSize: %v", err)
	}
	good := filepath.Join(dir, "xce.toml")
	if err := os.WriteFile(good, []byte("[cluster]\nname = \"c\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.toml")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	_, err = Load(link)
	switch {
	case os.Geteuid() == 0 && (err == nil || !strings.Contains(err.Error(), "is a symbolic link")):
		t.Errorf("root followed a symbolic link: %v", err)
	case os.Geteuid() != 0 && err != nil:
		t.Errorf("a symbolic link, not as root: %v", err)
	}
}
