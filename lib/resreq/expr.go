package resreq

import (
	"strings"
)

// The select expression: lexer, recursive-descent parser and the checks
// that give resources their kinds.

type tokKind uint8

const (
	tEOF tokKind = iota
	tNum
	tWord
	tStr
	tOp    // an operator: op is set
	tBadOp // an operator LSF does not have: text is set
	tLParen
	tRParen
	tOther // any other character (']' ends a select[])
)

type token struct {
	kind tokKind
	pos  int
	end  int
	text string
	num  Num
	op   Op // for tOp; OpSub doubles as unary minus, OpNot is '!'
}

func (p *parser) peekTok() token {
	if p.tokOK {
		return p.tok
	}
	p.skipWS()
	p.tok = p.lex()
	p.tokOK = true
	return p.tok
}

func (p *parser) nextTok() token {
	t := p.peekTok()
	p.pos = t.end
	p.tokOK = false
	return t
}

func (p *parser) lex() token {
	i := p.pos
	t := token{pos: i, end: i + 1}
	if i >= len(p.src) {
		t.kind, t.end = tEOF, i
		return t
	}
	c := p.src[i]
	next := byte(0)
	if i+1 < len(p.src) {
		next = p.src[i+1]
	}
	op := func(o Op, n int) token {
		t.kind, t.op, t.end = tOp, o, i+n
		return t
	}
	bad := func(n int) token {
		t.kind, t.text, t.end = tBadOp, p.src[i:i+n], i+n
		return t
	}
	switch c {
	case '(':
		t.kind = tLParen
		return t
	case ')':
		t.kind = tRParen
		return t
	case '*':
		return op(OpMul, 1)
	case '/':
		return op(OpDiv, 1)
	case '+':
		return op(OpAdd, 1)
	case '-':
		return op(OpSub, 1)
	case '>':
		switch next {
		case '=':
			return op(OpGE, 2)
		case '>', '<':
			return bad(2)
		}
		return op(OpGT, 1)
	case '<':
		switch next {
		case '=':
			return op(OpLE, 2)
		case '>', '<':
			return bad(2)
		}
		return op(OpLT, 1)
	case '=':
		switch next {
		case '=':
			return op(OpEQ, 2)
		case '>', '<', '!':
			return bad(2)
		}
		return bad(1)
	case '!':
		if next == '=' {
			return op(OpNE, 2)
		}
		return op(OpNot, 1)
	case '&':
		if next == '&' {
			return op(OpAnd, 2)
		}
		return bad(1)
	case '|':
		if next == '|' {
			return op(OpOr, 2)
		}
		return bad(1)
	case '\'', '"':
		j := strings.IndexByte(p.src[i+1:], c)
		if j < 0 {
			p.fail(i, "missing closing %c for the string opened here", c)
		}
		t.kind, t.text, t.end = tStr, p.src[i+1:i+1+j], i+2+j
		return t
	}
	if isDigit(c) || c == '.' && isDigit(next) {
		save := p.pos
		p.pos = i
		if n, ok := p.number(); ok {
			t.kind, t.num, t.end = tNum, n, p.pos
			p.pos = save
			return t
		}
		p.pos = save
	}
	if isWordChar(c) {
		j := i
		for j < len(p.src) && isWordChar(p.src[j]) {
			j++
		}
		t.kind, t.text, t.end = tWord, p.src[i:j], j
		return t
	}
	t.kind = tOther
	return t
}

// describeTok names a token for messages.
func (p *parser) describeTok(t token) string {
	switch t.kind {
	case tEOF:
		return "the end of the string"
	case tStr:
		return "'" + t.text + "'"
	}
	if t.kind == tOther {
		return p.describe(t.pos)
	}
	return "'" + p.src[t.pos:t.end] + "'"
}

// parseSelectExpr parses a selection string; bracketed means it is inside
// select[...] and must end at ']'.
func (p *parser) parseSelectExpr(bracketed bool, open int) Expr {
	p.tokOK = false
	p.cols = p.cols[:0]
	p.colMap = nil
	t := p.peekTok()
	if bracketed && t.kind == tOther && p.src[t.pos] == ']' {
		p.fail(t.pos, "empty select[]: expected a selection string such as mem>4000")
	}
	e := p.parseBinary(1, "")
	if bracketed {
		t := p.peekTok()
		if !(t.kind == tOther && p.src[t.pos] == ']') {
			switch t.kind {
			case tEOF:
				p.fail(t.pos, "missing ']' to close 'select[' opened at column %d", p.colOf(open))
			case tBadOp:
				p.failBadOp(t)
			case tRParen:
				p.fail(t.pos, "unbalanced ')': no '(' to close")
			}
			p.fail(t.pos, "unexpected %s in select[]: expected an operator such as && or ']'", p.describeTok(t))
		}
	} else if t := p.peekTok(); t.kind == tBadOp {
		p.failBadOp(t)
	} else if t.kind == tRParen {
		p.fail(t.pos, "unbalanced ')': no '(' to close")
	}
	p.tokOK = false
	p.checkLogical(e)
	return e
}

