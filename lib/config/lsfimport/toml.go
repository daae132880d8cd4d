package lsfimport

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"xce/lib/config"
)

// src is where a translated value came from.
type src struct {
	file string
	line int
	key  string // the LSF key or column
}

// doc is the xce.toml being written: tables in order, each with its
// entries in order.
type doc struct {
	tables []*table
	// limits are the [[limits]] entries, written after the tables.
	limits []*table
	// units are the [[compute_units]] entries, written before the limits.
	units []*table
	// rsvPolicies are the [[reservation_policies]] entries, written last.
	rsvPolicies []*table
}

type table struct {
	path    []string // "queues", "normal"
	comment string
	src     src
	entries []*entry
}

type entry struct {
	key     string // TOML key within the table
	val     string // TOML text of the value
	comment string
	src     src
}

func (d *doc) table(comment string, s src, path ...string) *table {
	for _, t := range d.tables {
		if strings.Join(t.path, "\x00") == strings.Join(path, "\x00") {
			return t
		}
	}
	t := &table{path: path, comment: comment, src: s}
	d.tables = append(d.tables, t)
	return t
}

// unit appends a [[compute_units]] entry.
func (d *doc) unit(comment string, s src) *table {
	t := &table{path: []string{"compute_units"}, comment: comment, src: s}
	d.units = append(d.units, t)
	return t
}

// limit appends a [[limits]] entry.
func (d *doc) limit(comment string, s src) *table {
	t := &table{path: []string{"limits"}, comment: comment, src: s}
	d.limits = append(d.limits, t)
	return t
}

// rsvPolicy appends a [[reservation_policies]] entry.
func (d *doc) rsvPolicy(comment string, s src) *table {
	t := &table{path: []string{"reservation_policies"}, comment: comment, src: s}
	d.rsvPolicies = append(d.rsvPolicies, t)
	return t
}

func (d *doc) removeTable(t *table) {
	for i, u := range d.tables {
		if u == t {
			d.tables = append(d.tables[:i], d.tables[i+1:]...)
			return
		}
	}
}

// set adds or replaces key; val is TOML text ("" leaves the entry out).
func (t *table) set(key, val, comment string, s src) {
	if val == "" {
		return
	}
	for _, e := range t.entries {
		if e.key == key {
			e.val, e.comment, e.src = val, comment, s
			return
		}
	}
	t.entries = append(t.entries, &entry{key: key, val: val, comment: comment, src: s})
}

func (t *table) get(key string) *entry {
	for _, e := range t.entries {
		if e.key == key {
			return e
		}
	}
	return nil
}

func (t *table) remove(key string) {
	for i, e := range t.entries {
		if e.key == key {
			t.entries = append(t.entries[:i], t.entries[i+1:]...)
			return
		}
	}
}

// String returns the document as TOML.
func (d *doc) String() string {
	var b strings.Builder
	b.WriteString("# xce.toml imported from an LSF configuration by \"xced config import-lsf\".\n")
	b.WriteString("# Each section names the LSF file and line it came from; what could not be\n")
	b.WriteString("# translated is in the import report, not here.\n")
	for _, t := range d.tables {
		t.write(&b, false)
	}
	for _, t := range d.units {
		t.write(&b, true)
	}
	for _, t := range d.limits {
		t.write(&b, true)
	}
	for _, t := range d.rsvPolicies {
		t.write(&b, true)
	}
	return b.String()
}

// write writes the table, as an element of an array of tables when array
// is set.
func (t *table) write(b *strings.Builder, array bool) {
	b.WriteByte('\n')
	if t.comment != "" {
		for _, l := range strings.Split(t.comment, "\n") {
			b.WriteString("# " + commentText(l) + "\n")
		}
	}
	parts := make([]string, len(t.path))
	for i, p := range t.path {
		parts[i] = config.TOMLKey(p)
	}
	open, end := "[", "]\n"
	if array {
		open, end = "[[", "]]\n"
	}
	b.WriteString(open + strings.Join(parts, ".") + end)
	for _, e := range t.entries {
		b.WriteString(config.TOMLKey(e.key) + " = " + e.val)
		if e.comment != "" {
			b.WriteString("  # " + commentText(e.comment))
		}
		b.WriteByte('\n')
	}
}

// commentText makes s fit in a TOML comment, which must be valid UTF-8
// without control characters other than tab: an LSF file's names and
// values may hold anything, and a comment quoting one must not stop the
// document from loading. Invalid bytes become U+FFFD, control characters
// their \xNN escape.
func commentText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }

