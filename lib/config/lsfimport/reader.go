package lsfimport

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"xce/lib/config"
)

// Note is one thing Import did not translate, or translated with a
// caveat, and why. File is relative to the imported directory; Line is 0
// when the note concerns a whole file; Key is the LSF key, column or
// section it is about.
type Note struct {
	File string
	Line int
	Key  string
	Msg  string
	// Loss: what was not translated changes who may run what (a limit,
	// an access list, a resource requirement): the import fails on it
	// unless the administrator accepts the loss.
	Loss bool
}

// String returns "lsb.queues:12: CPULIMIT: not translated: ...", and for a
// loss "lsb.resources:18: USERS: policy lost: ...".
func (n Note) String() string {
	var b strings.Builder
	b.WriteString(n.File)
	if n.Line > 0 {
		fmt.Fprintf(&b, ":%d", n.Line)
	}
	b.WriteString(": ")
	if n.Key != "" {
		b.WriteString(n.Key + ": ")
	}
	if n.Loss {
		b.WriteString("policy lost: ")
	}
	b.WriteString(n.Msg)
	return b.String()
}

// File is one LSF configuration file as read: its sections in order, and
// the KEY = VALUE lines outside any section (lsf.conf has only those).
type File struct {
	Name     string
	Sections []*Section
	Params   []Param
}

// Section is one "Begin Name" ... "End Name" block. A horizontal section
// has Params; a vertical (table) one has Columns and Rows.
type Section struct {
	Name    string
	File    string
	Line    int
	Params  []Param
	Columns []string
	Rows    []Row
}

// Param is one "KEY = VALUE" line (continuations joined). Value has its
// comment and surrounding blanks removed, and the quotes around it when
// the whole value is one double-quoted string.
type Param struct {
	Key   string
	Value string
	File  string
	Line  int
}

// Row is one record of a vertical section. Fields are raw, one per
// column, parentheses kept ("(hostA hostB)"); a row shorter than the
// header has "" for the missing fields.
type Row struct {
	Fields []string
	File   string
	Line   int
}

// Get returns the field of column col (case-insensitive) and whether the
// section has that column.
func (s *Section) Get(r Row, col string) (string, bool) {
	for i, c := range s.Columns {
		if strings.EqualFold(c, col) {
			if i < len(r.Fields) {
				return r.Fields[i], true
			}
			return "", true
		}
	}
	return "", false
}

// Param returns the last value of key (case-insensitive).
func (s *Section) Param(key string) (Param, bool) {
	var p Param
	ok := false
	for _, q := range s.Params {
		if strings.EqualFold(q.Key, key) {
			p, ok = q, true
		}
	}
	return p, ok
}

// Empty reports whether a field or value means "not set": "", "()" or "-".
func Empty(field string) bool {
	f := strings.TrimSpace(field)
	return f == "" || f == "-" || strings.Trim(f, "() \t") == "" && strings.HasPrefix(f, "(")
}

// List splits a value or field into its words: "(hostA hostB)" and
// "hostA hostB" are both [hostA hostB]; "()" and "-" are nil. Brackets
// keep their contents in one word ("[user1, 5]").
func List(field string) []string {
	f := strings.TrimSpace(field)
	if Empty(f) {
		return nil
	}
	if strings.HasPrefix(f, "(") && strings.HasSuffix(f, ")") {
		f = f[1 : len(f)-1]
	}
	return tokens(f)
}

// Unquote removes one pair of double quotes around s.
func Unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && !strings.Contains(s[1:len(s)-1], `"`) {
		return s[1 : len(s)-1]
	}
	return s
}

// tokens splits s at blanks outside parentheses, brackets and double
// quotes.
func tokens(s string) []string {
	var out []string
	var cur strings.Builder
	depth, quoted := 0, false
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case quoted:
		case r == '(' || r == '[':
			depth++
		case (r == ')' || r == ']') && depth > 0:
			depth--
		case (r == ' ' || r == '\t') && depth == 0:
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return out
}

// line is one logical line: comment removed, continuations joined.
type line struct {
	text string
	file string
	num  int
}

// includeFunc reads the file an #INCLUDE names.
type includeFunc func(path string) ([]byte, error)

var includeRE = regexp.MustCompile(`^\s*#INCLUDE\s+"?([^"]+)"?\s*$`)

