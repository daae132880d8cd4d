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
		n := p.integer("the slot count of a compound term")
		if n <= 0 {
			p.fail(start, "the slot count of a compound term must be at least 1")
		}
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

// ---------------------------------------------------------------------------
// rusage

func (p *parser) parseRusage() *Rusage {
	ru := &Rusage{}
	for {
		setStart := p.pos
		var set UsageSet
		for {
			set = append(set, p.parseUsage())
			p.skipWS()
			if p.peekByte() != ',' {
				break
			}
			p.pos++
		}
		if dup := set.duplicate(); dup != "" {
			p.fail(setStart, "%s is reserved twice in rusage; a resource may appear once in a usage string", dup)
		}
		ru.Or = append(ru.Or, set)
		p.skipWS()
		if !strings.HasPrefix(p.src[p.pos:], "||") {
			break
		}
		p.pos += 2
	}
	return ru
}

func (p *parser) parseUsage() Usage {
	var u Usage
	durPos, decPos := -1, -1
	multi := -1 // position of a multi-phase amount list
	for {
		p.skipWS()
		start := p.pos
		if p.peekByte() == ']' || p.eof() {
			p.fail(p.pos, "expected a resource reservation such as mem=4000 in rusage[], found %s", p.describe(p.pos))
		}
		key := p.name()
		if key == "" {
			p.fail(start, "expected a resource name in rusage[], found %s", p.describe(start))
		}
		p.skipWS()
		if p.peekByte() != '=' {
			p.fail(p.pos, "expected '=' and an amount after '%s' in rusage[], found %s", key, p.describe(p.pos))
		}
		p.pos++
		p.skipWS()
		switch key {
		case "duration":
			if durPos >= 0 {
				p.fail(start, "duration given twice in one usage string")
			}
			durPos = start
			u.Durations = p.durations()
		case "decay":
			if decPos >= 0 {
				p.fail(start, "decay given twice in one usage string")
			}
			decPos = start
			u.Decays = p.decays()
		default:
			r := p.resource(start, key, "rusage")
			if r.Kind == String || r.Kind == Boolean {
				p.fail(start, "%s is a %s resource; rusage[] reserves only consumable numeric resources", r.Name, r.Kind)
			}
			if r.Kind == Numeric && !r.Consumable {
				p.fail(start, "%s is not a consumable resource; rusage[] reserves only consumable numeric resources", r.Name)
			}
			ru := ResUsage{Name: r.Name}
			if p.peekByte() == '(' {
				listPos := p.pos
				p.pos++
				for {
					p.skipWS()
					if p.peekByte() == ')' {
						break
					}
					ru.Amounts = append(ru.Amounts, p.amount(r))
					p.skipWS()
					if p.peekByte() == ',' {
						p.pos++
					}
				}
				if len(ru.Amounts) == 0 {
					p.fail(p.pos, "empty amount list for %s", r.Name)
				}
				p.pos++
				if len(ru.Amounts) > 1 {
					multi = listPos
				}
			} else {
				ru.Amounts = []Num{p.amount(r)}
			}
			if p.peekByte() == '/' {
				p.pos++
				mpos := p.pos
				m := p.name()
				switch m {
				case "task", "job", "host":
					ru.Method = m
				default:
					p.fail(mpos, "expected task, job or host after '/' (the reservation method), found %s", p.describe(mpos))
				}
			}
			u.Resources = append(u.Resources, ru)
		}
		p.skipWS()
		if p.peekByte() != ':' {
			break
		}
		p.pos++
	}
	if len(u.Resources) == 0 {
		at := durPos
		if at < 0 || decPos >= 0 && decPos < at {
			at = decPos
		}
		p.fail(at, "duration and decay need a resource to apply to, as in mem=100:duration=10")
	}
	// Multi-phase checks.
	phases := 1
	if multi >= 0 {
		if len(u.Resources) != 1 || u.Resources[0].Name != "mem" {
			p.fail(multi, "a multi-phase reservation (a list of amounts) is supported only for mem, alone in its usage string")
		}
		a := u.Resources[0].Amounts
		phases = len(a)
		for i := 1; i < len(a); i++ {
			if a[i].MB() > a[i-1].MB() {
				p.fail(multi, "the amounts of a multi-phase reservation must stay the same or decrease")
			}
		}
		if len(u.Durations) < phases-1 {
			p.fail(multi, "a multi-phase reservation needs a duration for every phase but the last: duration=(10 20)")
		}
	}
	if len(u.Durations) > phases {
		p.fail(durPos, "%d durations given for %d phase(s)", len(u.Durations), phases)
	}
	if len(u.Decays) > phases {
		p.fail(decPos, "%d decay values given for %d phase(s)", len(u.Decays), phases)
	}
	return u
}

