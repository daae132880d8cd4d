package resreq

import (
	"fmt"
	"math"
)

// Local is what "local" stands for in type==local and model==local: the
// submission host's type and model.
type Local struct {
	Type  string
	Model string
}

// evalFn computes a value for a host: a number, 1/0 for a condition, or
// NaN when the value depends on a resource the host does not define.
type evalFn func(h *Host) float64

// Selector is a compiled select expression.
type Selector struct {
	eval evalFn
	text string
}

// Match reports whether the host satisfies the selection. A nil Selector
// (no select) matches every host. Match does not allocate.
func (s *Selector) Match(h *Host) bool {
	if s == nil || s.eval == nil {
		return true
	}
	v := s.eval(h)
	return v != 0 && v == v
}

// String returns the canonical form of the compiled expression.
func (s *Selector) String() string {
	if s == nil {
		return ""
	}
	return s.text
}

var nan = math.NaN()

func truth(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Compile compiles a select expression against the schema. A nil
// expression compiles to a Selector that matches every host. local gives
// the values of type==local and model==local; it is needed only when the
// expression uses them.
//
// Semantics (LSF's, with one choice made where LSF documents none): a
// Boolean resource is 1 on hosts that have it and 0 elsewhere. A numeric
// or string resource that a host does not define makes every comparison
// that uses it unknown, and an unknown condition does not select the host,
// even under '!': a host is never selected for a value it does not have.
// defined(r) is the way to test for presence. && and || short-circuit:
// "defined(x) && x > 1" and "x > 1 || mem > 100" behave as written.
func (s *Schema) Compile(e Expr, local Local) (*Selector, error) {
	if e == nil {
		return &Selector{}, nil
	}
	c := compiler{s: s, local: local}
	f, err := c.value(e)
	if err != nil {
		return nil, err
	}
	return &Selector{eval: f, text: ExprString(e)}, nil
}

type compiler struct {
	s     *Schema
	local Local
}

func (c *compiler) lookup(name string) (Resource, int, error) {
	r, i, ok := c.s.Lookup(name)
	if !ok {
		return r, 0, fmt.Errorf("unknown resource name '%s'", name)
	}
	return r, i, nil
}

func (c *compiler) value(e Expr) (evalFn, error) {
	switch e := e.(type) {
	case *Num:
		v := e.MB()
		return func(*Host) float64 { return v }, nil
	case *Str:
		return nil, fmt.Errorf("the string '%s' can only be compared with a string resource", e.Value)
	case *Ident:
		r, i, err := c.lookup(e.Name)
		if err != nil {
			return nil, err
		}
		switch r.Kind {
		case Numeric:
			return func(h *Host) float64 { return h.Num[i] }, nil
		case Boolean:
			return func(h *Host) float64 {
				if h.Bool[i] {
					return 1
				}
				return 0
			}, nil
		}
		return nil, fmt.Errorf("%s is a string resource: compare it with == or !=", r.Name)
	case *Defined:
		r, i, ok := c.s.Lookup(e.Name)
		if !ok {
			return func(*Host) float64 { return 0 }, nil
		}
		switch r.Kind {
		case Numeric:
			return func(h *Host) float64 { return truth(h.Num[i] == h.Num[i]) }, nil
		case String:
			return func(h *Host) float64 { return truth(h.Str[i] != "") }, nil
		}
		return func(h *Host) float64 { return truth(h.Bool[i]) }, nil
	case *Paren:
		return c.value(e.X)
	case *Unary:
		x, err := c.value(e.X)
		if err != nil {
			return nil, err
		}
		if e.Op == OpNeg {
			return func(h *Host) float64 { return -x(h) }, nil
		}
		return func(h *Host) float64 {
			v := x(h)
			if v != v {
				return v
			}
			return truth(v == 0)
		}, nil
	case *Binary:
		return c.binary(e)
	}
	return nil, fmt.Errorf("unexpected expression %T", e)
}

func (c *compiler) binary(e *Binary) (evalFn, error) {
	if e.Op == OpEQ || e.Op == OpNE {
		if f, ok, err := c.stringCompare(e); ok || err != nil {
			return f, err
		}
	}
	if e.Op.isCompare() && (hasUnit(e.X) || hasUnit(e.Y)) && !c.takesUnits(e.X) && !c.takesUnits(e.Y) {
		return nil, fmt.Errorf("a number with a unit in %s must be compared with a resource that takes units, such as mem", ExprString(e))
	}
	// A numeric resource compared with a constant: the common case.
	if e.Op.isCompare() {
		if id, ok := unparen(e.X).(*Ident); ok {
			if n, ok := unparen(e.Y).(*Num); ok {
				if r, i, err := c.lookup(id.Name); err == nil && r.Kind == Numeric {
					return numConst(e.Op, i, n.MB()), nil
				}
			}
		}
	}
	x, err := c.value(e.X)
	if err != nil {
		return nil, err
	}
	y, err := c.value(e.Y)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case OpAnd:
		return func(h *Host) float64 {
			a := x(h)
			if a == 0 {
				return 0
			}
			b := y(h)
			if b == 0 {
				return 0
			}
			if a != a || b != b {
				return nan
			}
			return 1
		}, nil
	case OpOr:
		return func(h *Host) float64 {
			a := x(h)
			if a != 0 && a == a {
				return 1
			}
			b := y(h)
			if b != 0 && b == b {
				return 1
			}
			if a != a || b != b {
				return nan
			}
			return 0
		}, nil
	case OpMul:
		return func(h *Host) float64 { return x(h) * y(h) }, nil
	case OpDiv:
		return func(h *Host) float64 { return x(h) / y(h) }, nil
	case OpAdd:
		return func(h *Host) float64 { return x(h) + y(h) }, nil
	case OpSub:
		return func(h *Host) float64 { return x(h) - y(h) }, nil
	}
	cmp := compareFn(e.Op)
	return func(h *Host) float64 {
		a, b := x(h), y(h)
		if a != a || b != b {
			return nan
		}
		return truth(cmp(a, b))
	}, nil
}

