package resreq

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Option changes how Parse reads a string.
type Option func(*parser)

// WithSchema makes Parse check every resource name against the schema's
// resources (built-in and site): an unknown name is an error, and a site
// resource's kind and units are known. Without it only the built-in
// resources are known and other names are accepted as they are.
func WithSchema(s *Schema) Option {
	return func(p *parser) {
		if s != nil {
			p.schema = s
			p.strict = true
			p.memUnit = s.memUnit
		}
	}
}

// maxDepth bounds the nesting of parentheses and unary operators.
const maxDepth = 100

// MaxLength bounds a requirement string, in bytes: every section's lists
// and alternatives are bounded by it (a selection string also by
// maxNodes terms).
const MaxLength = 64 << 10

// Parse parses a resource requirement string (bsub -R, RES_REQ). The empty
// string (or only blanks) is a simple requirement with no section.
func Parse(s string, opts ...Option) (r *ResReq, err error) {
	p := &parser{src: s, schema: builtinSchema}
	for _, o := range opts {
		o(p)
	}
	defer func() {
		if x := recover(); x != nil {
			se, ok := x.(*SyntaxError)
			if !ok {
				panic(x)
			}
			r, err = nil, se
		}
	}()
	return p.parseTop(), nil
}

// MustParse is Parse for strings known to be valid; it panics on error.
func MustParse(s string, opts ...Option) *ResReq {
	r, err := Parse(s, opts...)
	if err != nil {
		panic(fmt.Sprintf("resreq.MustParse(%q): %v", s, err))
	}
	return r
}

type nodeCol struct {
	e   Expr
	pos int
}

type parser struct {
	src    string
	pos    int
	schema *Schema
	strict bool
	depth  int
	cols   []nodeCol // byte offset of every expression node, for errors
	colMap map[Expr]int
	tok    token // lookahead of the expression lexer
	tokOK  bool
	// memUnit: the unit given to a bare memory amount (Schema.WithMemUnit).
	memUnit Unit
}

