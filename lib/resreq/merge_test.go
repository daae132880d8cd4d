package resreq

import (
	"reflect"
	"testing"
)

func parseOrNil(t *testing.T, s string) *ResReq {
	t.Helper()
	if s == "-" {
		return nil
	}
	r, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return r
}

func TestMergeLSF(t *testing.T) {
	for _, c := range []struct{ job, app, queue, want string }{
		// select: all levels, job first.
		{"select[mem>100]", "select[bigmem]", "select[type==X86_64]",
			"select[mem > 100 && bigmem && type == X86_64]"},
		{"select[a || b]", "-", "select[c]", "select[(a || b) && c]"},
		// order, span, cu, affinity: highest level wins.
		{"order[mem]", "order[ut]", "order[-slots] span[ptile=4]", "order[mem] span[ptile=4]"},
		{"-", "order[ut]", "order[-slots]", "order[ut]"},
		{"span[hosts=1]", "-", "span[ptile=4]", "span[hosts=1]"},
		{"span[hosts=-1]", "-", "span[ptile=4]", "span[hosts=-1]"},
		{"cu[type=rack]", "cu[type=enclosure]", "-", "cu[type=rack]"},
		{"-", "affinity[core(2)]", "affinity[core(1)]", "affinity[core(2)]"},
		// rusage: per resource; lower levels' duration/decay kept (LSF's
		// documented examples).
		{"rusage[mem=100]", "-", "rusage[mem=200:lic=1]", "rusage[mem=100, lic=1]"},
		{"rusage[mem=100]", "-", "rusage[mem=200:duration=20:decay=1]", "rusage[mem=100:duration=20:decay=1]"},
		{"rusage[mem=100:duration=5]", "rusage[swp=10]", "rusage[mem=200:duration=20:decay=1, lic=1:duration=2]",
			"rusage[mem=100:duration=5:decay=1, swp=10, lic=1:duration=2]"},
		{"rusage[a=1 || b=1]", "-", "rusage[mem=100]", "rusage[a=1 || b=1]"},
		{"rusage[mem=100]", "-", "rusage[a=1 || b=1]", "rusage[mem=100]"},
		// same: union.
		{"same[type]", "same[model]", "same[type:nodepool]", "same[type:model:nodepool]"},
		// Nothing given.
		{"-", "-", "-", ""},
		{"", "", "select[mem>1]", "select[mem > 1]"},
		// Compound and alternative: taken whole, simple selects ANDed in.
		{"2*{select[a]} + 4*{-}", "select[b] rusage[mem=1]", "select[c]",
			"2*{select[a && b && c]} + 4*{select[b && c]}"},
		{"select[a]", "-", "{select[b]} || {2*{-} + 1*{select[c]}}@5",
			"{select[b && a]} || {2*{select[a]} + 1*{select[c && a]}}@5"},
		{"2*{select[a]} + 4*{-}", "-", "{select[b]} || {select[c]}", "2*{select[a]} + 4*{-}"},
	} {
		got := MergeLSF(parseOrNil(t, c.job), parseOrNil(t, c.app), parseOrNil(t, c.queue)).String()
		if got != c.want {
			t.Errorf("MergeLSF(%q, %q, %q)\n got %q\nwant %q", c.job, c.app, c.queue, got, c.want)
		}
	}
}

func TestMergeDoesNotModify(t *testing.T) {
	job := MustParse("select[a] rusage[mem=100] same[type]")
	app := MustParse("2*{select[b]} + 1*{-}")
	queue := MustParse("select[c] rusage[mem=200:duration=5, lic=1] same[model] order[ut]")
	j0, a0, q0 := job.String(), app.String(), queue.String()
	_ = MergeLSF(job, nil, queue)
	_ = MergeLSF(nil, app, queue)
	_, _ = MergeProfile(job, queue, false)
	_, _ = MergeProfile(job, queue, true)
	_, _ = MergeProfile(queue, app, false)
	_ = Defaults(app)
	_, _ = Join(job, queue)
	if job.String() != j0 || app.String() != a0 || queue.String() != q0 {
		t.Errorf("merging modified its arguments: %q %q %q", job, app, queue)
	}
}

