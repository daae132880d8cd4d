package sched

import "xce/lib/resreq"

// splitAnd returns the terms of e joined by top-level && (through
// parentheses).
func splitAnd(e resreq.Expr) []resreq.Expr {
	switch x := e.(type) {
	case nil:
		return nil
	case *resreq.Paren:
		if _, ok := x.X.(*resreq.Binary); ok && x.X.(*resreq.Binary).Op == resreq.OpAnd {
			return splitAnd(x.X)
		}
	case *resreq.Binary:
		if x.Op == resreq.OpAnd {
			return append(splitAnd(x.X), splitAnd(x.Y)...)
		}
	}
	return []resreq.Expr{e}
}

// cmpTerm is "resource op number".
type cmpTerm struct {
	name string
	op   string
}

func asCmp(e resreq.Expr) *cmpTerm {
	for {
		p, ok := e.(*resreq.Paren)
		if !ok {
			break
		}
		e = p.X
	}
	b, ok := e.(*resreq.Binary)
	if !ok {
		return nil
	}
	id, ok1 := b.X.(*resreq.Ident)
	_, ok2 := b.Y.(*resreq.Num)
	if !ok1 || !ok2 {
		return nil
	}
	return &cmpTerm{name: id.Name, op: b.Op.String()}
}
