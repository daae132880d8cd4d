package resreq

import "time"

// ResReq is a parsed resource requirement. Exactly one of Simple, Compound
// and Alternatives is set. A requirement with no sections at all (the empty
// string) is a Simple with every field zero.
type ResReq struct {
	// Simple is one requirement for every slot of the job.
	Simple *Simple
	// Compound is "n1*{...} + n2*{...}": each term applies to Count slots.
	Compound []Term
	// Alternatives is "{...} || {...}": the first one that can be
	// satisfied is used. Each alternative is simple or compound.
	Alternatives []Alternative
}

// Term is one "n*{...}" term of a compound requirement. "{-}" is a term
// with an empty Simple.
type Term struct {
	Count int
	Req   Simple
}

// Alternative is one "{...}[@D]" of an alternative requirement.
type Alternative struct {
	// Req is a simple or compound requirement (never an alternative).
	Req *ResReq
	// Delay is D in "@D": the alternative is considered only after the
	// job has pended that many minutes. 0 means no delay.
	Delay int
}

// IsSimple reports whether r is a simple requirement.
func (r *ResReq) IsSimple() bool { return r != nil && r.Simple != nil }

// Simple is a requirement made of sections. A nil pointer (or nil slice)
// means the section was not given.
type Simple struct {
	Select   Expr
	Order    *Order
	Rusage   *Rusage
	Span     *Span
	Same     []string
	CU       *CU
	Affinity *Affinity
}

// Empty reports whether no section is set.
func (s *Simple) Empty() bool {
	return s.Select == nil && s.Order == nil && s.Rusage == nil && s.Span == nil &&
		s.Same == nil && s.CU == nil && s.Affinity == nil
}

// Expr is a node of a select expression: *Num, *Str, *Ident, *Defined,
// *Paren, *Unary or *Binary.
type Expr interface{ exprNode() }

// Num is a numeric literal, with the unit written after it, if any.
type Num struct {
	Value float64
	Unit  Unit
}

// Str is a string value: a quoted 'value', or a bare word compared with a
// string resource (type==X86_64).
type Str struct{ Value string }

// Ident is a resource name. Kind is the kind known when parsing (Unknown
// for a name the parser was not told about); aliases are replaced by the
// name they stand for (swap → swp).
type Ident struct {
	Name string
	Kind Kind
}

// Defined is "defined(name)".
type Defined struct{ Name string }

// Paren is an expression written in parentheses; it is kept so that the
// canonical form keeps the user's grouping.
type Paren struct{ X Expr }

// Unary is "-X" or "!X".
type Unary struct {
	Op Op
	X  Expr
}

// Binary is "X op Y".
type Binary struct {
	Op   Op
	X, Y Expr
}

func (*Num) exprNode()     {}
func (*Str) exprNode()     {}
func (*Ident) exprNode()   {}
func (*Defined) exprNode() {}
func (*Paren) exprNode()   {}
func (*Unary) exprNode()   {}
func (*Binary) exprNode()  {}

// Op is an operator of a select expression.
type Op uint8

// Operators, from highest to lowest precedence level.
const (
	OpNone Op = iota
	OpNeg     // unary -
	OpNot     // unary !
	OpMul
	OpDiv
	OpAdd
	OpSub
	OpGT
	OpLT
	OpGE
	OpLE
	OpEQ
	OpNE
	OpAnd
	OpOr
)

var opText = [...]string{"", "-", "!", "*", "/", "+", "-", ">", "<", ">=", "<=", "==", "!=", "&&", "||"}

// String returns the operator as written.
func (o Op) String() string {
	if int(o) < len(opText) {
		return opText[o]
	}
	return "?"
}

// prec is the binding power of a binary operator: higher binds tighter.
func (o Op) prec() int {
	switch o {
	case OpMul, OpDiv:
		return 5
	case OpAdd, OpSub:
		return 4
	case OpGT, OpLT, OpGE, OpLE, OpEQ, OpNE:
		return 3
	case OpAnd:
		return 2
	case OpOr:
		return 1
	}
	return 0
}

func (o Op) isCompare() bool { return o >= OpGT && o <= OpNE }
func (o Op) isLogical() bool { return o == OpAnd || o == OpOr }
func (o Op) isArith() bool   { return o >= OpMul && o <= OpSub }