// amount reads a reservation amount for resource r.
func (p *parser) amount(r Resource) Num {
	p.skipWS()
	start := p.pos
	if p.peekByte() == '-' {
		p.fail(start, "negative amount for %s: a reservation must be 0 or more", r.Name)
	}
	n, ok := p.number()
	if !ok {
		p.fail(start, "expected a number for the amount of %s, found %s", r.Name, p.describe(start))
	}
	if n.Unit != NoUnit && r.Kind == Numeric && !r.Units {
		p.fail(start, "%s takes no unit; units (KB, MB, GB, ...) apply to memory resources such as mem, swp and tmp", r.Name)
	}
	if n.Unit == NoUnit && r.Units {
		n.Unit = p.memUnit
	}
	return n
}

// number reads a number with an optional unit. It does not move when no
// number is at pos.
func (p *parser) number() (Num, bool) {
	i := p.pos
	for i < len(p.src) && isDigit(p.src[i]) {
		i++
	}
	if i < len(p.src) && p.src[i] == '.' && i+1 < len(p.src) && isDigit(p.src[i+1]) {
		i++
		for i < len(p.src) && isDigit(p.src[i]) {
			i++
		}
	}
	if i == p.pos {
		return Num{}, false
	}
	text := p.src[p.pos:i]
	j := i
	for j < len(p.src) && isWordChar(p.src[j]) {
		j++
	}
	unit := NoUnit
	if j > i {
		u, ok := parseUnit(p.src[i:j])
		if !ok {
			return Num{}, false
		}
		unit = u
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.fail(p.pos, "number %s is out of range", text)
	}
	p.pos = j
	return Num{Value: v, Unit: unit}, true
}

func parseUnit(s string) (Unit, bool) {
	if len(s) == 0 || len(s) > 2 {
		return NoUnit, false
	}
	if len(s) == 2 && s[1] != 'B' && s[1] != 'b' {
		return NoUnit, false
	}
	switch s[0] {
	case 'K', 'k':
		return KB, true
	case 'M', 'm':
		return MB, true
	case 'G', 'g':
		return GB, true
	case 'T', 't':
		return TB, true
	case 'P', 'p':
		return PB, true
	case 'E', 'e':
		return EB, true
	case 'Z', 'z':
		return ZB, true
	}
	return NoUnit, false
}

func (p *parser) durations() []Duration {
	if p.peekByte() != '(' {
		return []Duration{p.duration()}
	}
	p.pos++
	var out []Duration
	for {
		p.skipWS()
		if p.peekByte() == ')' {
			break
		}
		out = append(out, p.duration())
		p.skipWS()
		if p.peekByte() == ',' {
			p.pos++
		}
	}
	if len(out) == 0 {
		p.fail(p.pos, "empty duration list")
	}
	p.pos++
	return out
}

