package resreq

// UsageSections returns the resource names each rusage section of r
// reserves: one list per "||" alternative of a rusage[] and per term or
// alternative of a compound or alternative requirement (bjobs -rusage
// matches a job when one section names every resource asked for).
func (r *ResReq) UsageSections() [][]string {
	if r == nil {
		return nil
	}
	var out [][]string
	simple := func(s *Simple) {
		if s == nil || s.Rusage == nil {
			return
		}
		for _, set := range s.Rusage.Or {
			var names []string
			for _, u := range set {
				for _, res := range u.Resources {
					names = append(names, res.Name)
				}
			}
			out = append(out, names)
		}
	}
	simple(r.Simple)
	for i := range r.Compound {
		simple(&r.Compound[i].Req)
	}
	for _, a := range r.Alternatives {
		out = append(out, a.Req.UsageSections()...)
	}
	return out
}
