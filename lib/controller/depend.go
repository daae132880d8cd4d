package controller

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode"

	"xce/lib/api"
)

// The dependency expressions of bsub -w and bwait -w: done(), ended(),
// exit() with an optional exit code comparison, started(), post_done(),
// post_err(), the array counts numdone/numended/numexit/numhold/numpend/
// numrun/numstart(j, op n|*), and a bare job as done(); job ids,
// "id[index]" and job names (the user's own jobs, `*` wildcards); &&, ||
// and ! with parentheses. A name that several jobs share needs all of them
// (LSF's default, JOB_DEP_LAST_SUB unset). external() is not supported.

type depResult int

const (
	depMet depResult = iota
	depWait
	depNever
)

type depNode struct {
	op       string // "&&", "||", "!" or "" for a condition
	kids     []*depNode
	cond     string // done, ended, exit, started
	arg      string
	quoted   bool
	cmpOp    string
	cmpValue int32
	hasCmp   bool
	all      bool // num*(j, op *): the array's size
}

// maxDepDepth bounds the nesting of parentheses and '!' in an expression:
// the parser and the evaluation recurse once a level.
const maxDepDepth = 100

func parseDependency(s string) (*depNode, error) {
	if len(s) > maxDepLen {
		return nil, fmt.Errorf("expression too long: %d bytes; at most %d", len(s), maxDepLen)
	}
	p := &depParser{s: s}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("unexpected %q at column %d", p.s[p.i:], p.i+1)
	}
	return n, nil
}

type depParser struct {
	s     string
	i     int
	depth int // open parentheses and '!' around the position
}

// nest enters one more level of nesting; leave with p.depth--.
func (p *depParser) nest() error {
	p.depth++
	if p.depth > maxDepDepth {
		return fmt.Errorf("expression nested too deeply at column %d (more than %d levels of parentheses and '!')", p.i+1, maxDepDepth)
	}
	return nil
}

func (p *depParser) skip() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *depParser) eat(tok string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *depParser) or() (*depNode, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.eat("||") {
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &depNode{op: "||", kids: []*depNode{l, r}}
	}
	return l, nil
}

func (p *depParser) and() (*depNode, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.eat("&&") {
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = &depNode{op: "&&", kids: []*depNode{l, r}}
	}
	return l, nil
}

func (p *depParser) unary() (*depNode, error) {
	if p.eat("!") {
		if err := p.nest(); err != nil {
			return nil, err
		}
		k, err := p.unary()
		if err != nil {
			return nil, err
		}
		p.depth--
		return &depNode{op: "!", kids: []*depNode{k}}, nil
	}
	if p.eat("(") {
		if err := p.nest(); err != nil {
			return nil, err
		}
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		p.depth--
		if !p.eat(")") {
			return nil, fmt.Errorf("missing ')' at column %d", p.i+1)
		}
		return n, nil
	}
	p.skip()
	start := p.i
	for p.i < len(p.s) && (unicode.IsLetter(rune(p.s[p.i])) || p.s[p.i] == '_') {
		p.i++
	}
	word := p.s[start:p.i]
	switch word {
	case "done", "ended", "exit", "started", "post_done", "post_err",
		"numdone", "numended", "numexit", "numhold", "numpend", "numrun", "numstart":
		if !p.eat("(") {
			return nil, fmt.Errorf("expected '(' after %s at column %d", word, p.i+1)
		}
		n := &depNode{cond: word}
		if err := p.arg(n); err != nil {
			return nil, err
		}
		isNum := strings.HasPrefix(word, "num")
		if isNum && !p.eat(",") {
			return nil, fmt.Errorf("expected ', op count' in %s at column %d", word, p.i+1)
		}
		if isNum || word == "exit" && p.eat(",") {
			p.skip()
			for _, op := range []string{"==", "!=", ">=", "<=", ">", "<"} {
				if p.eat(op) {
					n.cmpOp = op
					break
				}
			}
			if n.cmpOp == "" {
				n.cmpOp = "=="
			}
			p.skip()
			if isNum && p.eat("*") {
				n.all, n.hasCmp = true, true // every element of the array
			} else {
				st := p.i
				for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
					p.i++
				}
				v, err := strconv.Atoi(p.s[st:p.i])
				if err != nil {
					return nil, fmt.Errorf("expected a number at column %d", st+1)
				}
				n.cmpValue, n.hasCmp = int32(v), true
			}
		}
		if !p.eat(")") {
			return nil, fmt.Errorf("missing ')' at column %d", p.i+1)
		}
		return n, nil
	}
	p.i = start
	n := &depNode{cond: "done"}
	return n, p.arg(n)
}

func (p *depParser) arg(n *depNode) error {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == '"' {
		end := strings.IndexByte(p.s[p.i+1:], '"')
		if end < 0 {
			return fmt.Errorf("unterminated quote at column %d", p.i+1)
		}
		if end == 0 {
			// "" would match every job without a name.
			return fmt.Errorf("expected a job id or name at column %d", p.i+2)
		}
		n.arg, n.quoted = p.s[p.i+1:p.i+1+end], true
		p.i += end + 2
		return nil
	}
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(" ,()&|!", rune(p.s[p.i])) {
		p.i++
	}
	if p.i == start {
		return fmt.Errorf("expected a job id or name at column %d", p.i+1)
	}
	n.arg = p.s[start:p.i]
	return nil
}