// Unit is a memory unit written after a number: 4GB.
type Unit uint8

// Units. NoUnit means the number is in the default unit (MB for memory-like
// resources).
const (
	NoUnit Unit = iota
	KB
	MB
	GB
	TB
	PB
	EB
	ZB
)

var unitText = [...]string{"", "KB", "MB", "GB", "TB", "PB", "EB", "ZB"}

// String returns the canonical spelling ("GB"); "" for NoUnit.
func (u Unit) String() string {
	if int(u) < len(unitText) {
		return unitText[u]
	}
	return "?"
}

// mbFactor converts a value in unit u to MB.
func (u Unit) mbFactor() float64 {
	switch u {
	case KB:
		return 1.0 / 1024
	case NoUnit, MB:
		return 1
	}
	f := 1.0
	for i := MB; i < u; i++ {
		f *= 1024
	}
	return f
}

// MB returns the number in MB when a unit was written, else the number
// itself (memory-like resources default to MB).
func (n Num) MB() float64 { return n.Value * n.Unit.mbFactor() }

// Order is an order[] section.
type Order struct {
	// Resort is the leading "!": re-sort the candidates before dispatch.
	Resort bool
	Keys   []OrderKey
}

// OrderKey is one resource of an order[] section. Reverse is the "-"
// prefix: worst first instead of best first.
type OrderKey struct {
	Name    string
	Reverse bool
}

// Rusage is the merged rusage of a requirement: the alternatives written
// with "||", each a set of usage strings reserved together.
type Rusage struct {
	Or []UsageSet
}

// UsageSet is the comma-separated usage strings of one rusage alternative.
type UsageSet []Usage

// Usage is one usage string: resources joined by ':' that share one
// duration and decay.
type Usage struct {
	Resources []ResUsage
	// Durations is empty when no duration was given (reserve for the whole
	// job). It has one element, or one per phase (or one less) for a
	// multi-phase reservation.
	Durations []Duration
	// Decays is empty when no decay was given (0); else 0 or 1 per phase.
	Decays []int
}

// ResUsage is the amount reserved of one resource. Amounts has one element,
// or one per phase for a multi-phase reservation (mem=(500 300 200)).
type ResUsage struct {
	Name    string
	Amounts []Num
	// Method is "", "task", "job" or "host" (value/job).
	Method string
}

// Duration is a duration as written: a count and an optional unit 's',
// 'm' or 'h' (0 for none: minutes).
type Duration struct {
	N    int64
	Unit byte
}

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration {
	switch d.Unit {
	case 's':
		return time.Duration(d.N) * time.Second
	case 'h':
		return time.Duration(d.N) * time.Hour
	}
	return time.Duration(d.N) * time.Minute
}

// Span is a span[] section. Exactly one form is set.
type Span struct {
	// Hosts is 1 (all slots on one host) or -1 (ignore the queue span);
	// 0 when not given.
	Hosts int
	// Ptile is the slots per host; 0 when not given.
	Ptile int
	// PtileMXJ is ptile='!': use the MXJ of the host type or model.
	PtileMXJ bool
	// PtileBy holds per host type or model values: ptile='!',HP:8,LINUX:2.
	PtileBy []TypeSlots
	// Block is block=N; 0 when not given.
	Block int
	// Stripe is span[stripe]; StripeMax is span[stripe=N].
	Stripe    bool
	StripeMax int
}

// TypeSlots is one "type:N" value of a per-type ptile.
type TypeSlots struct {
	Type  string
	Slots int
}

// CU is a cu[] section.
type CU struct {
	Type          string
	Pref          string
	MaxCUs        int
	UsableCUSlots int
	Balance       bool
	Excl          bool
}

// Affinity is an affinity[] section, kept as parsed (the scheduler does not
// use it yet).
type Affinity struct {
	// PU is numa, socket, core or thread (or the aliases mcm, cpu).
	PU string
	// PUNum is the pu_num in core(2); 0 when written without parentheses.
	PUNum int
	// Same is the same=level option.
	Same string
	// Exclusive is exclusive=(level[,scope]): one or two words.
	Exclusive []string
	// Count is the *count; 0 when not given.
	Count      int
	CPUBind    string
	MemBind    string
	Distribute string
}