func (p *parser) duration() Duration {
	p.skipWS()
	start := p.pos
	if p.peekByte() == '-' {
		p.fail(start, "bad duration: it must not be negative")
	}
	i := p.pos
	for i < len(p.src) && isDigit(p.src[i]) {
		i++
	}
	if i == start {
		p.fail(start, "bad duration: expected minutes or a number followed by s, m or h, found %s", p.describe(start))
	}
	n, err := strconv.ParseInt(p.src[start:i], 10, 64)
	if err != nil || n > 1<<31 {
		p.fail(start, "bad duration: %s is too large", p.src[start:i])
	}
	d := Duration{N: n}
	if i < len(p.src) {
		switch p.src[i] {
		case 's', 'm', 'h':
			d.Unit = p.src[i]
			i++
		}
	}
	if i < len(p.src) && isWordChar(p.src[i]) {
		p.fail(start, "bad duration: expected minutes or a number followed by s, m or h, found %s", p.describe(start))
	}
	p.pos = i
	return d
}

func (p *parser) decays() []int {
	one := func() int {
		p.skipWS()
		start := p.pos
		if p.pos < len(p.src) && (p.src[p.pos] == '0' || p.src[p.pos] == '1') &&
			(p.pos+1 >= len(p.src) || !isWordChar(p.src[p.pos+1])) {
			p.pos++
			return int(p.src[start] - '0')
		}
		p.fail(start, "decay must be 0 or 1, found %s", p.describe(start))
		return 0
	}
	if p.peekByte() != '(' {
		return []int{one()}
	}
	p.pos++
	var out []int
	for {
		p.skipWS()
		if p.peekByte() == ')' {
			break
		}
		out = append(out, one())
		p.skipWS()
		if p.peekByte() == ',' {
			p.pos++
		}
	}
	if len(out) == 0 {
		p.fail(p.pos, "empty decay list")
	}
	p.pos++
	return out
}

// ---------------------------------------------------------------------------
// span, cu, affinity

func (p *parser) parseSpan() *Span {
	sp := &Span{}
	p.skipWS()
	start := p.pos
	key := p.name()
	p.skipWS()
	switch key {
	case "hosts":
		p.expect('=', "after hosts in span[]")
		p.skipWS()
		vpos := p.pos
		neg := false
		if p.peekByte() == '-' {
			neg = true
			p.pos++
		}
		n := p.integer("span[hosts=...]")
		if neg {
			n = -n
		}
		if n != 1 && n != -1 {
			p.fail(vpos, "span[hosts=...] accepts only 1 (all slots on one host) or -1 (ignore the queue's span)")
		}
		sp.Hosts = n
	case "ptile":
		p.expect('=', "after ptile in span[]")
		p.parsePtile(sp)
	case "block":
		p.expect('=', "after block in span[]")
		p.skipWS()
		vpos := p.pos
		sp.Block = p.integer("span[block=...]")
		if sp.Block <= 0 {
			p.fail(vpos, "span[block=...] must be at least 1")
		}
	case "stripe":
		sp.Stripe = true
		if p.peekByte() == '=' {
			p.pos++
			p.skipWS()
			vpos := p.pos
			sp.StripeMax = p.integer("span[stripe=...]")
			if sp.StripeMax <= 0 {
				p.fail(vpos, "span[stripe=...] must be at least 1")
			}
		}
	case "":
		if p.peekByte() == ']' {
			p.fail(p.pos, "empty span[]: expected hosts=1, ptile=N, block=N or stripe")
		}
		p.fail(start, "expected hosts=, ptile=, block= or stripe in span[], found %s", p.describe(start))
	default:
		p.fail(start, "unknown span[] keyword '%s': expected hosts, ptile, block or stripe", key)
	}
	p.skipWS()
	if p.peekByte() == ':' || p.peekByte() == ',' {
		p.fail(p.pos, "span[] takes one of hosts=, ptile=, block= or stripe; they cannot be combined")
	}
	return sp
}

