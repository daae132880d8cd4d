package resreq

import (
	"errors"
	"fmt"
	"slices"
)

// Merging never modifies its arguments; results may share unchanged parts
// (expressions, sections) with them, so treat parsed requirements as
// immutable.

// And returns "a && b"; either may be nil. An operand joined with || is
// put in parentheses.
func And(a, b Expr) Expr {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	if bb, ok := b.(*Binary); ok && bb.Op == OpAnd {
		// Keep the chain left-associative, as parsing "a && b && c" does.
		return &Binary{Op: OpAnd, X: And(a, bb.X), Y: parenOr(bb.Y)}
	}
	return &Binary{Op: OpAnd, X: parenOr(a), Y: parenOr(b)}
}

func parenOr(e Expr) Expr {
	if b, ok := e.(*Binary); ok && b.Op == OpOr {
		return &Paren{X: e}
	}
	return e
}

// MergeLSF merges the job-, application- and queue-level requirements the
// way LSF does for imported configurations (resreq.md §11); any of them may
// be nil. For simple requirements: select is the AND of all levels
// (job && app && queue); order, span, cu and affinity come from the
// highest level that has them (job, then application, then queue), and
// span[hosts=-1] at a higher level cancels the span of the lower ones;
// rusage is merged per resource, the higher level's amount winning, and a
// usage string without duration or decay takes those of the lower level's
// usage string for the same resource; a level whose rusage has '||'
// alternatives replaces the lower levels' rusage; same[] is the union.
//
// When a level is compound or alternative (LSF leaves this partly
// unspecified), the highest such level is taken whole and the select of
// every simple level is ANDed into each of its terms; the other sections
// of those simple levels are not used.
func MergeLSF(job, app, queue *ResReq) *ResReq {
	levels := make([]*ResReq, 0, 3)
	for _, r := range []*ResReq{job, app, queue} {
		if r != nil {
			levels = append(levels, r)
		}
	}
	if len(levels) == 0 {
		return &ResReq{Simple: &Simple{}}
	}
	for i, r := range levels {
		if !r.IsSimple() {
			var sel Expr
			for j, o := range levels {
				if j != i && o.IsSimple() {
					sel = And(sel, o.Simple.Select)
				}
			}
			return andInto(r, sel)
		}
	}
	out := *levels[len(levels)-1].Simple
	for i := len(levels) - 2; i >= 0; i-- {
		out = mergeSimple(levels[i].Simple, &out)
	}
	return &ResReq{Simple: &out}
}

// mergeSimple merges hi over lo.
func mergeSimple(hi, lo *Simple) Simple {
	out := Simple{
		Select:   And(hi.Select, lo.Select),
		Order:    hi.Order,
		Rusage:   mergeRusage(hi.Rusage, lo.Rusage),
		Span:     hi.Span,
		Same:     union(hi.Same, lo.Same),
		CU:       hi.CU,
		Affinity: hi.Affinity,
	}
	if out.Order == nil {
		out.Order = lo.Order
	}
	if out.Span == nil {
		out.Span = lo.Span
	}
	if out.CU == nil {
		out.CU = lo.CU
	}
	if out.Affinity == nil {
		out.Affinity = lo.Affinity
	}
	return out
}