func (p *parser) failBadOp(t token) {
	hint := ""
	switch t.text {
	case "=":
		hint = ": use '==' to compare"
	case "=>":
		hint = ": use '>='"
	case "=<":
		hint = ": use '<='"
	case "=!":
		hint = ": use '!='"
	case "<>":
		hint = ": use '!='"
	case "&":
		hint = ": use '&&'"
	case "|":
		hint = ": use '||'"
	}
	p.fail(t.pos, "unknown operator '%s'%s", t.text, hint)
}

// maxNodes bounds the size of one selection string.
const maxNodes = 10000

func (p *parser) record(e Expr, pos int) Expr {
	if len(p.cols) >= maxNodes {
		p.fail(pos, "selection string too long (more than %d terms)", maxNodes)
	}
	p.cols = append(p.cols, nodeCol{e, pos})
	if p.colMap != nil {
		p.colMap[e] = pos
	}
	return e
}

// posOf returns the byte offset where e was written.
func (p *parser) posOf(e Expr) int {
	if len(p.cols) > 32 {
		if p.colMap == nil {
			p.colMap = make(map[Expr]int, len(p.cols))
			for _, c := range p.cols {
				p.colMap[c.e] = c.pos
			}
		}
		if pos, ok := p.colMap[e]; ok {
			return pos
		}
		return len(p.src)
	}
	for _, c := range p.cols {
		if c.e == e {
			return c.pos
		}
	}
	return len(p.src)
}

// parseBinary parses operators of precedence >= min (precedence climbing;
// all binary operators associate to the left).
func (p *parser) parseBinary(min int, after string) Expr {
	start := p.peekTok().pos
	x := p.parseUnary(after)
	for {
		t := p.peekTok()
		if t.kind == tBadOp {
			p.failBadOp(t)
		}
		if t.kind != tOp || t.op == OpNot {
			return x
		}
		pr := t.op.prec()
		if pr < min {
			return x
		}
		p.nextTok()
		y := p.parseBinary(pr+1, t.op.String())
		x = p.record(&Binary{Op: t.op, X: x, Y: y}, start)
	}
}

func (p *parser) parseUnary(after string) Expr {
	t := p.peekTok()
	if t.kind == tOp && (t.op == OpSub || t.op == OpNot) {
		p.depth++
		if p.depth > maxDepth {
			p.fail(t.pos, "expression nested too deeply")
		}
		p.nextTok()
		op := OpNeg
		if t.op == OpNot {
			op = OpNot
		}
		x := p.parseUnary(t.op.String())
		p.depth--
		return p.record(&Unary{Op: op, X: x}, t.pos)
	}
	return p.parsePrimary(after)
}

func (p *parser) parsePrimary(after string) Expr {
	t := p.peekTok()
	switch t.kind {
	case tNum:
		p.nextTok()
		n := t.num
		return p.record(&n, t.pos)
	case tStr:
		p.nextTok()
		return p.record(&Str{Value: t.text}, t.pos)
	case tWord:
		p.nextTok()
		if nt := p.peekTok(); nt.kind == tLParen {
			if t.text != "defined" {
				p.fail(t.pos, "unknown function '%s': only defined(resource) is supported", t.text)
			}
			p.nextTok()
			p.skipWS()
			npos := p.pos
			name := p.name()
			if name == "" {
				p.fail(npos, "expected a resource name in defined(), found %s", p.describe(npos))
			}
			p.tokOK = false
			if ct := p.peekTok(); ct.kind != tRParen {
				p.fail(ct.pos, "expected ')' to close defined(, found %s", p.describeTok(ct))
			}
			p.nextTok()
			if a, ok := aliases[name]; ok {
				name = a
			}
			return p.record(&Defined{Name: name}, npos)
		}
		return p.record(p.ident(t.text), t.pos)
	case tLParen:
		p.depth++
		if p.depth > maxDepth {
			p.fail(t.pos, "expression nested too deeply")
		}
		p.nextTok()
		x := p.parseBinary(1, "(")
		ct := p.peekTok()
		if ct.kind != tRParen {
			if ct.kind == tBadOp {
				p.failBadOp(ct)
			}
			if ct.kind == tEOF || ct.kind == tOther && p.src[ct.pos] == ']' {
				p.fail(ct.pos, "missing ')' to close '(' opened at column %d", p.colOf(t.pos))
			}
			p.fail(ct.pos, "unexpected %s: expected an operator or ')' to close '(' opened at column %d", p.describeTok(ct), p.colOf(t.pos))
		}
		p.nextTok()
		p.depth--
		return p.record(&Paren{X: x}, t.pos)
	case tBadOp:
		p.failBadOp(t)
	}
	if after != "" {
		p.fail(t.pos, "expected a number or a resource name after '%s'", after)
	}
	p.fail(t.pos, "expected a selection string (a number, a resource name or '('), found %s", p.describeTok(t))
	return nil
}

