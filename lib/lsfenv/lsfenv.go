// Package lsfenv reads and writes the LSF environment directory: the
// lsf.conf that LSF's own tools, and the workflow managers written for LSF
// (Snakemake, Nextflow, Cromwell, dask-jobqueue), read to learn how the
// cluster is set up. The directory is $LSF_ENVDIR, else /etc, as for LSF.
//
// XCE reads two keys there:
//   - LSF_UNIT_FOR_LIMITS, the unit of a memory value given without one
//     (bsub -M 4000). A workflow tool converts its memory figures to this
//     unit before calling bsub, so bsub must read the same file to agree
//     with it. Unset, the unit is KB, as in LSF.
//   - XCE_DIR, the controller's directory, for when the environment does
//     not set XCE_DIR itself: LSF_ENVDIR alone then points the commands at
//     a controller (lib/client reads it).
//
// The file is LSF's: KEY=VALUE lines, blanks around "=" allowed, a value
// may be quoted with " or ', "#" starts a comment outside quotes, other
// lines are ignored. A missing file is an empty configuration; an
// unreadable one, or a unit LSF would not accept, is an error that names
// the file and line.
//
// WriteDefault writes such a directory for the single-host controller, so
// that `export LSF_ENVDIR=DIR/conf` is all a workflow tool needs.
package lsfenv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"xce/lib/atomicfile"
)

// DefaultEnvDir is where lsf.conf is looked for when LSF_ENVDIR is unset.
const DefaultEnvDir = "/etc"

// ConfName is the file read in the environment directory.
const ConfName = "lsf.conf"

// Units are the values LSF_UNIT_FOR_LIMITS may take, smallest first.
var Units = []string{"KB", "MB", "GB", "TB", "PB", "EB", "ZB"}

// Conf is one lsf.conf as read.
type Conf struct {
	Path   string // the file read, or looked for when it is missing
	Exists bool
	vals   map[string]string
	lines  map[string]int
}

// Load reads lsf.conf from $LSF_ENVDIR (getenv's), else from
// DefaultEnvDir. A missing file gives an empty Conf.
func Load(getenv func(string) string) (*Conf, error) {
	dir := getenv("LSF_ENVDIR")
	if dir == "" {
		dir = DefaultEnvDir
	}
	return LoadFile(filepath.Join(dir, ConfName))
}

// LoadFile reads one lsf.conf; a missing file gives an empty Conf.
func LoadFile(path string) (*Conf, error) {
	c := &Conf{Path: path, vals: map[string]string{}, lines: map[string]int{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s (LSF_ENVDIR): %w", path, err)
	}
	defer f.Close()
	c.Exists = true
	if err := c.parse(f); err != nil {
		return nil, err
	}
	if u, ok := c.vals["LSF_UNIT_FOR_LIMITS"]; ok && unitIndex(u) < 0 {
		return nil, fmt.Errorf("%s:%d: LSF_UNIT_FOR_LIMITS=%s is not a unit; use one of %s",
			path, c.lines["LSF_UNIT_FOR_LIMITS"], u, strings.Join(Units, ", "))
	}
	return c, nil
}

func (c *Conf) parse(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20) // from 4 KB, grown as lines need
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			continue // not a KEY=VALUE line; LSF ignores it too
		}
		c.vals[key] = value(strings.TrimSpace(val))
		c.lines[key] = n
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", c.Path, err)
	}
	return nil
}

// value removes a comment outside quotes and the quotes around a value.
func value(v string) string {
	var q byte
	for i := 0; i < len(v); i++ {
		switch ch := v[i]; {
		case q != 0:
			if ch == q {
				q = 0
			}
		case ch == '"' || ch == '\'':
			q = ch
		case ch == '#':
			v = strings.TrimSpace(v[:i])
			i = len(v)
		}
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return v
}

// Get returns a key's value, "" when unset.
func (c *Conf) Get(key string) string { return c.vals[key] }

// Keys lists the keys the file sets, in the order of their (last) lines.
func (c *Conf) Keys() []string {
	keys := make([]string, 0, len(c.vals))
	for k := range c.vals {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return c.lines[keys[i]] < c.lines[keys[j]] })
	return keys
}

// UnitForLimits is LSF_UNIT_FOR_LIMITS, upper case; KB when unset.
func (c *Conf) UnitForLimits() string {
	if u := c.vals["LSF_UNIT_FOR_LIMITS"]; u != "" {
		return strings.ToUpper(u)
	}
	return "KB"
}

func unitIndex(u string) int {
	for i, x := range Units {
		if strings.EqualFold(u, x) {
			return i
		}
	}
	return -1
}