// logicalLines splits data into logical lines. An #INCLUDE line is
// replaced by the lines of the file it names (when include is not nil).
func logicalLines(name string, data []byte, include includeFunc, depth int) ([]line, []Note) {
	var out []line
	var notes []Note
	raw := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var cur strings.Builder
	start := 0
	for i, l := range raw {
		n := i + 1
		if cur.Len() == 0 {
			start = n
			if m := includeRE.FindStringSubmatch(l); m != nil {
				notes = append(notes, includeLines(name, n, m[1], include, depth, &out)...)
				continue
			}
		}
		l = strings.TrimRight(stripComment(l), " \t")
		if strings.HasSuffix(l, `\`) {
			cur.WriteString(strings.TrimSuffix(l, `\`))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(l)
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, line{text: t, file: name, num: start})
		}
		cur.Reset()
	}
	if t := strings.TrimSpace(cur.String()); t != "" {
		out = append(out, line{text: t, file: name, num: start})
	}
	return out, notes
}

func includeLines(name string, n int, path string, include includeFunc, depth int, out *[]line) []Note {
	if include == nil {
		return []Note{{File: name, Line: n, Key: "#INCLUDE", Msg: "not followed: " + path, Loss: true}}
	}
	if depth > 10 {
		return []Note{{File: name, Line: n, Key: "#INCLUDE", Msg: "not followed: includes nested too deep: " + path, Loss: true}}
	}
	data, err := include(path)
	if err != nil {
		return []Note{{File: name, Line: n, Key: "#INCLUDE", Msg: "cannot read the included file: " + err.Error(), Loss: true}}
	}
	lines, notes := logicalLines(path, data, include, depth+1)
	*out = append(*out, lines...)
	return notes
}

// stripComment removes a '#' comment outside double quotes.
func stripComment(l string) string {
	quoted := false
	for i, r := range l {
		switch r {
		case '"':
			quoted = !quoted
		case '#':
			if !quoted {
				return l[:i]
			}
		}
	}
	return l
}

var (
	beginRE = regexp.MustCompile(`(?i)^begin\s+(\S+)$`)
	endRE   = regexp.MustCompile(`(?i)^end\s+(\S+)$`)
	paramRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_/]*)\s*=\s*(.*)$`)
)

// Parse reads one LSF configuration file (name is what its notes and
// sections carry). #INCLUDE lines are not followed; ReadFile follows them.
// Syntax it cannot make sense of becomes a Note.
func Parse(name string, data []byte) (*File, []Note) {
	return parse(name, data, nil)
}

// ReadFile reads the file at path, following #INCLUDE lines (relative
// paths from the file's directory); name is what its notes carry.
func ReadFile(path, name string) (*File, []Note, error) {
	data, err := config.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	include := func(p string) ([]byte, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		return config.ReadFile(p)
	}
	f, notes := parse(name, data, include)
	return f, notes, nil
}

func parse(name string, data []byte, include includeFunc) (*File, []Note) {
	lines, notes := logicalLines(name, data, include, 0)
	f := &File{Name: name}
	var sec *Section
	for _, l := range lines {
		if m := beginRE.FindStringSubmatch(l.text); m != nil {
			if sec != nil {
				notes = append(notes, Note{File: sec.File, Line: sec.Line, Key: sec.Name, Msg: "section has no End line before line " + fmt.Sprint(l.num) + "; ended there"})
				f.Sections = append(f.Sections, sec)
			}
			sec = &Section{Name: m[1], File: l.file, Line: l.num}
			continue
		}
		if m := endRE.FindStringSubmatch(l.text); m != nil {
			switch {
			case sec == nil:
				notes = append(notes, Note{File: l.file, Line: l.num, Key: m[1], Msg: "End without Begin; ignored"})
			default:
				if !strings.EqualFold(m[1], sec.Name) {
					notes = append(notes, Note{File: l.file, Line: l.num, Key: sec.Name, Msg: fmt.Sprintf("section ended by End %s; taken as its end", m[1])})
				}
				f.Sections = append(f.Sections, sec)
				sec = nil
			}
			continue
		}
		if sec == nil {
			if m := paramRE.FindStringSubmatch(l.text); m != nil {
				f.Params = append(f.Params, Param{Key: m[1], Value: Unquote(m[2]), File: l.file, Line: l.num})
			} else {
				notes = append(notes, Note{File: l.file, Line: l.num, Msg: fmt.Sprintf("line outside any section ignored: %q", l.text)})
			}
			continue
		}
		if sec.Columns == nil {
			if m := paramRE.FindStringSubmatch(l.text); m != nil {
				sec.Params = append(sec.Params, Param{Key: m[1], Value: Unquote(m[2]), File: l.file, Line: l.num})
				continue
			}
			if len(sec.Params) > 0 {
				notes = append(notes, Note{File: l.file, Line: l.num, Key: sec.Name, Msg: fmt.Sprintf("not a KEY = VALUE line in a keyword section; ignored: %q", l.text)})
				continue
			}
			sec.Columns = tokens(l.text)
			continue
		}
		fields := tokens(l.text)
		if len(fields) > len(sec.Columns) {
			notes = append(notes, Note{File: l.file, Line: l.num, Key: sec.Name, Msg: fmt.Sprintf("row has %d fields for %d columns; the extra ones are ignored", len(fields), len(sec.Columns))})
			fields = fields[:len(sec.Columns)]
		}
		for len(fields) < len(sec.Columns) {
			fields = append(fields, "")
		}
		sec.Rows = append(sec.Rows, Row{Fields: fields, File: l.file, Line: l.num})
	}
	if sec != nil {
		notes = append(notes, Note{File: sec.File, Line: sec.Line, Key: sec.Name, Msg: "section has no End line; ended at the end of the file"})
		f.Sections = append(f.Sections, sec)
	}
	return f, notes
}