// ident makes an Ident for a word, with the kind the parser knows.
func (p *parser) ident(word string) *Ident {
	name := word
	if a, ok := aliases[name]; ok {
		name = a
	}
	r, _, ok := p.schema.Lookup(name)
	if !ok {
		return &Ident{Name: word}
	}
	return &Ident{Name: word, Kind: r.Kind}
}

// ---------------------------------------------------------------------------
// Checks. They give every Ident its canonical name, turn the bare words
// compared with string resources into Str values, and reject what LSF
// rejects.

func isStringIdent(e Expr) bool {
	id, ok := e.(*Ident)
	return ok && id.Kind == String
}

// checkLogical checks an operand of &&, || or !, or a whole selection.
func (p *parser) checkLogical(e Expr) {
	switch e := e.(type) {
	case *Paren:
		p.checkLogical(e.X)
	case *Unary:
		if e.Op == OpNot {
			p.checkLogical(e.X)
			return
		}
		p.checkValue(e, false, "")
	case *Binary:
		switch {
		case e.Op.isLogical():
			p.checkLogical(e.X)
			p.checkLogical(e.Y)
		case e.Op.isCompare():
			p.checkCompare(e)
		default:
			p.checkValue(e, false, "")
		}
	default:
		p.checkValue(e, false, "")
	}
}

// checkCompare checks a comparison.
func (p *parser) checkCompare(b *Binary) {
	if b.Op == OpEQ || b.Op == OpNE {
		switch {
		case isStringIdent(b.X):
			p.finishIdent(b.X.(*Ident))
			b.Y = p.asString(b.Y, b.X.(*Ident).Name)
			return
		case isStringIdent(b.Y):
			p.finishIdent(b.Y.(*Ident))
			b.X = p.asString(b.X, b.Y.(*Ident).Name)
			return
		}
		// Neither side is a known string resource. A word that cannot be
		// a resource name is a string value; the other side must then be
		// a resource the parser does not know (resolved when compiled).
		xs, ys := p.stringish(b.X), p.stringish(b.Y)
		if xs && ys {
			p.fail(p.posOf(b.X), "compare a string resource with a value, not two values")
		}
		if xs || ys {
			other := b.Y
			if xs {
				b.X = p.asString(b.X, "")
			} else {
				b.Y = p.asString(b.Y, "")
				other = b.X
			}
			if id, ok := other.(*Ident); ok {
				p.finishIdent(id)
				if id.Kind == Unknown {
					return
				}
			}
			p.fail(p.posOf(other), "a string value can only be compared with a string resource such as type or hname")
		}
	} else {
		for _, side := range []Expr{b.X, b.Y} {
			if isStringIdent(side) {
				id := side.(*Ident)
				p.fail(p.posOf(side), "%s is a string resource: it can only be compared with == or !=", id.Name)
			}
			if _, ok := side.(*Str); ok {
				p.fail(p.posOf(side), "operator '%s' compares numbers, not strings", b.Op)
			}
		}
	}
	unitRes := ""
	if p.mentionsUnits(b.X) || p.mentionsUnits(b.Y) {
		unitRes = "ok"
	} else if n := p.numericName(b.X); n != "" {
		unitRes = n
	} else if n := p.numericName(b.Y); n != "" {
		unitRes = n
	}
	p.checkValue(b.X, unitRes == "ok", unitRes)
	p.checkValue(b.Y, unitRes == "ok", unitRes)
	// A bare amount compared with a memory resource is in the cluster's
	// unit (mem > 4000 is 4000 KB under LSF_UNIT_FOR_LIMITS=KB).
	if unitRes == "ok" && p.memUnit != NoUnit {
		for _, side := range []Expr{b.X, b.Y} {
			if n, ok := side.(*Num); ok && n.Unit == NoUnit {
				n.Unit = p.memUnit
			}
		}
	}
}

// stringish reports whether e is a string value: a quoted string, or a
// word that cannot be a resource name (LINUX2.6, 64bit).
func (p *parser) stringish(e Expr) bool {
	switch e := e.(type) {
	case *Str:
		return true
	case *Ident:
		return e.Kind == Unknown && !validName(e.Name)
	}
	return false
}

