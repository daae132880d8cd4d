package resreq

import (
	"strconv"
	"strings"
)

// String returns the canonical form of r: sections in the order select,
// order, rusage, span, same, cu, affinity, one blank between them, blanks
// around binary operators, aliases replaced, units spelled KB/MB/GB...
// Parsing the canonical form gives r back. A nil r prints as "".
func (r *ResReq) String() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	r.write(&b)
	return b.String()
}

func (r *ResReq) write(b *strings.Builder) {
	switch {
	case r.Alternatives != nil:
		for i, a := range r.Alternatives {
			if i > 0 {
				b.WriteString(" || ")
			}
			b.WriteByte('{')
			if a.Req != nil {
				a.Req.write(b)
			}
			b.WriteByte('}')
			if a.Delay > 0 {
				b.WriteByte('@')
				b.WriteString(strconv.Itoa(a.Delay))
			}
		}
	case r.Compound != nil:
		for i, t := range r.Compound {
			if i > 0 {
				b.WriteString(" + ")
			}
			b.WriteString(strconv.Itoa(t.Count))
			b.WriteString("*{")
			if t.Req.Empty() {
				b.WriteByte('-')
			} else {
				t.Req.write(b)
			}
			b.WriteByte('}')
		}
	case r.Simple != nil:
		r.Simple.write(b)
	}
}

// String returns the canonical form of the sections of s.
func (s *Simple) String() string {
	var b strings.Builder
	s.write(&b)
	return b.String()
}

func (s *Simple) write(b *strings.Builder) {
	first := true
	section := func(name string) {
		if !first {
			b.WriteByte(' ')
		}
		first = false
		b.WriteString(name)
		b.WriteByte('[')
	}
	if s.Select != nil {
		section("select")
		writeExpr(b, s.Select, 0, false)
		b.WriteByte(']')
	}
	if s.Order != nil {
		section("order")
		s.Order.write(b)
		b.WriteByte(']')
	}
	if s.Rusage != nil {
		section("rusage")
		s.Rusage.write(b)
		b.WriteByte(']')
	}
	if s.Span != nil {
		section("span")
		s.Span.write(b)
		b.WriteByte(']')
	}
	if s.Same != nil {
		section("same")
		b.WriteString(strings.Join(s.Same, ":"))
		b.WriteByte(']')
	}
	if s.CU != nil {
		section("cu")
		s.CU.write(b)
		b.WriteByte(']')
	}
	if s.Affinity != nil {
		section("affinity")
		s.Affinity.write(b)
		b.WriteByte(']')
	}
}

// ExprString returns the canonical form of a select expression.
func ExprString(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e, 0, false)
	return b.String()
}

func formatNum(b *strings.Builder, n *Num) {
	b.WriteString(strconv.FormatFloat(n.Value, 'f', -1, 64))
	b.WriteString(n.Unit.String())
}

// bareWord reports whether s reads back as a single word token.
func bareWord(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordChar(s[i]) {
			return false
		}
	}
	return true
}

func writeStr(b *strings.Builder, s string, bare bool) {
	if bare && bareWord(s) {
		b.WriteString(s)
		return
	}
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 {
		q = '"'
	}
	b.WriteByte(q)
	b.WriteString(s)
	b.WriteByte(q)
}

// writeExpr writes e; min is the lowest binary precedence that may appear
// unparenthesized, rightOp whether e is the right operand of an operator
// of precedence min-... (then equal precedence needs parentheses too).
func writeExpr(b *strings.Builder, e Expr, min int, right bool) {
	switch e := e.(type) {
	case *Num:
		formatNum(b, e)
	case *Str:
		writeStr(b, e.Value, false)
	case *Ident:
		b.WriteString(e.Name)
	case *Defined:
		b.WriteString("defined(")
		b.WriteString(e.Name)
		b.WriteByte(')')
	case *Paren:
		b.WriteByte('(')
		writeExpr(b, e.X, 0, false)
		b.WriteByte(')')
	case *Unary:
		b.WriteString(e.Op.String())
		writeExpr(b, e.X, 6, false)
	case *Binary:
		pr := e.Op.prec()
		wrap := pr < min || pr == min && right
		if wrap {
			b.WriteByte('(')
		}
		if e.Op == OpEQ || e.Op == OpNE {
			writeEqSide(b, e.X, e.Y, pr, false)
		} else {
			writeExpr(b, e.X, pr, false)
		}
		b.WriteByte(' ')
		b.WriteString(e.Op.String())
		b.WriteByte(' ')
		if e.Op == OpEQ || e.Op == OpNE {
			writeEqSide(b, e.Y, e.X, pr, true)
		} else {
			writeExpr(b, e.Y, pr, true)
		}
		if wrap {
			b.WriteByte(')')
		}
	}
}

// writeEqSide writes one side of == or !=. A string value on the right
// of a string resource is written bare (type == X86_64), since parsing
// turns that word back into a string; elsewhere it is quoted.
func writeEqSide(b *strings.Builder, side, other Expr, pr int, right bool) {
	s, ok := side.(*Str)
	if !ok {
		writeExpr(b, side, pr, right)
		return
	}
	writeStr(b, s.Value, right && isStringIdent(other))
}

