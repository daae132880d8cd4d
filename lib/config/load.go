package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Error is one mistake in a configuration file: "xce.toml:12:
// queues.short.max_mem: ...". Line is 0 when the mistake has no single
// place (a missing section); Key is "" when it has no key.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every mistake found in one file, in line order. Its text is
// one mistake per line.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Load reads and validates the configuration file at path. Its error, when
// the file is readable, is an Errors naming file, line and key of every
// mistake.
func Load(path string) (*Config, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads and validates a configuration; name is the file name its
// errors carry.
func Parse(name string, data []byte) (*Config, error) {
	c := &Config{File: name}
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	err := dec.Decode(c)
	lines := keyLines(data)
	es := lines.checkUnits(name)
	if err != nil {
		es = append(decodeErrors(name, data, err), es...)
	}
	if len(es) > 0 {
		slices.SortStableFunc(es, func(a, b *Error) int { return a.Line - b.Line })
		return nil, es
	}
	_, c.hostFailureTimeoutSet = lines["cluster.host_failure_timeout"]
	if err := c.finish(); err != nil {
		var es Errors
		if errors.As(err, &es) {
			for _, e := range es {
				e.File = name
				e.Line = lines.find(e.Key)
			}
			slices.SortStableFunc(es, func(a, b *Error) int { return a.Line - b.Line })
		}
		return nil, err
	}
	return c, nil
}

// decodeErrors turns go-toml's errors into Errors.
func decodeErrors(name string, doc []byte, err error) Errors {
	var missing *toml.StrictMissingError
	if errors.As(err, &missing) {
		var es Errors
		for i := range missing.Errors {
			de := &missing.Errors[i]
			line, _ := de.Position()
			k := de.Key()
			// Name the first part of the key that is unknown.
			for n := 1; n <= len(k); n++ {
				if typeAt(k[:n]) == nil {
					k = k[:n]
					break
				}
			}
			msg := "unknown key"
			if strings.HasSuffix(de.Error(), "missing table") || len(k) < len(de.Key()) {
				msg = "unknown table"
			}
			if s := suggest(k); s != "" {
				msg += "; did you mean " + s + "?"
			} else if known := knownKeys(k); known != "" {
				msg += "; expected one of " + known
			}
			es = append(es, &Error{File: name, Line: line, Key: strings.Join(k, "."), Msg: msg})
		}
		return es
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if m := mismatch.FindStringSubmatch(msg); m != nil {
			msg = "expected " + describe(typeAt(de.Key())) + ", found " + article(m[1])
		}
		key := strings.Join(de.Key(), ".")
		if t := tableAt(doc, line); t != "" && len(de.Key()) == 1 && key != t {
			key = t + "." + key
		}
		if strings.Contains(msg, "already") {
			msg = "defined twice"
			if first := keyLines(doc).find(key); first > 0 && first < line {
				msg = fmt.Sprintf("defined twice (first on line %d)", first)
			}
		}
		return Errors{{File: name, Line: line, Key: key, Msg: msg}}
	}
	return Errors{{File: name, Msg: err.Error()}}
}

var mismatch = regexp.MustCompile(`^cannot decode TOML (\S+) into`)

var (
	memoryType   = reflect.TypeFor[Memory]()
	durationType = reflect.TypeFor[Duration]()
	windowType   = reflect.TypeFor[Window]()
)

// describe names what a value of type t is written as in TOML.
func describe(t reflect.Type) string {
	switch {
	case t == nil:
		return "another kind of value"
	case t == memoryType:
		return `an amount of memory such as "64GB"`
	case t == durationType:
		return `a duration such as "90m"`
	case t == windowType:
		return `a time window such as "20:00-08:00"`
	}
	switch t.Kind() {
	case reflect.Pointer:
		return describe(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(describe(t.Elem()), "a "), "an ") + "s"
	case reflect.Map, reflect.Struct:
		return "a table"
	case reflect.Interface:
		return "a value"
	}
	return t.String()
}

func article(kind string) string {
	switch kind {
	case "integer", "array", "inline", "float":
		return "an " + kind
	}
	return "a " + kind
}

// typeAt returns the Go type that key decodes into, or nil.
func typeAt(key []string) reflect.Type {
	t := reflect.TypeFor[Config]()
	for _, k := range key {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map, reflect.Slice:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByTag(t, k)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	return t
}

// checkUnits rejects bare numbers where a memory amount or a duration is
// expected: go-toml would store them as they are, in KB or seconds,
// without a word.
func (l lineIndex) checkUnits(name string) Errors {
	var es Errors
	for _, key := range slices.Sorted(maps.Keys(l)) {
		ki := l[key]
		if ki.kind != unstable.Integer && ki.kind != unstable.Float {
			continue
		}
		if t := typeAt(ki.path); t == memoryType || t == durationType {
			es = append(es, &Error{File: name, Line: ki.line, Key: key,
				Msg: "expected " + describe(t) + " (a number needs its unit)"})
		}
	}
	return es
}

// tableAt returns the table whose body holds line, as far as the document
// parses: go-toml names a key of a syntax error without its table.
func tableAt(doc []byte, line int) string {
	p := &unstable.Parser{}
	p.Reset(doc)
	table := ""
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != unstable.Table && e.Kind != unstable.ArrayTable {
			continue
		}
		k := e.Key()
		if !k.Next() || p.Shape(k.Node().Raw).Start.Line > line {
			break
		}
		table = strings.Join(keyParts(e.Key()), ".")
	}
	return table
}

// fieldsAt returns the TOML keys of the struct that holds the last element
// of key, or nil when key does not lead through Config's structs.
func fieldsAt(key []string) []string {
	t := reflect.TypeFor[Config]()
	for _, k := range key[:len(key)-1] {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem() // k names an element
			continue
		case reflect.Struct:
		default:
			return nil
		}
		f, ok := fieldByTag(t, k)
		if !ok {
			return nil
		}
		t = f.Type
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for f := range t.Fields() {
		if tag := f.Tag.Get("toml"); tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if f.Tag.Get("toml") == tag {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// suggest returns the known key closest to the last element of key when
// it looks like a misspelling.
func suggest(key []string) string {
	if len(key) == 0 {
		return ""
	}
	last := key[len(key)-1]
	best, bestD := "", 3
	for _, k := range fieldsAt(key) {
		if d := editDistance(last, k); d < bestD || d == bestD && best == "" && d <= len(last)/3 {
			if d <= max(1, len(last)/3) {
				best, bestD = k, d
			}
		}
	}
	return best
}

func knownKeys(key []string) string {
	if len(key) == 0 {
		return ""
	}
	return strings.Join(fieldsAt(key), ", ")
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lineIndex maps dotted keys to where they are set.
type lineIndex map[string]keyInfo

type keyInfo struct {
	line int
	kind unstable.Kind // of the value; Invalid for a table header
	path []string
}

// find returns the line of key, or of its closest parent that has one.
func (l lineIndex) find(key string) int {
	for key != "" {
		if n, ok := l[key]; ok {
			return n.line
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// keyLines indexes the keys of a document that decoded without error.
func keyLines(data []byte) lineIndex {
	idx := lineIndex{}
	p := &unstable.Parser{}
	p.Reset(data)
	var table []string
	arrays := map[string]int{} // [[name]] tables seen: their keys are name.N.key
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			table = keyParts(e.Key())
			idx.add(p, table, e)
		case unstable.ArrayTable:
			table = keyParts(e.Key())
			name := strings.Join(table, ".")
			table = append(table, fmt.Sprint(arrays[name]))
			arrays[name]++
			idx.add(p, table, e)
		case unstable.KeyValue:
			idx.keyValue(p, table, e)
		}
	}
	return idx
}

func (l lineIndex) keyValue(p *unstable.Parser, table []string, kv *unstable.Node) {
	path := append(slices.Clone(table), keyParts(kv.Key())...)
	l.add(p, path, kv)
	v := kv.Value()
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			l.keyValue(p, path, it.Node())
		}
	case unstable.Array:
		it := v.Children()
		for i := 0; it.Next(); i++ {
			if it.Node().Kind == unstable.InlineTable {
				continue
			}
			l.add(p, append(slices.Clone(path), fmt.Sprint(i)), it.Node())
		}
	}
}

func (l lineIndex) add(p *unstable.Parser, path []string, n *unstable.Node) {
	r := n.Raw
	switch n.Kind {
	case unstable.KeyValue, unstable.Table, unstable.ArrayTable:
		if k := n.Key(); k.Next() {
			r = k.Node().Raw
		}
	}
	kind := unstable.Invalid
	if n.Kind == unstable.KeyValue {
		kind = n.Value().Kind
	}
	if _, ok := l[strings.Join(path, ".")]; !ok {
		l[strings.Join(path, ".")] = keyInfo{line: p.Shape(r).Start.Line, kind: kind, path: path}
	}
}

func keyParts(it unstable.Iterator) []string {
	var out []string
	for it.Next() {
		out = append(out, string(it.Node().Data))
	}
	return out
}