func tomlList(l []string) string {
	if len(l) == 0 {
		return ""
	}
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = config.TOMLString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func tomlInt(n int64) string { return strconv.FormatInt(n, 10) }

// tomlInline returns an inline table of keys and their TOML values, in
// the order given.
func tomlInline(keys, vals []string) string {
	if len(keys) == 0 {
		return ""
	}
	parts := make([]string, len(keys))
	for i := range keys {
		parts[i] = config.TOMLKey(keys[i]) + " = " + vals[i]
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// settle loads the document with config.Parse and, while it does not
// load, drops what each error names, with a note saying why. It returns
// the notes; a last note says so if the document still does not load.
func (d *doc) settle() []Note {
	var notes []Note
	for range 100 {
		_, err := config.Parse("xce.toml", []byte(d.String()))
		if err == nil {
			return notes
		}
		var es config.Errors
		if !errors.As(err, &es) {
			return append(notes, Note{Loss: true, Msg: "the generated xce.toml does not load: " + err.Error()})
		}
		dropped := false
		if n := d.dropLimits(es); len(n) > 0 {
			notes = append(notes, n...)
			dropped = true
		}
		if n := d.dropUnits(es); len(n) > 0 {
			notes = append(notes, n...)
			dropped = true
		}
		for _, e := range es {
			if strings.HasPrefix(e.Key, "limits.") || strings.HasPrefix(e.Key, "compute_units.") {
				continue
			}
			if e.Key == "cluster.default_queue" {
				if q := d.pickQueue(); q != "" {
					notes = append(notes, Note{File: "lsb.params", Key: "DEFAULT_QUEUE",
						Msg: fmt.Sprintf("the default queue would be refused (%s); the first queue left, %s, is made the default", e.Msg, q)})
					dropped = true
					continue
				}
			}
			if n, ok := d.drop(e); ok {
				notes = append(notes, n)
				dropped = true
			}
		}
		if !dropped {
			return append(notes, Note{Loss: true, Msg: "the generated xce.toml does not load: " + err.Error()})
		}
	}
	return append(notes, Note{Loss: true, Msg: "the generated xce.toml does not load"})
}

// dropLimits removes each [[limits]] entry an error names ("limits.N.key")
// whole: a limit without one of its keys would cover more than LSF's, or
// limit less. Each is a loss of policy, with the error that refused it.
func (d *doc) dropLimits(es config.Errors) []Note {
	why := map[int]string{}
	for _, e := range es {
		rest, ok := strings.CutPrefix(e.Key, "limits.")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.SplitN(rest, ".", 2)[0])
		if err != nil || n < 0 || n >= len(d.limits) {
			continue
		}
		if _, seen := why[n]; !seen {
			why[n] = e.Key + ": " + e.Msg
		}
	}
	var notes []Note
	for n := len(d.limits) - 1; n >= 0; n-- {
		msg, ok := why[n]
		if !ok {
			continue
		}
		t := d.limits[n]
		d.limits = append(d.limits[:n], d.limits[n+1:]...)
		notes = append(notes, Note{File: t.src.file, Line: t.src.line, Key: t.src.key, Loss: true,
			Msg: "not translated: the Limit would be refused: " + msg})
	}
	slices.Reverse(notes)
	return notes
}

// pickQueue makes the first queue left the default one, when the
// default queue was dropped.
func (d *doc) pickQueue() string {
	var c *table
	for _, t := range d.tables {
		if len(t.path) == 1 && t.path[0] == "cluster" {
			c = t
		}
	}
	for _, t := range d.tables {
		if c != nil && len(t.path) == 2 && t.path[0] == "queues" {
			if e := c.get("default_queue"); e != nil && e.val == config.TOMLString(t.path[1]) {
				return ""
			}
			c.set("default_queue", config.TOMLString(t.path[1]), "chosen by the import", src{})
			return t.path[1]
		}
	}
	return ""
}

// drop removes the entry (or the table) an error's key names.
func (d *doc) drop(e *config.Error) (Note, bool) {
	var bestT *table
	var bestE *entry
	best := -1
	for _, t := range d.tables {
		tk := strings.Join(t.path, ".")
		if !keyHasPrefix(e.Key, tk) {
			continue
		}
		if len(tk) > best {
			bestT, bestE, best = t, nil, len(tk)
		}
		for _, en := range t.entries {
			ek := tk + "." + en.key
			if keyHasPrefix(e.Key, ek) && len(ek) > best {
				bestT, bestE, best = t, en, len(ek)
			}
		}
	}
	if bestT == nil || bestE == nil && len(bestT.path) < 2 {
		return Note{}, false
	}
	if bestE != nil {
		bestT.remove(bestE.key)
		msg := fmt.Sprintf("not translated: %s = %s would be refused: %s", e.Key, bestE.val, e.Msg)
		if bestT.path[0] == "queues" && (bestE.key == "hosts" || bestE.key == "users") {
			msg += "; the queue gets xce's default, all: review it"
		}
		return Note{File: bestE.src.file, Line: bestE.src.line, Key: bestE.src.key, Msg: msg, Loss: !harmless[bestE.key]}, true
	}
	d.removeTable(bestT)
	return Note{File: bestT.src.file, Line: bestT.src.line, Key: bestT.src.key, Loss: true,
		Msg: fmt.Sprintf("not translated: [%s] would be refused: %s", strings.Join(bestT.path, "."), e.Msg)}, true
}

// harmless are the keys whose loss does not change who may run what:
// dropping anything else (a resource requirement, a user list, a limit)
// is a loss of policy.
var harmless = map[string]bool{"description": true, "nice": true, "job_overrun": true, "job_underrun": true,
	"job_idle": true, "type": true, "model": true, "name": true, "clean_period": true, "acct_retention": true}

func keyHasPrefix(key, prefix string) bool {
	return key == prefix || strings.HasPrefix(key, prefix+".")
}

// dropUnits removes each [[compute_units]] entry an error names
// ("compute_units.N.key") whole, with the error that refused it.
func (d *doc) dropUnits(es config.Errors) []Note {
	why := map[int]string{}
	for _, e := range es {
		rest, ok := strings.CutPrefix(e.Key, "compute_units.")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.SplitN(rest, ".", 2)[0])
		if err != nil || n < 0 || n >= len(d.units) {
			continue
		}
		if _, seen := why[n]; !seen {
			why[n] = e.Key + ": " + e.Msg
		}
	}
	var notes []Note
	for n := len(d.units) - 1; n >= 0; n-- {
		msg, ok := why[n]
		if !ok {
			continue
		}
		t := d.units[n]
		d.units = append(d.units[:n], d.units[n+1:]...)
		notes = append(notes, Note{File: t.src.file, Line: t.src.line, Key: t.src.key, Loss: true,
			Msg: "not translated: the compute unit would be refused: " + msg})
	}
	slices.Reverse(notes)
	return notes
}