// depTargets resolves a dependency argument to jobs (c.mu held).
func (c *Controller) depTargets(owner uint32, arg string, quoted bool) []*rec {
	id, idx, isRef := parseJobRef(arg)
	if isRef && !(quoted && !strings.Contains(arg, "[")) {
		if idx >= 0 {
			if r := c.jobs[key{id, idx}]; r != nil {
				return []*rec{r}
			}
			return nil
		}
		return c.elements(id)
	}
	var out []*rec
	for _, r := range c.jobs {
		if r.eff.GetUid() != owner {
			continue
		}
		if ok, _ := path.Match(arg, r.eff.GetJobName()); ok || r.eff.GetJobName() == arg {
			out = append(out, r)
		}
	}
	return out
}

// parseJobRef reads "123" or "123[4]"; idx is -1 for a whole job.
func parseJobRef(s string) (id int64, idx int32, ok bool) {
	idx = -1
	if i := strings.IndexByte(s, '['); i >= 0 && strings.HasSuffix(s, "]") {
		v, err := strconv.ParseInt(s[i+1:len(s)-1], 10, 32)
		if err != nil || v < 0 {
			return 0, 0, false
		}
		idx = int32(v)
		s = s[:i]
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, 0, false
	}
	return id, idx, true
}

// checkDependency validates an expression at submission: LSF refuses one
// that names a job it cannot find.
func (c *Controller) checkDependency(owner uint32, dep string) error {
	n, err := parseDependency(dep)
	if err != nil {
		return fmt.Errorf("Dependency condition syntax error: %v", err)
	}
	var walk func(*depNode) error
	walk = func(n *depNode) error {
		for _, k := range n.kids {
			if err := walk(k); err != nil {
				return err
			}
		}
		if n.op == "" && len(c.depTargets(owner, n.arg, n.quoted)) == 0 {
			return fmt.Errorf("%s: No matching job found", n.arg)
		}
		return nil
	}
	return walk(n)
}

func (c *Controller) dependencyMet(r *rec, dep string) depResult {
	n, err := parseDependency(dep)
	if err != nil {
		return depNever
	}
	return c.evalDep(r.eff.GetUid(), n)
}

func (c *Controller) evalDep(owner uint32, n *depNode) depResult {
	switch n.op {
	case "&&":
		a, b := c.evalDep(owner, n.kids[0]), c.evalDep(owner, n.kids[1])
		if a == depNever || b == depNever {
			return depNever
		}
		if a == depMet && b == depMet {
			return depMet
		}
		return depWait
	case "||":
		a, b := c.evalDep(owner, n.kids[0]), c.evalDep(owner, n.kids[1])
		if a == depMet || b == depMet {
			return depMet
		}
		if a == depNever && b == depNever {
			return depNever
		}
		return depWait
	case "!":
		switch c.evalDep(owner, n.kids[0]) {
		case depMet:
			return depNever
		case depNever:
			return depMet
		}
		return depWait
	}
	targets := c.depTargets(owner, n.arg, n.quoted)
	if len(targets) == 0 {
		// Forgotten after the clean period: LSF treats it as never.
		return depNever
	}
	if strings.HasPrefix(n.cond, "num") {
		return countCondition(n, targets)
	}
	res := depMet
	for _, t := range targets {
		switch one := condition(n, t.job); {
		case one == depNever:
			return depNever
		case one == depWait:
			res = depWait
		}
	}
	return res
}

func condition(n *depNode, j *api.Job) depResult {
	s := j.State
	switch n.cond {
	case "done":
		switch {
		case s == api.JobState_DONE:
			return depMet
		case s == api.JobState_EXIT:
			return depNever
		}
	case "ended":
		if isFinished(s) {
			return depMet
		}
	case "exit":
		switch {
		case s == api.JobState_EXIT:
			if !n.hasCmp || compare(j.ExitStatus, n.cmpOp, n.cmpValue) {
				return depMet
			}
			return depNever
		case s == api.JobState_DONE:
			return depNever
		}
	case "started":
		if s != api.JobState_PEND && s != api.JobState_PSUSP {
			return depMet
		}
	case "post_done":
		// A job without post-exec is done with its post-processing when it
		// finishes.
		switch {
		case isFinished(s) && j.PostExec != "POST_ERR":
			return depMet
		case isFinished(s):
			return depNever
		}
	case "post_err":
		switch {
		case isFinished(s) && j.PostExec == "POST_ERR":
			return depMet
		case isFinished(s):
			return depNever
		}
	}
	return depWait
}