func (o *Order) write(b *strings.Builder) {
	if o.Resort {
		b.WriteByte('!')
	}
	for i, k := range o.Keys {
		if i > 0 {
			b.WriteByte(':')
		}
		if k.Reverse {
			b.WriteByte('-')
		}
		b.WriteString(k.Name)
	}
}

// String returns the text inside rusage[...].
func (ru *Rusage) String() string {
	var b strings.Builder
	ru.write(&b)
	return b.String()
}

func (ru *Rusage) write(b *strings.Builder) {
	for i, set := range ru.Or {
		if i > 0 {
			b.WriteString(" || ")
		}
		for j := range set {
			if j > 0 {
				b.WriteString(", ")
			}
			set[j].write(b)
		}
	}
}

func (u *Usage) write(b *strings.Builder) {
	for i, r := range u.Resources {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(r.Name)
		b.WriteByte('=')
		if len(r.Amounts) == 1 {
			formatNum(b, &r.Amounts[0])
		} else {
			b.WriteByte('(')
			for j := range r.Amounts {
				if j > 0 {
					b.WriteByte(' ')
				}
				formatNum(b, &r.Amounts[j])
			}
			b.WriteByte(')')
		}
		if r.Method != "" {
			b.WriteByte('/')
			b.WriteString(r.Method)
		}
	}
	if len(u.Durations) > 0 {
		b.WriteString(":duration=")
		if len(u.Durations) > 1 {
			b.WriteByte('(')
		}
		for i, d := range u.Durations {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatInt(d.N, 10))
			if d.Unit != 0 {
				b.WriteByte(d.Unit)
			}
		}
		if len(u.Durations) > 1 {
			b.WriteByte(')')
		}
	}
	if len(u.Decays) > 0 {
		b.WriteString(":decay=")
		if len(u.Decays) > 1 {
			b.WriteByte('(')
		}
		for i, d := range u.Decays {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(d))
		}
		if len(u.Decays) > 1 {
			b.WriteByte(')')
		}
	}
}

func (sp *Span) write(b *strings.Builder) {
	switch {
	case sp.Hosts != 0:
		b.WriteString("hosts=")
		b.WriteString(strconv.Itoa(sp.Hosts))
	case sp.Ptile > 0 || sp.PtileMXJ || len(sp.PtileBy) > 0:
		b.WriteString("ptile=")
		n := 0
		if sp.PtileMXJ {
			b.WriteString("'!'")
			n++
		} else if sp.Ptile > 0 {
			b.WriteString(strconv.Itoa(sp.Ptile))
			n++
		}
		for _, t := range sp.PtileBy {
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			b.WriteString(t.Type)
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(t.Slots))
		}
	case sp.Block > 0:
		b.WriteString("block=")
		b.WriteString(strconv.Itoa(sp.Block))
	case sp.Stripe:
		b.WriteString("stripe")
		if sp.StripeMax > 0 {
			b.WriteByte('=')
			b.WriteString(strconv.Itoa(sp.StripeMax))
		}
	}
}

// String writes the section as cu[...] (pending reasons name it).
func (cu *CU) String() string {
	var b strings.Builder
	b.WriteString("cu[")
	cu.write(&b)
	b.WriteByte(']')
	return b.String()
}

func (cu *CU) write(b *strings.Builder) {
	n := 0
	item := func(s string) {
		if n > 0 {
			b.WriteByte(':')
		}
		n++
		b.WriteString(s)
	}
	if cu.Type != "" {
		item("type=" + cu.Type)
	}
	if cu.Pref != "" {
		item("pref=" + cu.Pref)
	}
	if cu.MaxCUs > 0 {
		item("maxcus=" + strconv.Itoa(cu.MaxCUs))
	}
	if cu.UsableCUSlots > 0 {
		item("usablecuslots=" + strconv.Itoa(cu.UsableCUSlots))
	}
	if cu.Balance {
		item("balance")
	}
	if cu.Excl {
		item("excl")
	}
}

func (a *Affinity) write(b *strings.Builder) {
	b.WriteString(a.PU)
	if a.PUNum > 0 {
		b.WriteByte('(')
		b.WriteString(strconv.Itoa(a.PUNum))
		if a.Same != "" {
			b.WriteString(",same=")
			b.WriteString(a.Same)
		}
		if len(a.Exclusive) > 0 {
			b.WriteString(",exclusive=(")
			b.WriteString(strings.Join(a.Exclusive, ","))
			b.WriteByte(')')
		}
		b.WriteByte(')')
	}
	if a.Count > 0 {
		b.WriteByte('*')
		b.WriteString(strconv.Itoa(a.Count))
	}
	if a.CPUBind != "" {
		b.WriteString(":cpubind=")
		b.WriteString(a.CPUBind)
	}
	if a.MemBind != "" {
		b.WriteString(":membind=")
		b.WriteString(a.MemBind)
	}
	if a.Distribute != "" {
		b.WriteString(":distribute=")
		b.WriteString(a.Distribute)
	}
}