func unparen(e Expr) Expr {
	for {
		p, ok := e.(*Paren)
		if !ok {
			return e
		}
		e = p.X
	}
}

func compareFn(op Op) func(a, b float64) bool {
	switch op {
	case OpGT:
		return func(a, b float64) bool { return a > b }
	case OpLT:
		return func(a, b float64) bool { return a < b }
	case OpGE:
		return func(a, b float64) bool { return a >= b }
	case OpLE:
		return func(a, b float64) bool { return a <= b }
	case OpEQ:
		return func(a, b float64) bool { return a == b }
	}
	return func(a, b float64) bool { return a != b }
}

// numConst compiles "resource op constant" without indirection.
func numConst(op Op, i int, k float64) evalFn {
	switch op {
	case OpGT:
		return func(h *Host) float64 {
			v := h.Num[i]
			if v != v {
				return nan
			}
			return truth(v > k)
		}
	case OpLT:
		return func(h *Host) float64 {
			v := h.Num[i]
			if v != v {
				return nan
			}
			return truth(v < k)
		}
	case OpGE:
		return func(h *Host) float64 {
			v := h.Num[i]
			if v != v {
				return nan
			}
			return truth(v >= k)
		}
	case OpLE:
		return func(h *Host) float64 {
			v := h.Num[i]
			if v != v {
				return nan
			}
			return truth(v <= k)
		}
	case OpEQ:
		return func(h *Host) float64 {
			v := h.Num[i]
			if v != v {
				return nan
			}
			return truth(v == k)
		}
	}
	return func(h *Host) float64 {
		v := h.Num[i]
		if v != v {
			return nan
		}
		return truth(v != k)
	}
}

// stringCompare compiles == or != when one side is a string resource. ok
// is false when neither side is one.
func (c *compiler) stringCompare(e *Binary) (evalFn, bool, error) {
	strRes := func(x Expr) (Resource, int, bool) {
		id, ok := x.(*Ident)
		if !ok {
			return Resource{}, 0, false
		}
		r, i, found := c.s.Lookup(id.Name)
		return r, i, found && r.Kind == String
	}
	rx, ix, okx := strRes(e.X)
	ry, iy, oky := strRes(e.Y)
	var res Resource
	var idx int
	var other Expr
	switch {
	case okx:
		res, idx, other = rx, ix, e.Y
	case oky:
		res, idx, other = ry, iy, e.X
	default:
		if _, isStr := e.X.(*Str); isStr {
			return nil, false, c.notString(e.Y)
		}
		if _, isStr := e.Y.(*Str); isStr {
			return nil, false, c.notString(e.X)
		}
		return nil, false, nil
	}
	ne := e.Op == OpNE
	var val string
	switch o := other.(type) {
	case *Str:
		val = o.Value
	case *Ident:
		val = o.Name
	default:
		return nil, true, fmt.Errorf("%s is a string resource: compare it with a word or a quoted value", res.Name)
	}
	if res.Name == "type" || res.Name == "model" {
		switch val {
		case "any":
			v := truth(!ne)
			return func(*Host) float64 { return v }, true, nil
		case "local":
			val = c.local.Type
			if res.Name == "model" {
				val = c.local.Model
			}
			if val == "" {
				return nil, true, fmt.Errorf("%s==local needs the submission host's %s", res.Name, res.Name)
			}
		}
	}
	return func(h *Host) float64 {
		s := h.Str[idx]
		if s == "" {
			return nan
		}
		return truth((s == val) != ne)
	}, true, nil
}

func (c *compiler) notString(e Expr) error {
	if id, ok := e.(*Ident); ok {
		r, _, err := c.lookup(id.Name)
		if err != nil {
			return err
		}
		return fmt.Errorf("%s is a %s resource; it cannot be compared with a string", r.Name, r.Kind)
	}
	return fmt.Errorf("a string value can only be compared with a string resource")
}

// hasUnit reports whether the arithmetic expression e has a number with a
// unit.
func hasUnit(e Expr) bool {
	switch e := e.(type) {
	case *Num:
		return e.Unit != NoUnit
	case *Paren:
		return hasUnit(e.X)
	case *Unary:
		return e.Op == OpNeg && hasUnit(e.X)
	case *Binary:
		return e.Op.isArith() && (hasUnit(e.X) || hasUnit(e.Y))
	}
	return false
}

// takesUnits reports whether the arithmetic expression e names a resource
// that takes memory units.
func (c *compiler) takesUnits(e Expr) bool {
	switch e := e.(type) {
	case *Ident:
		r, _, ok := c.s.Lookup(e.Name)
		return ok && r.Units
	case *Paren:
		return c.takesUnits(e.X)
	case *Unary:
		return e.Op == OpNeg && c.takesUnits(e.X)
	case *Binary:
		return e.Op.isArith() && (c.takesUnits(e.X) || c.takesUnits(e.Y))
	}
	return false
}