func union(a, b []string) []string {
	if a == nil {
		return b
	}
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// mergeRusage merges hi's rusage over lo's.
func mergeRusage(hi, lo *Rusage) *Rusage {
	switch {
	case hi == nil:
		return lo
	case lo == nil:
		return hi
	case len(hi.Or) != 1 || len(lo.Or) != 1:
		return hi
	}
	h, l := hi.Or[0], lo.Or[0]
	var set UsageSet
	for _, u := range h {
		u2 := u
		if len(u.Durations) == 0 || len(u.Decays) == 0 {
			if lu := l.find(u.Resources); lu != nil && phasesOf(lu) == 1 && phasesOf(&u) == 1 {
				if len(u.Durations) == 0 {
					u2.Durations = lu.Durations
				}
				if len(u.Decays) == 0 {
					u2.Decays = lu.Decays
				}
			}
		}
		set = append(set, u2)
	}
	have := map[string]bool{}
	for _, n := range h.Names() {
		have[n] = true
	}
	for _, u := range l {
		var keep []ResUsage
		for _, r := range u.Resources {
			if !have[r.Name] {
				keep = append(keep, r)
			}
		}
		if len(keep) == 0 {
			continue
		}
		u2 := u
		u2.Resources = keep
		set = append(set, u2)
	}
	return &Rusage{Or: []UsageSet{set}}
}

func phasesOf(u *Usage) int {
	n := 1
	for _, r := range u.Resources {
		n = max(n, len(r.Amounts))
	}
	return n
}

// find returns the usage string of the set that names one of rs.
func (set UsageSet) find(rs []ResUsage) *Usage {
	for i := range set {
		for _, a := range set[i].Resources {
			for _, b := range rs {
				if a.Name == b.Name {
					return &set[i]
				}
			}
		}
	}
	return nil
}

// andInto returns a copy of r with sel ANDed into the select of every
// simple part (the requirement, each compound term, each alternative).
func andInto(r *ResReq, sel Expr) *ResReq {
	if sel == nil {
		return r
	}
	switch {
	case r.Simple != nil:
		s := *r.Simple
		s.Select = And(s.Select, sel)
		return &ResReq{Simple: &s}
	case r.Compound != nil:
		terms := slices.Clone(r.Compound)
		for i := range terms {
			terms[i].Req.Select = And(terms[i].Req.Select, sel)
		}
		return &ResReq{Compound: terms}
	}
	alts := slices.Clone(r.Alternatives)
	for i := range alts {
		alts[i].Req = andInto(alts[i].Req, sel)
	}
	return &ResReq{Alternatives: alts}
}

// MergeProfile merges a job's requirement with its application profile's
// (DESIGN.md, configuration layering); either may be nil. The job's select
// is ANDed with the profile's: a job can only narrow the hosts. When the
// profile marks its requirement default (fixed false), the job's order,
// span, cu and affinity replace the profile's, its rusage replaces the
// profile's amounts resource by resource, and same[] is the union. When it
// is fixed, the job may add sections and rusage resources the profile
// does not set, but giving a different value for one it sets is an error.
//
// A compound or alternative job requirement replaces a default profile
// requirement (the profile's select still applies to every term); a
// profile that is compound or alternative accepts from the job only select
// terms, which are ANDed into each of its terms.
func MergeProfile(job, profile *ResReq, fixed bool) (*ResReq, error) {
	switch {
	case profile == nil && job == nil:
		return &ResReq{Simple: &Simple{}}, nil
	case profile == nil:
		return job, nil
	case job == nil:
		return profile, nil
	}
	if !profile.IsSimple() {
		if !job.IsSimple() || !onlySelect(job.Simple) {
			return nil, errors.New("the application profile has a compound or alternative resource requirement; a job can only add select[] terms to it")
		}
		return andInto(profile, job.Simple.Select), nil
	}
	p := profile.Simple
	if !job.IsSimple() {
		if fixed && !onlySelect(p) {
			return nil, errors.New("the application profile's resource requirement is fixed; a compound or alternative job requirement would replace it")
		}
		return andInto(job, p.Select), nil
	}
	j := job.Simple
	if !fixed {
		out := mergeSimple(j, p)
		return &ResReq{Simple: &out}, nil
	}
	conflict := func(section, jv, pv string) error {
		return fmt.Errorf("the application profile fixes %s[%s]; the job asks for %s[%s] (a job may only add select[] terms and sections the profile does not set)", section, pv, section, jv)
	}
	type sec struct {
		name   string
		jn, pn bool
		js, ps func() string
	}
	checks := []sec{
		{"order", j.Order != nil, p.Order != nil, func() string { return orderText(j.Order) }, func() string { return orderText(p.Order) }},
		{"span", j.Span != nil, p.Span != nil, func() string { return spanText(j.Span) }, func() string { return spanText(p.Span) }},
		{"cu", j.CU != nil, p.CU != nil, func() string { return cuText(j.CU) }, func() string { return cuText(p.CU) }},
		{"affinity", j.Affinity != nil, p.Affinity != nil, func() string { return affText(j.Affinity) }, func() string { return affText(p.Affinity) }},
	}
	for _, c := range checks {
		if c.jn && c.pn {
			if js, ps := c.js(), c.ps(); js != ps {
				return nil, conflict(c.name, js, ps)
			}
		}
	}
	if j.Rusage != nil && p.Rusage != nil {
		if len(j.Rusage.Or) != 1 || len(p.Rusage.Or) != 1 {
			if j.Rusage.String() != p.Rusage.String() {
				return nil, conflict("rusage", j.Rusage.String(), p.Rusage.String())
			}
		} else {
			for _, ju := range j.Rusage.Or[0] {
				for _, jr := range ju.Resources {
					pu := p.Rusage.Or[0].find([]ResUsage{jr})
					if pu == nil {
						continue
					}
					one := func(u *Usage, name string) string {
						for _, r := range u.Resources {
							if r.Name == name {
								v := Usage{Resources: []ResUsage{r}, Durations: u.Durations, Decays: u.Decays}
								return v.String()
							}
						}
						return ""
					}
					if js, ps := one(&ju, jr.Name), one(pu, jr.Name); js != ps {
						return nil, conflict("rusage", js, ps)
					}
				}
			}
		}
	}
	out := mergeSimple(p, j)
	out.Select = And(j.Select, p.Select)
	out.Same = union(j.Same, p.Same)
	return &ResReq{Simple: &out}, nil
}

func onlySelect(s *Simple) bool {
	return s.Order == nil && s.Rusage == nil && s.Span == nil && s.Same == nil && s.CU == nil && s.Affinity == nil
}

func orderText(o *Order) string { return (&Simple{Order: o}).String() }
func spanText(s *Span) string   { return (&Simple{Span: s}).String() }
func cuText(c *CU) string       { return (&Simple{CU: c}).String() }
func affText(a *Affinity) string {
	return (&Simple{Affinity: a}).String()
}

// String returns the text of one usage string.
func (u *Usage) String() string { return (&Rusage{Or: []UsageSet{{*u}}}).String() }

// Join combines the requirements of several -R options of one command into
// one, as bsub does: all must be simple; selects are ANDed, order keys are
// concatenated (a resource named again is skipped), rusage usage strings
// are all reserved (a resource reserved twice is an error), same[] is the
// union, and span, cu and affinity must agree where given more than once.
func Join(reqs ...*ResReq) (*ResReq, error) {
	out := Simple{}
	for _, r := range reqs {
		if r == nil {
			continue
		}
		if !r.IsSimple() {
			if len(reqs) > 1 {
				return nil, errors.New("a compound or alternative resource requirement cannot be combined with other -R options")
			}
			return r, nil
		}
		s := r.Simple
		out.Select = And(out.Select, s.Select)
		if s.Order != nil {
			if out.Order == nil {
				out.Order = &Order{}
			} else {
				o := *out.Order
				o.Keys = slices.Clone(o.Keys)
				out.Order = &o
			}
			out.Order.Resort = out.Order.Resort || s.Order.Resort
			for _, k := range s.Order.Keys {
				if !slices.ContainsFunc(out.Order.Keys, func(x OrderKey) bool { return x.Name == k.Name }) {
					out.Order.Keys = append(out.Order.Keys, k)
				}
			}
		}
		if s.Rusage != nil {
			if out.Rusage == nil {
				out.Rusage = s.Rusage
			} else {
				ru, err := joinRusage(out.Rusage, s.Rusage)
				if err != nil {
					return nil, err
				}
				out.Rusage = ru
			}
		}
		out.Same = union(out.Same, s.Same)
		var err error
		if out.Span, err = agree("span", out.Span, s.Span, spanText); err != nil {
			return nil, err
		}
		if out.CU, err = agree("cu", out.CU, s.CU, cuText); err != nil {
			return nil, err
		}
		if out.Affinity, err = agree("affinity", out.Affinity, s.Affinity, affText); err != nil {
			return nil, err
		}
	}
	return &ResReq{Simple: &out}, nil
}

func agree[T any](name string, a, b *T, text func(*T) string) (*T, error) {
	switch {
	case a == nil:
		return b, nil
	case b == nil:
		return a, nil
	case text(a) != text(b):
		return nil, fmt.Errorf("conflicting %s sections: %s and %s", name, text(a), text(b))
	}
	return a, nil
}

func joinRusage(a, b *Rusage) (*Rusage, error) {
	if len(a.Or) > 1 && len(b.Or) > 1 {
		return nil, errors.New("only one rusage[] section may have '||' alternatives")
	}
	out := &Rusage{}
	for _, x := range a.Or {
		for _, y := range b.Or {
			set := append(append(UsageSet{}, x...), y...)
			if dup := set.duplicate(); dup != "" {
				return nil, fmt.Errorf("%s is reserved twice in rusage; a resource may appear once in a usage string", dup)
			}
			out.Or = append(out.Or, set)
		}
	}
	return out, nil
}

// Defaults returns r with LSF's defaults filled in, as bjobs -l shows the
// combined and effective requirement: a select that does not name type
// gets "type == local" ANDed to it, or "type == any" when it names a
// string or Boolean resource (resreq.md §1); a missing order becomes
// order[r15s:pg]. Compound terms and alternatives get the defaults each.
func Defaults(r *ResReq) *ResReq {
	if r == nil {
		r = &ResReq{Simple: &Simple{}}
	}
	switch {
	case r.Simple != nil:
		s := defaultsSimple(*r.Simple)
		return &ResReq{Simple: &s}
	case r.Compound != nil:
		terms := slices.Clone(r.Compound)
		for i := range terms {
			terms[i].Req = defaultsSimple(terms[i].Req)
		}
		return &ResReq{Compound: terms}
	}
	alts := slices.Clone(r.Alternatives)
	for i := range alts {
		alts[i].Req = Defaults(alts[i].Req)
	}
	return &ResReq{Alternatives: alts}
}

func defaultsSimple(s Simple) Simple {
	if !mentions(s.Select, "type") {
		v := "local"
		if namesNonNumeric(s.Select, true) {
			v = "any"
		}
		s.Select = And(s.Select, &Binary{Op: OpEQ, X: &Ident{Name: "type", Kind: String}, Y: &Str{Value: v}})
	}
	if s.Order == nil {
		o := DefaultOrder
		s.Order = &o
	}
	return s
}

// mentions reports whether e names resource name.
func mentions(e Expr, name string) bool {
	switch e := e.(type) {
	case *Ident:
		return e.Name == name
	case *Defined:
		return e.Name == name
	case *Paren:
		return mentions(e.X, name)
	case *Unary:
		return mentions(e.X, name)
	case *Binary:
		return mentions(e.X, name) || mentions(e.Y, name)
	}
	return false
}

// namesNonNumeric reports whether e uses a string or Boolean resource.
// logical says whether e stands as a condition (where an unknown name is
// taken for a Boolean resource).
func namesNonNumeric(e Expr, logical bool) bool {
	switch e := e.(type) {
	case *Str:
		return true
	case *Ident:
		return e.Kind == String || e.Kind == Boolean || e.Kind == Unknown && logical
	case *Paren:
		return namesNonNumeric(e.X, logical)
	case *Unary:
		return namesNonNumeric(e.X, logical && e.Op == OpNot)
	case *Binary:
		l := e.Op.isLogical()
		return namesNonNumeric(e.X, l) || namesNonNumeric(e.Y, l)
	}
	return false
}