// WithUnit gives a memory value its unit: a value that ends in a digit
// (before LSF's hard-limit "!") gets LSF_UNIT_FOR_LIMITS appended; one
// with a unit, or that is not a number at all, is returned as it is.
func (c *Conf) WithUnit(v string) string {
	num, bang := strings.CutSuffix(v, "!")
	if num == "" || num[len(num)-1] < '0' || num[len(num)-1] > '9' {
		return v
	}
	num += c.UnitForLimits()
	if bang {
		num += "!"
	}
	return num
}

// WriteDefault writes the LSF environment directory of a single-host
// controller: dir/lsf.conf (LSF_UNIT_FOR_LIMITS=MB, LSF_ENVDIR, XCE_DIR
// and the cluster and master names) and a minimal dir/lsf.cluster.NAME.
// dir is DIR/conf inside the controller's directory DIR, so XCE_DIR is
// dir's parent. An existing lsf.conf is replaced only when XCE wrote it,
// so one an administrator edited is kept. LSF_MASTER_LIST is host, or
// the controller candidates' addresses (HOST:PORT) when there are some.
func WriteDefault(dir, clusterName, host string, candidates []string) error {
	return WriteDefaultUnit(dir, clusterName, host, candidates, "MB")
}

// WriteDefaultUnit is WriteDefault with the unit of LSF_UNIT_FOR_LIMITS
// given: the cluster's (xce.toml cluster.unit_for_limits), so that bsub
// -M 4000 and rusage[mem=4000] mean the same amount.
func WriteDefaultUnit(dir, clusterName, host string, candidates []string, unit string) error {
	if unitIndex(unit) < 0 {
		return fmt.Errorf("lsf.conf: bad LSF_UNIT_FOR_LIMITS %q", unit)
	}
	unit = strings.ToUpper(unit)
	masterList := host
	if len(candidates) > 0 {
		masterList = strings.Join(candidates, " ")
	}
	if clusterName == "" || strings.ContainsAny(clusterName, "/ \t\n") {
		return fmt.Errorf("lsf.cluster: bad cluster name %q", clusterName)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	conf := filepath.Join(abs, ConfName)
	if b, err := os.ReadFile(conf); err == nil && !ours(string(b)) {
		return nil // the administrator's own file
	}
	var b strings.Builder
	b.WriteString(header + "\n")
	b.WriteString(`#
# LSF tools and workflow managers (Snakemake, Nextflow, ...) read this file
# to learn the cluster's settings. Point them at it with
#     export LSF_ENVDIR=` + abs + `
# XCE's commands read it too: LSF_UNIT_FOR_LIMITS is the unit of a memory
# value given without one (bsub -M 4000 is 4000 ` + unit + `), and XCE_DIR is the
# controller they talk to when the environment sets no XCE_DIR.
# Remove the first line to keep your own edits when xced starts again.
`)
	fmt.Fprintf(&b, "LSF_ENVDIR=%s\n", quote(abs))
	fmt.Fprintf(&b, "LSF_UNIT_FOR_LIMITS=%s\n", unit)
	fmt.Fprintf(&b, "LSF_CLUSTER_NAME=%s\n", quote(clusterName))
	fmt.Fprintf(&b, "LSF_MASTER_LIST=%s\n", quote(masterList))
	fmt.Fprintf(&b, "XCE_DIR=%s\n", quote(filepath.Dir(abs)))
	if err := writeFile(conf, b.String()); err != nil {
		return err
	}
	cluster := fmt.Sprintf(`%s
# The hosts of cluster %s, in LSF's format, for tools that read it.

Begin ClusterAdmins
Administrators = (%s)
End ClusterAdmins

Begin Host
HOSTNAME  model  type  server  RESOURCES
%s  !  !  1  ()
End Host
`, header, clusterName, currentUser(), host)
	return writeFile(filepath.Join(abs, "lsf.cluster."+clusterName), cluster)
}

// header is the first line of the files WriteDefault owns.
const header = "# Written by xced at every start."

// oldHeader began the files of earlier versions, which ran the next line
// into it; a file that starts with it is ours too.
const oldHeader = "# Written by xced at every start (lib/lsfenv)."

// ours reports whether a file's text is one WriteDefault wrote.
func ours(text string) bool {
	return strings.HasPrefix(text, header+"\n") || strings.HasPrefix(text, oldHeader)
}

func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t#\"'") {
		return s
	}
	return `"` + s + `"`
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// writeFile replaces path atomically, so a tool never reads half a file.
func writeFile(path, text string) error {
	return atomicfile.Write(path, []byte(text), 0o644, false)
}