// asString turns the other side of a comparison with string resource res
// into a Str.
func (p *parser) asString(e Expr, res string) Expr {
	switch v := e.(type) {
	case *Str:
		return v
	case *Ident:
		s := &Str{Value: v.Name}
		p.record(s, p.posOf(v))
		return s
	}
	if res == "" {
		p.fail(p.posOf(e), "expected a string value")
	}
	p.fail(p.posOf(e), "%s is a string resource: compare it with a word or a quoted value; quote values that contain '-' or other symbols, as in %s == 'a-b'", res, res)
	return nil
}

// finishIdent gives a resource name its canonical spelling, after checking
// that it is known.
func (p *parser) finishIdent(id *Ident) {
	if a, ok := aliases[id.Name]; ok {
		id.Name = a
		return
	}
	if id.Kind != Unknown {
		return
	}
	if !validName(id.Name) {
		p.fail(p.posOf(id), "'%s' is not a number or a resource name; quote string values ('%s')", id.Name, id.Name)
	}
	if sectionNames[id.Name] {
		p.fail(p.posOf(id), "'%s' is a section name, not a resource: write %s[...]", id.Name, id.Name)
	}
	if p.strict {
		p.fail(p.posOf(id), "unknown resource name '%s'", id.Name)
	}
}

// mentionsUnits reports whether e names a resource that takes memory
// units (or one whose units the parser does not know).
func (p *parser) mentionsUnits(e Expr) bool {
	switch e := e.(type) {
	case *Ident:
		if e.Kind == Unknown {
			return !p.strict && validName(e.Name)
		}
		r, _, _ := p.schema.Lookup(e.Name)
		return r.Units
	case *Paren:
		return p.mentionsUnits(e.X)
	case *Unary:
		return e.Op == OpNeg && p.mentionsUnits(e.X)
	case *Binary:
		if e.Op.isArith() {
			return p.mentionsUnits(e.X) || p.mentionsUnits(e.Y)
		}
	}
	return false
}

// numericName returns the first numeric resource e names, for messages.
func (p *parser) numericName(e Expr) string {
	switch e := e.(type) {
	case *Ident:
		if e.Kind == Numeric {
			if a, ok := aliases[e.Name]; ok {
				return a
			}
			return e.Name
		}
	case *Paren:
		return p.numericName(e.X)
	case *Unary:
		if e.Op != OpNeg {
			return ""
		}
		return p.numericName(e.X)
	case *Binary:
		if e.Op.isArith() {
			if n := p.numericName(e.X); n != "" {
				return n
			}
			return p.numericName(e.Y)
		}
	}
	return ""
}

// checkValue checks an operand used as a number. unitOK says whether a
// number with a unit may appear; res names the resource compared, for
// the message when it may not.
func (p *parser) checkValue(e Expr, unitOK bool, res string) {
	switch e := e.(type) {
	case *Num:
		if e.Unit != NoUnit && !unitOK {
			if res != "" && res != "ok" {
				p.fail(p.posOf(e), "%s takes no unit; units (KB, MB, GB, ...) apply to memory resources such as mem, swp and tmp", res)
			}
			p.fail(p.posOf(e), "a number with a unit must be compared with a memory resource, as in mem > 4GB")
		}
	case *Str:
		p.fail(p.posOf(e), "a quoted string can only be compared with == or != to a string resource such as hname")
	case *Ident:
		if e.Kind == String {
			p.fail(p.posOf(e), "%s is a string resource: compare it with == or !=, as in %s == value", e.Name, e.Name)
		}
		p.finishIdent(e)
	case *Defined:
		if !validName(e.Name) || sectionNames[e.Name] {
			p.fail(p.posOf(e), "'%s' is not a resource name", e.Name)
		}
		if _, _, ok := p.schema.Lookup(e.Name); !ok && p.strict {
			p.fail(p.posOf(e), "unknown resource name '%s' in defined()", e.Name)
		}
	case *Paren:
		switch x := e.X.(type) {
		case *Binary:
			if x.Op.isLogical() || x.Op.isCompare() {
				p.checkLogical(x)
				return
			}
		case *Unary:
			if x.Op == OpNot {
				p.checkLogical(x)
				return
			}
		}
		p.checkValue(e.X, unitOK, res)
	case *Unary:
		if e.Op == OpNot {
			p.checkLogical(e.X)
			return
		}
		p.checkValue(e.X, unitOK, res)
	case *Binary:
		switch {
		case e.Op.isLogical():
			p.checkLogical(e)
		case e.Op.isCompare():
			p.checkCompare(e)
		default:
			p.checkValue(e.X, unitOK, res)
			p.checkValue(e.Y, unitOK, res)
		}
	}
}