// fail stops parsing with an error at byte offset pos.
func (p *parser) fail(pos int, format string, args ...any) {
	if pos > len(p.src) {
		pos = len(p.src)
	}
	col := utf8.RuneCountInString(p.src[:pos]) + 1
	panic(&SyntaxError{Col: col, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) peekByte() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordChar(c byte) bool { return isLetter(c) || isDigit(c) || c == '.' }

func (p *parser) skipWS() {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

// describe names what is at pos, for messages.
func (p *parser) describe(pos int) string {
	if pos >= len(p.src) {
		return "the end of the string"
	}
	c := p.src[pos]
	if strings.HasPrefix(p.src[pos:], "&&") || strings.HasPrefix(p.src[pos:], "||") {
		return "'" + p.src[pos:pos+2] + "'"
	}
	if isLetter(c) || isDigit(c) {
		end := pos
		for end < len(p.src) && isWordChar(p.src[end]) {
			end++
		}
		return "'" + p.src[pos:end] + "'"
	}
	r, _ := utf8.DecodeRuneInString(p.src[pos:])
	if r == utf8.RuneError {
		return fmt.Sprintf("byte %#x", c)
	}
	return "'" + string(r) + "'"
}

func (p *parser) expect(c byte, context string) {
	p.skipWS()
	if p.peekByte() != c {
		p.fail(p.pos, "expected '%c' %s, found %s", c, context, p.describe(p.pos))
	}
	p.pos++
}

// atLeastOne reads a whole number for what and fails, pointing at it,
// when it is 0: "WHAT must be at least 1".
func (p *parser) atLeastOne(what string) int {
	p.skipWS()
	pos := p.pos
	n := p.integer(what)
	if n <= 0 {
		p.fail(pos, "%s must be at least 1", what)
	}
	return n
}

// name reads a resource-like name [A-Za-z_][A-Za-z0-9_]*.
func (p *parser) name() string {
	start := p.pos
	if p.pos < len(p.src) && isLetter(p.src[p.pos]) {
		p.pos++
		for p.pos < len(p.src) && (isLetter(p.src[p.pos]) || isDigit(p.src[p.pos])) {
			p.pos++
		}
	}
	return p.src[start:p.pos]
}

// value reads a word value (cu type, host type in ptile): letters, digits,
// '_', '.', '-'.
func (p *parser) value() string {
	start := p.pos
	for p.pos < len(p.src) && (isWordChar(p.src[p.pos]) || p.src[p.pos] == '-') {
		p.pos++
	}
	return p.src[start:p.pos]
}

// integer reads a non-negative decimal integer.
func (p *parser) integer(what string) int {
	p.skipWS()
	start := p.pos
	for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
		p.pos++
	}
	if start == p.pos {
		if p.peekByte() == '-' {
			p.fail(start, "%s must not be negative", what)
		}
		p.fail(start, "expected a whole number for %s, found %s", what, p.describe(start))
	}
	if p.pos < len(p.src) && (isLetter(p.src[p.pos]) || p.src[p.pos] == '.') {
		p.fail(start, "expected a whole number for %s, found %s", what, p.describe(start))
	}
	n, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil || n > 1<<30 {
		p.fail(start, "%s %s is too large", what, p.src[start:p.pos])
	}
	return n
}

// ---------------------------------------------------------------------------
// Top level: simple, compound, alternative.

func (p *parser) parseTop() *ResReq {
	if len(p.src) > MaxLength {
		p.fail(0, "requirement too long: %d bytes; at most %d", len(p.src), MaxLength)
	}
	p.skipWS()
	if t := strings.TrimSpace(p.src); len(t) > 1 && (t[0] == '"' || t[0] == '\'') && t[len(t)-1] == t[0] &&
		strings.IndexByte(t[1:len(t)-1], t[0]) < 0 {
		p.fail(p.pos, "the whole requirement is in quotes: remove them (quotes go only around string values, as in hname=='host-1')")
	}
	var r *ResReq
	switch {
	case p.eof():
		return &ResReq{Simple: &Simple{}}
	case p.peekByte() == '{':
		r = p.parseAlternatives()
	case p.compoundAhead():
		r = &ResReq{Compound: p.parseCompound()}
	default:
		s := p.parseSimple(false)
		r = &ResReq{Simple: s}
	}
	p.skipWS()
	if !p.eof() {
		if strings.HasPrefix(p.src[p.pos:], "||") {
			p.fail(p.pos, "'||' between requirements needs braces: {...} || {...}")
		}
		if p.peekByte() == '+' {
			p.fail(p.pos, "'+' joins compound terms written as n*{...}: 2*{...} + 4*{...}")
		}
		p.fail(p.pos, "unexpected %s after the requirement", p.describe(p.pos))
	}
	return r
}

// compoundAhead reports whether the text at pos starts "N*{" (blanks
// allowed around '*').
func (p *parser) compoundAhead() bool {
	i := p.pos
	if i >= len(p.src) || !isDigit(p.src[i]) {
		return false
	}
	for i < len(p.src) && isDigit(p.src[i]) {
		i++
	}
	for i < len(p.src) && isSpace(p.src[i]) {
		i++
	}
	if i >= len(p.src) || p.src[i] != '*' {
		return false
	}
	i++
	for i < len(p.src) && isSpace(p.src[i]) {
		i++
	}
	return i < len(p.src) && p.src[i] == '{'
}

func (p *parser) parseAlternatives() *ResReq {
	var alts []Alternative
	for {
		p.skipWS()
		open := p.pos
		p.expect('{', "to start an alternative")
		p.skipWS()
		var inner *ResReq
		if p.compoundAhead() {
			inner = &ResReq{Compound: p.parseCompound()}
		} else {
			if p.peekByte() == '{' {
				p.fail(p.pos, "alternatives cannot be nested; write {a} || {b} || {c}")
			}
			inner = &ResReq{Simple: p.parseSimple(true)}
			if cu := inner.Simple.CU; cu != nil && (cu.Balance || cu.Excl) {
				p.fail(open, "cu[balance] and cu[excl] are not allowed in an alternative requirement")
			}
		}
		p.skipWS()
		if p.peekByte() != '}' {
			if p.eof() {
				p.fail(p.pos, "missing '}' to close '{' opened at column %d", p.colOf(open))
			}
			p.fail(p.pos, "expected '}' to close the alternative opened at column %d, found %s", p.colOf(open), p.describe(p.pos))
		}
		p.pos++
		alt := Alternative{Req: inner}
		if p.peekByte() == '@' {
			p.pos++
			alt.Delay = p.integer("the delay after '@' (minutes)")
		}
		alts = append(alts, alt)
		p.skipWS()
		if !strings.HasPrefix(p.src[p.pos:], "||") {
			break
		}
		p.pos += 2
		p.skipWS()
		if p.peekByte() != '{' {
			p.fail(p.pos, "expected '{' to start the alternative after '||', found %s", p.describe(p.pos))
		}
	}
	if len(alts) == 1 && alts[0].Delay == 0 {
		return alts[0].Req
	}
	return &ResReq{Alternatives: alts}
}

func (p *parser) colOf(pos int) int { return utf8.RuneCountInString(p.src[:pos]) + 1 }

func (p *parser) parseCompound() []Term {
	var terms []Term
	for {
		p.skipWS()
		start := p.pos
		n := p.atLeastOne("the slot count of a compound term")
		p.expect('*', "after the slot count of a compound term")
		p.expect('{', "after '*' in a compound term")
		open := p.pos - 1
		p.skipWS()
		t := Term{Count: n}
		if p.peekByte() == '-' {
			p.pos++
		} else {
			if p.peekByte() == '{' {
				p.fail(p.pos, "a compound term holds a simple requirement; braces cannot be nested")
			}
			t.Req = *p.parseSimple(true)
		}
		p.skipWS()
		if p.peekByte() != '}' {
			if p.eof() {
				p.fail(p.pos, "missing '}' to close '{' opened at column %d", p.colOf(open))
			}
			p.fail(p.pos, "expected '}' to close the term opened at column %d, found %s", p.colOf(open), p.describe(p.pos))
		}
		p.pos++
		if t.Req.Rusage != nil && len(t.Req.Rusage.Or) > 1 {
			p.fail(start, "rusage alternatives ('||') are not allowed in a compound term")
		}
		if t.Req.CU != nil && (t.Req.CU.Balance || t.Req.CU.Excl) {
			p.fail(start, "cu[balance] and cu[excl] are not allowed in a compound term")
		}
		terms = append(terms, t)
		p.skipWS()
		if p.peekByte() != '+' {
			break
		}
		plus := p.pos
		p.pos++
		p.skipWS()
		if !p.compoundAhead() {
			p.fail(p.pos, "expected a term like 4*{...} after '+' at column %d", p.colOf(plus))
		}
	}
	return terms
}

// ---------------------------------------------------------------------------
// Simple requirement: sections.

// sectionAhead returns the name at pos and whether it is followed
// (after blanks) by '['. It does not move.
func (p *parser) sectionAhead() (string, int, bool) {
	i := p.pos
	for i < len(p.src) && (isLetter(p.src[i]) || isDigit(p.src[i])) {
		i++
	}
	if i == p.pos || isDigit(p.src[p.pos]) {
		return "", 0, false
	}
	name := p.src[p.pos:i]
	for i < len(p.src) && isSpace(p.src[i]) {
		i++
	}
	if i < len(p.src) && p.src[i] == '[' {
		return name, i, true
	}
	return "", 0, false
}

func (p *parser) parseSimple(inBraces bool) *Simple {
	s := &Simple{}
	first := true
	seen := map[string]int{}
	for {
		p.skipWS()
		if p.eof() || inBraces && p.peekByte() == '}' {
			break
		}
		start := p.pos
		name, bracket, ok := p.sectionAhead()
		if !ok {
			if !first && (strings.HasPrefix(p.src[p.pos:], "||") || p.peekByte() == '+') {
				// Reported by the caller.
				break
			}
			switch p.peekByte() {
			case '[':
				p.fail(p.pos, "'[' without a section name: write select[...], order[...], rusage[...], ...")
			case ']':
				p.fail(p.pos, "unbalanced ']': no '[' to close")
			}
			if !first && strings.HasPrefix(p.src[p.pos:], "&&") {
				p.fail(p.pos, "'&&' joins conditions inside one select[]: select[a && b]")
			}
			if !first {
				if inBraces {
					p.fail(p.pos, "unexpected %s: expected a section such as order[...] or '}'", p.describe(p.pos))
				}
				p.fail(p.pos, "unexpected %s: expected a section such as order[...]; a selection string without select[] must come first", p.describe(p.pos))
			}
			// Section-less selection string.
			e := p.parseSelectExpr(false, 0)
			s.Select = e
			seen["select"] = start
			first = false
			continue
		}
		first = false
		switch name {
		case "select", "order", "span", "same", "cu", "affinity":
			if prev, dup := seen[name]; dup {
				if name == "select" {
					p.fail(start, "a second selection string (the first is at column %d): combine conditions with && in one select[]", p.colOf(prev))
				}
				p.fail(start, "%s[] given twice (first at column %d)", name, p.colOf(prev))
			}
			seen[name] = start
		case "rusage":
		default:
			p.fail(start, "unknown section '%s': expected select, order, rusage, span, same, cu or affinity", name)
		}
		p.pos = bracket + 1
		open := bracket
		var ru *Rusage
		switch name {
		case "select":
			s.Select = p.parseSelectExpr(true, open)
		case "order":
			s.Order = p.parseOrder()
		case "rusage":
			ru = p.parseRusage()
		case "span":
			s.Span = p.parseSpan()
		case "same":
			s.Same = p.parseSame()
		case "cu":
			s.CU = p.parseCU()
		case "affinity":
			s.Affinity = p.parseAffinity()
		}
		p.skipWS()
		if p.peekByte() != ']' {
			if p.eof() {
				p.fail(p.pos, "missing ']' to close '%s[' opened at column %d", name, p.colOf(open))
			}
			p.fail(p.pos, "unexpected %s in %s[]: expected ']' to close '%s[' opened at column %d", p.describe(p.pos), name, name, p.colOf(open))
		}
		p.pos++
		if ru != nil {
			// "rusage[a] || rusage[b]": alternatives written as sections.
			for {
				save := p.pos
				p.skipWS()
				if !strings.HasPrefix(p.src[p.pos:], "||") {
					p.pos = save
					break
				}
				p.pos += 2
				p.skipWS()
				n, br, ok := p.sectionAhead()
				if !ok || n != "rusage" {
					p.pos = save
					break
				}
				p.pos = br + 1
				more := p.parseRusage()
				p.skipWS()
				if p.peekByte() != ']' {
					p.fail(p.pos, "missing ']' to close 'rusage[' opened at column %d", p.colOf(br))
				}
				p.pos++
				ru.Or = append(ru.Or, more.Or...)
			}
			if s.Rusage == nil {
				s.Rusage = ru
			} else {
				s.Rusage = p.joinRusage(start, s.Rusage, ru)
			}
		}
	}
	return s
}

// joinRusage combines two rusage sections of one string: every usage
// string of both is reserved. Only one of them may have alternatives.
func (p *parser) joinRusage(pos int, a, b *Rusage) *Rusage {
	ru, err := joinRusage(a, b)
	if err != nil {
		p.fail(pos, "%v", err)
	}
	return ru
}

// duplicate returns a resource named twice in the set, or "".
func (set UsageSet) duplicate() string {
	var names []string
	for _, u := range set {
		for _, r := range u.Resources {
			for _, n := range names {
				if n == r.Name {
					return n
				}
			}
			names = append(names, r.Name)
		}
	}
	return ""
}

// resource resolves an alias and checks a name used outside select.
func (p *parser) resource(pos int, name, section string) Resource {
	if name == "" {
		p.fail(pos, "expected a resource name in %s[], found %s", section, p.describe(pos))
	}
	if a, ok := aliases[name]; ok {
		name = a
	}
	r, _, ok := p.schema.Lookup(name)
	if !ok {
		if p.strict {
			p.fail(pos, "unknown resource name '%s' in %s[]", name, section)
		}
		return Resource{Name: name}
	}
	return r
}

func (p *parser) parseOrder() *Order {
	o := &Order{}
	p.skipWS()
	if p.peekByte() == '!' {
		o.Resort = true
		p.pos++
	}
	for {
		p.skipWS()
		if p.peekByte() == ']' && len(o.Keys) == 0 {
			p.fail(p.pos, "empty order[]: name at least one resource, as in order[r15s:pg]")
		}
		k := OrderKey{}
		if p.peekByte() == '-' {
			k.Reverse = true
			p.pos++
			p.skipWS()
		}
		start := p.pos
		r := p.resource(start, p.name(), "order")
		if r.Kind == String || r.Kind == Boolean {
			p.fail(start, "order[] sorts by numeric resources; %s is a %s resource", r.Name, r.Kind)
		}
		k.Name = r.Name
		for _, prev := range o.Keys {
			if prev.Name == k.Name {
				p.fail(start, "%s appears twice in order[]", k.Name)
			}
		}
		o.Keys = append(o.Keys, k)
		p.skipWS()
		if p.peekByte() != ':' {
			break
		}
		p.pos++
	}
	return o
}

func (p *parser) parseSame() []string {
	var out []string
	for {
		p.skipWS()
		start := p.pos
		if p.peekByte() == ']' && len(out) == 0 {
			p.fail(p.pos, "empty same[]: name at least one resource, as in same[type]")
		}
		r := p.resource(start, p.name(), "same")
		for _, prev := range out {
			if prev == r.Name {
				p.fail(start, "%s appears twice in same[]", r.Name)
			}
		}
		out = append(out, r.Name)
		p.skipWS()
		if p.peekByte() != ':' {
			break
		}
		p.pos++
	}
	return out
}