func TestMergeProfile(t *testing.T) {
	for _, c := range []struct {
		job, profile string
		fixed        bool
		want, err    string
	}{
		{"select[mem>100]", "select[bigmem] rusage[mem=1000] order[ut]", false,
			"select[mem > 100 && bigmem] order[ut] rusage[mem=1000]", ""},
		{"rusage[mem=2000] order[mem] span[hosts=1]", "select[bigmem] rusage[mem=1000:duration=10, lic=1] order[ut] span[ptile=2]", false,
			"select[bigmem] order[mem] rusage[mem=2000:duration=10, lic=1] span[hosts=1]", ""},
		{"same[type]", "same[model]", false, "same[type:model]", ""},
		{"-", "select[bigmem]", false, "select[bigmem]", ""},
		{"select[a]", "-", true, "select[a]", ""},
		// fixed: select terms are added; sections the profile does not
		// set may be added; the profile's own values cannot change.
		{"select[mem>100]", "select[bigmem] rusage[mem=1000] order[ut]", true,
			"select[mem > 100 && bigmem] order[ut] rusage[mem=1000]", ""},
		{"span[hosts=1] rusage[lic=1]", "rusage[mem=1000]", true,
			"rusage[mem=1000, lic=1] span[hosts=1]", ""},
		{"order[ut]", "order[ut]", true, "order[ut]", ""},
		{"order[mem]", "order[ut]", true, "",
			"the application profile fixes order[order[ut]]; the job asks for order[order[mem]] (a job may only add select[] terms and sections the profile does not set)"},
		{"rusage[mem=2000]", "rusage[mem=1000:duration=10]", true, "",
			"the application profile fixes rusage[mem=1000:duration=10]; the job asks for rusage[mem=2000] (a job may only add select[] terms and sections the profile does not set)"},
		{"span[ptile=2]", "span[hosts=1]", true, "",
			"the application profile fixes span[span[hosts=1]]; the job asks for span[span[ptile=2]] (a job may only add select[] terms and sections the profile does not set)"},
		// Compound.
		{"2*{select[a]} + 1*{-}", "select[b] rusage[mem=1]", false, "2*{select[a && b]} + 1*{select[b]}", ""},
		{"2*{select[a]} + 1*{-}", "select[b] rusage[mem=1]", true, "",
			"the application profile's resource requirement is fixed; a compound or alternative job requirement would replace it"},
		{"2*{select[a]} + 1*{-}", "select[b]", true, "2*{select[a && b]} + 1*{select[b]}", ""},
		{"select[c]", "2*{select[a]} + 1*{-}", false, "2*{select[a && c]} + 1*{select[c]}", ""},
		{"rusage[mem=1]", "2*{select[a]} + 1*{-}", false, "",
			"the application profile has a compound or alternative resource requirement; a job can only add select[] terms to it"},
	} {
		got, err := MergeProfile(parseOrNil(t, c.job), parseOrNil(t, c.profile), c.fixed)
		switch {
		case c.err != "":
			if err == nil || err.Error() != c.err {
				t.Errorf("MergeProfile(%q, %q, %v) error = %v\nwant %q", c.job, c.profile, c.fixed, err, c.err)
			}
		case err != nil:
			t.Errorf("MergeProfile(%q, %q, %v): %v", c.job, c.profile, c.fixed, err)
		case got.String() != c.want:
			t.Errorf("MergeProfile(%q, %q, %v)\n got %q\nwant %q", c.job, c.profile, c.fixed, got, c.want)
		}
	}
}

func TestJoin(t *testing.T) {
	for _, c := range []struct {
		in        []string
		want, err string
	}{
		{[]string{"select[swp > 15]", "select[hpux]"}, "select[swp > 15 && hpux]", ""},
		{[]string{"order[r15m]", "order[ut]"}, "order[r15m:ut]", ""},
		{[]string{"order[r15m]", "order[!ut:r15m]"}, "order[!r15m:ut]", ""},
		{[]string{"rusage[mem=100]", "rusage[tmp=50:duration=60]"}, "rusage[mem=100, tmp=50:duration=60]", ""},
		{[]string{"rusage[mem=20, license=1:duration=2]", "rusage[app_lic_v201=1||app_lic_v15=1]"},
			"rusage[mem=20, license=1:duration=2, app_lic_v201=1 || mem=20, license=1:duration=2, app_lic_v15=1]", ""},
		{[]string{"span[hosts=1]", "span[hosts=1] same[type]", "same[model]"}, "span[hosts=1] same[type:model]", ""},
		{[]string{"2*{-} + 1*{-}"}, "2*{-} + 1*{-}", ""},
		{[]string{"rusage[mem=100]", "rusage[mem=200]"}, "", "mem is reserved twice in rusage; a resource may appear once in a usage string"},
		{[]string{"span[hosts=1]", "span[ptile=2]"}, "", "conflicting span sections: span[hosts=1] and span[ptile=2]"},
		{[]string{"select[a]", "2*{-} + 1*{-}"}, "", "a compound or alternative resource requirement cannot be combined with other -R options"},
	} {
		var rs []*ResReq
		for _, s := range c.in {
			rs = append(rs, MustParse(s))
		}
		got, err := Join(rs...)
		switch {
		case c.err != "":
			if err == nil || err.Error() != c.err {
				t.Errorf("Join(%q) error = %v, want %q", c.in, err, c.err)
			}
		case err != nil:
			t.Errorf("Join(%q): %v", c.in, err)
		case got.String() != c.want:
			t.Errorf("Join(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestAnd(t *testing.T) {
	a := MustParse("select[x || y]").Simple.Select
	b := MustParse("select[z]").Simple.Select
	if And(nil, nil) != nil || !reflect.DeepEqual(And(a, nil), a) || !reflect.DeepEqual(And(nil, b), b) {
		t.Error("And with nil")
	}
	if got := ExprString(And(a, b)); got != "(x || y) && z" {
		t.Errorf("And = %q", got)
	}
	// Built trees without Paren nodes still print correctly.
	e := &Binary{Op: OpMul, X: &Binary{Op: OpAdd, X: &Num{Value: 1}, Y: &Num{Value: 2}}, Y: &Unary{Op: OpNeg, X: &Binary{Op: OpSub, X: &Ident{Name: "a"}, Y: &Ident{Name: "b"}}}}
	if got := ExprString(e); got != "(1 + 2) * -(a - b)" {
		t.Errorf("ExprString = %q", got)
	}
	e2 := &Binary{Op: OpSub, X: &Ident{Name: "a"}, Y: &Binary{Op: OpSub, X: &Ident{Name: "b"}, Y: &Ident{Name: "c"}}}
	if got := ExprString(e2); got != "a - (b - c)" {
		t.Errorf("ExprString = %q", got)
	}
}
