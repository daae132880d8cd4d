package lsfenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func write(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ConfName), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadParsesLSFConf(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, `# a comment
LSF_UNIT_FOR_LIMITS = mb   # inline comment
LSF_LOGDIR="/var/log/lsf # not a comment"
LSF_MASTER_LIST='hostA hostB'
Begin Something
not a key line
XCE_DIR=/srv/xce
`)
	c, err := Load(envOf(map[string]string{"LSF_ENVDIR": dir}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Exists || c.Path != filepath.Join(dir, ConfName) {
		t.Errorf("Path %q Exists %v", c.Path, c.Exists)
	}
	for k, want := range map[string]string{
		"LSF_UNIT_FOR_LIMITS": "mb",
		"LSF_LOGDIR":          "/var/log/lsf # not a comment",
		"LSF_MASTER_LIST":     "hostA hostB",
		"XCE_DIR":             "/srv/xce",
		"Begin Something":     "",
	} {
		if got := c.Get(k); got != want {
			t.Errorf("Get(%q) = %q, want %q", k, got, want)
		}
	}
	if u := c.UnitForLimits(); u != "MB" {
		t.Errorf("UnitForLimits = %q", u)
	}
}

func TestMissingFileIsKB(t *testing.T) {
	c, err := Load(envOf(map[string]string{"LSF_ENVDIR": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Exists || c.UnitForLimits() != "KB" {
		t.Errorf("Exists %v unit %q", c.Exists, c.UnitForLimits())
	}
}

func TestBadUnitNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "\nLSF_UNIT_FOR_LIMITS=QB\n")
	_, err := Load(envOf(map[string]string{"LSF_ENVDIR": dir}))
	if err == nil || !strings.Contains(err.Error(), ConfName+":2: LSF_UNIT_FOR_LIMITS=QB") {
		t.Fatalf("err = %v", err)
	}
}

func TestWithUnit(t *testing.T) {
	mb := &Conf{vals: map[string]string{"LSF_UNIT_FOR_LIMITS": "GB"}}
	kb := &Conf{vals: map[string]string{}}
	for _, tc := range []struct {
		c        *Conf
		in, want string
	}{
		{mb, "4", "4GB"},
		{mb, "4!", "4GB!"},
		{mb, "4MB", "4MB"},
		{mb, "4M!", "4M!"},
		{mb, "1.5", "1.5GB"},
		{mb, "", ""},
		{mb, "x", "x"},
		{kb, "4000", "4000KB"},
	} {
		if got := tc.c.WithUnit(tc.in); got != tc.want {
			t.Errorf("WithUnit(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWriteDefault(t *testing.T) {
	xce := t.TempDir()
	dir := filepath.Join(xce, "conf")
	if err := WriteDefault(dir, "xce", "node1", nil); err != nil {
		t.Fatal(err)
	}
	c, err := Load(envOf(map[string]string{"LSF_ENVDIR": dir}))
	if err != nil {
		t.Fatal(err)
	}
	if c.UnitForLimits() != "MB" || c.Get("LSF_ENVDIR") != dir || c.Get("XCE_DIR") != xce ||
		c.Get("LSF_CLUSTER_NAME") != "xce" || c.Get("LSF_MASTER_LIST") != "node1" {
		t.Errorf("lsf.conf read back: %v", c.vals)
	}
	b, err := os.ReadFile(filepath.Join(dir, "lsf.cluster.xce"))
	if err != nil || !strings.Contains(string(b), "\nnode1 ") {
		t.Errorf("lsf.cluster.xce: %v\n%s", err, b)
	}
	// Controller candidates: LSF_MASTER_LIST names them, for the commands.
	if err := WriteDefault(dir, "xce", "node1", []string{"node1:7000", "node2:7000"}); err != nil {
		t.Fatal(err)
	}
	if c, err = Load(envOf(map[string]string{"LSF_ENVDIR": dir})); err != nil || c.Get("LSF_MASTER_LIST") != "node1:7000 node2:7000" {
		t.Errorf("lsf.conf with candidates: %v %v", err, c.vals)
	}
	// A file the administrator took over (first line removed) is kept.
	write(t, dir, "LSF_UNIT_FOR_LIMITS=GB\n")
	if err := WriteDefault(dir, "xce", "node1", nil); err != nil {
		t.Fatal(err)
	}
	if c, _ := Load(envOf(map[string]string{"LSF_ENVDIR": dir})); c.UnitForLimits() != "GB" {
		t.Errorf("an edited lsf.conf was replaced")
	}
	if err := WriteDefault(dir, "a/b", "node1", nil); err == nil {
		t.Errorf("a cluster name with a slash was accepted")
	}
}

// The written lsf.conf starts with a line of its own (the header once ran
// into the next comment line), and a file of an earlier version is still
// recognised as XCE's and rewritten.
func TestWriteDefaultFirstLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	os.MkdirAll(dir, 0o755)
	write(t, dir, "# Written by xced at every start (lib/lsfenv).#\nLSF_UNIT_FOR_LIMITS=GB\n")
	if err := WriteDefault(dir, "xce", "node1", nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ConfName))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if lines[0] != "# Written by xced at every start." || lines[1] != "#" {
		t.Errorf("first lines %q, %q", lines[0], lines[1])
	}
	if !strings.Contains(string(b), "\nLSF_UNIT_FOR_LIMITS=MB\n") {
		t.Errorf("an lsf.conf of an earlier version was not rewritten:\n%s", b)
	}
}