func (p *parser) parsePtile(sp *Span) {
	for n := 0; ; n++ {
		p.skipWS()
		start := p.pos
		switch {
		case strings.HasPrefix(p.src[p.pos:], "'!'"), strings.HasPrefix(p.src[p.pos:], "\"!\""):
			if sp.PtileMXJ || sp.Ptile > 0 {
				p.fail(start, "ptile has two default values")
			}
			sp.PtileMXJ = true
			p.pos += 3
		case p.peekByte() == '!':
			if sp.PtileMXJ || sp.Ptile > 0 {
				p.fail(start, "ptile has two default values")
			}
			sp.PtileMXJ = true
			p.pos++
		case isDigit(p.peekByte()) || p.peekByte() == '-':
			if sp.PtileMXJ || sp.Ptile > 0 {
				p.fail(start, "ptile has two default values")
			}
			if p.peekByte() == '-' {
				p.fail(start, "ptile must be a positive number of slots per host")
			}
			v := p.integer("ptile")
			if v <= 0 {
				p.fail(start, "ptile must be a positive number of slots per host")
			}
			sp.Ptile = v
		case isLetter(p.peekByte()):
			t := p.value()
			p.skipWS()
			if p.peekByte() != ':' {
				p.fail(p.pos, "expected ':' and a slot count after host type '%s' in ptile, as in ptile='!',LINUX:2", t)
			}
			p.pos++
			vpos := p.pos
			v := p.integer("the ptile of host type " + t)
			if v <= 0 {
				p.fail(vpos, "ptile must be a positive number of slots per host")
			}
			for _, prev := range sp.PtileBy {
				if prev.Type == t {
					p.fail(start, "host type %s appears twice in ptile", t)
				}
			}
			sp.PtileBy = append(sp.PtileBy, TypeSlots{Type: t, Slots: v})
		default:
			p.fail(start, "expected a number of slots per host after 'ptile=', found %s", p.describe(start))
		}
		p.skipWS()
		if p.peekByte() != ',' {
			return
		}
		p.pos++
	}
}

func (p *parser) parseCU() *CU {
	cu := &CU{}
	seen := map[string]bool{}
	for {
		p.skipWS()
		start := p.pos
		key := p.name()
		if key == "" {
			if p.peekByte() == ']' && len(seen) == 0 {
				p.fail(p.pos, "empty cu[]: expected type=, pref=, maxcus=, usablecuslots=, balance or excl")
			}
			p.fail(start, "expected a cu[] keyword, found %s", p.describe(start))
		}
		if seen[key] {
			p.fail(start, "%s given twice in cu[]", key)
		}
		seen[key] = true
		p.skipWS()
		switch key {
		case "type":
			p.expect('=', "after type in cu[]")
			p.skipWS()
			vpos := p.pos
			cu.Type = p.name()
			if cu.Type == "" {
				p.fail(vpos, "expected a compute unit type after 'type=', found %s", p.describe(vpos))
			}
		case "pref":
			p.expect('=', "after pref in cu[]")
			p.skipWS()
			vpos := p.pos
			cu.Pref = p.name()
			switch cu.Pref {
			case "config", "maxavail", "minavail", "bestfit":
			default:
				p.fail(vpos, "cu[pref=...] must be config, maxavail, minavail or bestfit")
			}
		case "maxcus":
			p.expect('=', "after maxcus in cu[]")
			p.skipWS()
			vpos := p.pos
			cu.MaxCUs = p.integer("maxcus")
			if cu.MaxCUs <= 0 {
				p.fail(vpos, "maxcus must be at least 1")
			}
		case "usablecuslots":
			p.expect('=', "after usablecuslots in cu[]")
			p.skipWS()
			vpos := p.pos
			cu.UsableCUSlots = p.integer("usablecuslots")
			if cu.UsableCUSlots <= 0 {
				p.fail(vpos, "usablecuslots must be at least 1")
			}
		case "balance":
			cu.Balance = true
		case "excl":
			cu.Excl = true
		default:
			p.fail(start, "unknown cu[] keyword '%s': expected type, pref, maxcus, usablecuslots, balance or excl", key)
		}
		p.skipWS()
		if p.peekByte() != ':' {
			return cu
		}
		p.pos++
	}
}

var puTypes = map[string]bool{"numa": true, "socket": true, "core": true, "thread": true, "mcm": true, "cpu": true}

