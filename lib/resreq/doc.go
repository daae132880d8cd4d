// Package resreq owns LSF's resource requirement language (bsub -R,
// RES_REQ): it parses a string into a typed tree, prints the canonical
// form, compiles select and order against a cluster's resources, computes
// rusage amounts over time, and merges the requirements of the job, its
// application profile and its queue. It imports only the standard
// library; the scheduler, the configuration layering and the commands use
// it.
//
// # Use
//
//	schema, err := resreq.NewSchema(siteResources...) // built-ins + lsf.shared-like resources
//	r, err := resreq.Parse(`select[type==X86_64 && mem>4GB] rusage[mem=4000:duration=10] span[hosts=1]`,
//		resreq.WithSchema(schema)) // without WithSchema, unknown names are accepted
//	fmt.Println(r)                   // select[type == X86_64 && mem > 4GB] rusage[mem=4000:duration=10] span[hosts=1]
//	fmt.Println(resreq.Defaults(r))  // ... with type == local / order[r15s:pg] filled in, as bjobs -l shows
//
//	sel, err := schema.Compile(r.Simple.Select, resreq.Local{Type: "X86_64"})
//	h := schema.NewHost() // fill h.Num/h.Str/h.Bool by the indices of schema.Lookup
//	ok := sel.Match(h)    // no allocation
//	ord, err := schema.CompileOrder(r.Simple.Order) // ord.Compare(a, b) for slices.SortStableFunc
//	mb, _ := r.Simple.Rusage.Or[0].AmountAt("mem", 5*time.Minute)
//
//	eff := resreq.MergeLSF(job, app, queue)            // imported LSF configurations
//	eff, err = resreq.MergeProfile(job, profile, fixed) // XCE's job + application profile layering
//	one, err := resreq.Join(r1, r2)                     // several -R options of one bsub
//
// Errors are *SyntaxError values ("column 12: expected a number or a
// resource name after '>'") that wrap ErrBadResReq, LSF's "Bad resource
// requirement syntax".
//
// # Grammar and canonical form
//
// The grammar is LSF 10.1's (IBM's "resource requirement strings"): simple strings
// with select, order, rusage, span, same, cu and affinity sections (a
// leading section-less expression is the select), compound strings
// "n*{...} + m*{...}" and alternatives "{...} || {...}@D". The canonical
// form writes sections in that order separated by one blank, blanks around
// binary operators (LSF's combined/effective style: select[type == local]),
// aliases (swap, idle, login, cpu) by the name they stand for, units in
// upper case (4GB), string values bare after a string resource and quoted
// elsewhere, and the user's parentheses as written. Parsing the canonical
// form with the same options gives the same tree back.
//
// # Choices where LSF documents nothing (or resreq.md says unconfirmed)
//
//   - Operator precedence: unary - and !, then * /, then + -, then all six
//     comparisons on one level, then &&, then ||; left associative.
//   - A bare word compared with == or != to a string resource is a string
//     value (type==X86_64, type==model compares type with the word
//     "model"). A word that cannot be a resource name (LINUX2.6, 64bit) is
//     a value too. Words with '-' must be quoted: host06-x12 is
//     arithmetic, and comparing a string resource with arithmetic is an
//     error that says so.
//   - Units (KB MB GB TB PB EB ZB, or their first letter, any case) are
//     allowed after numbers compared with, or reserved for, resources that
//     take units (mem, swp, tmp, maxmem, maxswp, maxtmp and site resources
//     defined with Units). A number without a unit is in MB, the usual
//     LSF_UNIT_FOR_LIMITS.
//   - Sections may come in any order and need not be separated by a blank.
//     select, order, span, same, cu and affinity may each appear once;
//     rusage may appear several times (all are reserved; at most one may
//     have || alternatives), and "rusage[a] || rusage[b]" is read as
//     rusage[a || b]. In rusage, ',' binds tighter than '||'.
//   - order[!...] is kept (Order.Resort); order keys sort left to right,
//     each breaking ties of the previous one (LSF's right-to-left passes
//     amount to the same leading key).
//   - Multi-phase rusage, mem=(500 300 200):duration=(10 20):decay=(0 1),
//     is accepted for mem alone in its usage string, with amounts that stay
//     the same or decrease. A decaying phase decreases linearly to the
//     next phase's amount (to 0 for the last phase, as single-phase decay).
//   - span[ptile='!'] may also be written ptile=!. span forms cannot be
//     combined. span[hosts=-1] is kept; it means "no span" to the scheduler
//     and cancels lower levels' spans when merging.
//   - Compound terms may not use rusage || alternatives, cu[balance] or
//     cu[excl]. A single "{...}" without @D is the requirement inside it.
//   - Evaluation: a Boolean resource is 0 on hosts without it. A numeric or
//     string resource a host does not define (NaN, "") makes a condition
//     that uses it unknown, and an unknown condition never selects the host
//     (not even negated); && and || short-circuit, so defined(x) && x > 1
//     works. type==any and model==any are always true.
//   - Defaults (bjobs -l Combined/Effective): type == local is ANDed to a
//     select that does not name type, or type == any when the select names
//     a string or Boolean resource (a name the parser did not know counts
//     as Boolean where it stands alone as a condition); order defaults to
//     r15s:pg.
//   - Resources outside rusage: only consumable numeric resources may be
//     reserved (LSF_STRICT_RESREQ=Y behaviour), which for built-ins means
//     the load indices and ngpus_physical; order[] takes numeric resources
//     only. Without WithSchema, names the parser does not know are kept and
//     checked when the select is compiled against a schema.
//   - Merging compound requirements: see MergeLSF and MergeProfile.
package resreq