// countCondition is num*(j, op n): how many elements of the array are in
// a state, compared with n (or with the array's size for "*"). It can
// never hold when even all the unfinished elements could not bring the
// count there.
func countCondition(n *depNode, els []*rec) depResult {
	count, open := 0, 0
	for _, e := range els {
		s := e.job.State
		if !isFinished(s) {
			open++
		}
		var in bool
		switch n.cond {
		case "numdone":
			in = s == api.JobState_DONE
		case "numended":
			in = isFinished(s)
		case "numexit":
			in = s == api.JobState_EXIT
		case "numhold":
			in = s == api.JobState_PSUSP
		case "numpend":
			in = s == api.JobState_PEND || s == api.JobState_PSUSP
		case "numrun":
			in = s == api.JobState_RUN
		case "numstart":
			in = isRunning(s)
		}
		if in {
			count++
		}
	}
	want := n.cmpValue
	if n.all {
		want = int32(len(els))
	}
	if compare(int32(count), n.cmpOp, want) {
		return depMet
	}
	// Counts of finished states only grow; they cannot pass what the
	// unfinished elements could still add.
	switch n.cond {
	case "numdone", "numended", "numexit":
		reach := int32(count + open)
		if (n.cmpOp == "==" || n.cmpOp == ">=") && reach < want || n.cmpOp == ">" && reach <= want || open == 0 {
			return depNever
		}
	}
	return depWait
}

func compare(a int32, op string, b int32) bool {
	switch op {
	case "!=":
		return a != b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "<":
		return a < b
	case "<=":
		return a <= b
	}
	return a == b
}

// Dependency evaluates an expression for the caller's jobs (bwait): an
// expression that does not parse or names no job is an error, as for
// bsub -w.
func (c *Controller) Dependency(who Caller, expr string) (api.DependencyReply_Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkDependency(who.UID, expr); err != nil {
		return 0, &UserError{Msg: err.Error()}
	}
	n, _ := parseDependency(expr)
	switch c.evalDep(who.UID, n) {
	case depMet:
		return api.DependencyReply_MET, nil
	case depNever:
		return api.DependencyReply_NEVER, nil
	}
	return api.DependencyReply_WAITING, nil
}

// checkCycle refuses a dependency that would make job id (owned by owner,
// named name) wait, directly or through other jobs' dependencies, for
// itself: such jobs would pend forever (c.mu held). LSF checks a
// dependency's jobs only for existence; XCE refuses the bmod (or bsub) that
// closes the cycle.
func (c *Controller) checkCycle(id int64, owner uint32, name, dep string) error {
	n, err := parseDependency(dep)
	if err != nil {
		return nil // checkDependency reports it
	}
	// refersToSelf: does an expression of a job owned by o name the job
	// being changed (by id, or by its name for the owner's own jobs)?
	refersToSelf := func(o uint32, n *depNode) bool {
		var walk func(*depNode) bool
		walk = func(n *depNode) bool {
			for _, k := range n.kids {
				if walk(k) {
					return true
				}
			}
			if n.op != "" {
				return false
			}
			if rid, _, isRef := parseJobRef(n.arg); isRef && !(n.quoted && !strings.Contains(n.arg, "[")) {
				return rid == id
			}
			ok, _ := path.Match(n.arg, name)
			return o == owner && name != "" && (ok || n.arg == name)
		}
		return walk(n)
	}
	self := fmt.Sprintf("<%d>", id)
	if id == 0 {
		self = "(the new job)" // a submission: named, not numbered yet
	}
	if refersToSelf(owner, n) {
		return fmt.Errorf("Dependency condition makes job %s wait for itself", self)
	}
	seen := map[int64]bool{id: true}
	var visit func(owner uint32, n *depNode) []int64
	visit = func(o uint32, n *depNode) []int64 {
		var targets []int64
		var walk func(*depNode)
		walk = func(n *depNode) {
			for _, k := range n.kids {
				walk(k)
			}
			if n.op == "" {
				for _, t := range c.depTargets(o, n.arg, n.quoted) {
					targets = append(targets, t.job.JobId)
				}
			}
		}
		walk(n)
		for _, t := range targets {
			if seen[t] {
				continue
			}
			seen[t] = true
			recs := c.elements(t)
			if len(recs) == 0 || recs[0].eff.GetDependency() == "" || isFinished(recs[0].job.State) {
				continue
			}
			tn, err := parseDependency(recs[0].eff.GetDependency())
			if err != nil {
				continue
			}
			if refersToSelf(recs[0].eff.GetUid(), tn) {
				return []int64{t}
			}
			if rest := visit(recs[0].eff.GetUid(), tn); rest != nil {
				return append([]int64{t}, rest...)
			}
		}
		return nil
	}
	if cycle := visit(owner, n); cycle != nil {
		ids := make([]string, 0, len(cycle)+2)
		ids = append(ids, self)
		for _, t := range cycle {
			ids = append(ids, fmt.Sprintf("<%d>", t))
		}
		ids = append(ids, self)
		return fmt.Errorf("Dependency condition makes a cycle: job %s waits for itself", strings.Join(ids, " -> "))
	}
	return nil
}