func (p *parser) parseAffinity() *Affinity {
	a := &Affinity{}
	p.skipWS()
	start := p.pos
	a.PU = p.name()
	if !puTypes[a.PU] {
		if a.PU == "" && p.peekByte() == ']' {
			p.fail(start, "empty affinity[]: expected a processor unit such as core(1)")
		}
		p.fail(start, "expected a processor unit type (numa, socket, core or thread) in affinity[], found %s", p.describe(start))
	}
	p.skipWS()
	if p.peekByte() == '(' {
		p.pos++
		p.skipWS()
		vpos := p.pos
		a.PUNum = p.integer("the number of processor units")
		if a.PUNum <= 0 {
			p.fail(vpos, "the number of processor units must be at least 1")
		}
		for {
			p.skipWS()
			if p.peekByte() == ')' {
				p.pos++
				break
			}
			p.expect(',', "or ')' in the processor unit options")
			p.skipWS()
			opos := p.pos
			key := p.name()
			p.expect('=', "after '"+key+"'")
			p.skipWS()
			switch key {
			case "same":
				if a.Same != "" {
					p.fail(opos, "same given twice in affinity[]")
				}
				a.Same = p.puLevel()
			case "exclusive":
				if a.Exclusive != nil {
					p.fail(opos, "exclusive given twice in affinity[]")
				}
				if p.peekByte() == '(' {
					p.pos++
					p.skipWS()
					a.Exclusive = []string{p.puLevel()}
					p.skipWS()
					if p.peekByte() == ',' {
						p.pos++
						p.skipWS()
						spos := p.pos
						scope := p.name()
						switch scope {
						case "alljobs", "injob", "intask":
						default:
							p.fail(spos, "expected alljobs, injob or intask as the exclusive scope, found %s", p.describe(spos))
						}
						a.Exclusive = append(a.Exclusive, scope)
					}
					p.expect(')', "to close exclusive=(...)")
				} else {
					a.Exclusive = []string{p.puLevel()}
				}
			default:
				p.fail(opos, "unknown processor unit option '%s': expected same= or exclusive=", key)
			}
		}
	}
	p.skipWS()
	if p.peekByte() == '*' {
		p.pos++
		p.skipWS()
		vpos := p.pos
		a.Count = p.integer("the processor unit count")
		if a.Count <= 0 {
			p.fail(vpos, "the processor unit count must be at least 1")
		}
	}
	for {
		p.skipWS()
		if p.peekByte() != ':' {
			return a
		}
		p.pos++
		p.skipWS()
		kpos := p.pos
		key := p.name()
		p.expect('=', "after '"+key+"' in affinity[]")
		p.skipWS()
		vpos := p.pos
		switch key {
		case "cpubind":
			if a.CPUBind != "" {
				p.fail(kpos, "cpubind given twice")
			}
			a.CPUBind = p.puLevel()
		case "membind":
			if a.MemBind != "" {
				p.fail(kpos, "membind given twice")
			}
			a.MemBind = p.name()
			if a.MemBind != "localonly" && a.MemBind != "localprefer" {
				p.fail(vpos, "membind must be localonly or localprefer")
			}
		case "distribute":
			if a.Distribute != "" {
				p.fail(kpos, "distribute given twice")
			}
			d := p.name()
			switch d {
			case "anywhere", "pack", "balance":
			default:
				p.fail(vpos, "distribute must be anywhere, pack or balance")
			}
			if d == "pack" && p.peekByte() == '(' {
				p.pos++
				p.skipWS()
				lvl := p.puLevel()
				p.skipWS()
				if p.peekByte() != '=' {
					p.fail(p.pos, "expected '=' after '%s' in pack(...)", lvl)
				}
				p.pos++
				n := p.integer("the pack count")
				p.expect(')', "to close pack(...)")
				d = "pack(" + lvl + "=" + strconv.Itoa(n) + ")"
			}
			a.Distribute = d
		default:
			p.fail(kpos, "unknown affinity[] keyword '%s': expected cpubind, membind or distribute", key)
		}
	}
}

func (p *parser) puLevel() string {
	pos := p.pos
	s := p.name()
	if !puTypes[s] {
		p.fail(pos, "expected numa, socket, core or thread, found %s", p.describe(pos))
	}
	return s
}
