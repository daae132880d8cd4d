package resreq

// The parser of rusage[] sections: usage sets, amounts with units,
// durations and decays.

import (
	"strconv"
	"strings"
)

func (p *parser) parseRusage() *Rusage {
	ru := &Rusage{}
	for {
		setStart := p.pos
		var set UsageSet
		for {
			set = append(set, p.parseUsage())
			p.skipWS()
			if p.peekByte() != ',' {
				break
			}
			p.pos++
		}
		if dup := set.duplicate(); dup != "" {
			p.fail(setStart, "%s is reserved twice in rusage; a resource may appear once in a usage string", dup)
		}
		ru.Or = append(ru.Or, set)
		p.skipWS()
		if !strings.HasPrefix(p.src[p.pos:], "||") {
			break
		}
		p.pos += 2
	}
	return ru
}

func (p *parser) parseUsage() Usage {
	var u Usage
	durPos, decPos := -1, -1
	multi := -1 // position of a multi-phase amount list
	for {
		p.skipWS()
		start := p.pos
		if p.peekByte() == ']' || p.eof() {
			p.fail(p.pos, "expected a resource reservation such as mem=4000 in rusage[], found %s", p.describe(p.pos))
		}
		key := p.name()
		if key == "" {
			p.fail(start, "expected a resource name in rusage[], found %s", p.describe(start))
		}
		p.skipWS()
		if p.peekByte() != '=' {
			p.fail(p.pos, "expected '=' and an amount after '%s' in rusage[], found %s", key, p.describe(p.pos))
		}
		p.pos++
		p.skipWS()
		switch key {
		case "duration":
			if durPos >= 0 {
				p.fail(start, "duration given twice in one usage string")
			}
			durPos = start
			u.Durations = p.durations()
		case "decay":
			if decPos >= 0 {
				p.fail(start, "decay given twice in one usage string")
			}
			decPos = start
			u.Decays = p.decays()
		default:
			r := p.resource(start, key, "rusage")
			if r.Kind == String || r.Kind == Boolean {
				p.fail(start, "%s is a %s resource; rusage[] reserves only consumable numeric resources", r.Name, r.Kind)
			}
			if r.Kind == Numeric && !r.Consumable {
				p.fail(start, "%s is not a consumable resource; rusage[] reserves only consumable numeric resources", r.Name)
			}
			ru := ResUsage{Name: r.Name}
			if p.peekByte() == '(' {
				listPos := p.pos
				p.pos++
				for {
					p.skipWS()
					if p.peekByte() == ')' {
						break
					}
					ru.Amounts = append(ru.Amounts, p.amount(r))
					p.skipWS()
					if p.peekByte() == ',' {
						p.pos++
					}
				}
				if len(ru.Amounts) == 0 {
					p.fail(p.pos, "empty amount list for %s", r.Name)
				}
				p.pos++
				if len(ru.Amounts) > 1 {
					multi = listPos
				}
			} else {
				ru.Amounts = []Num{p.amount(r)}
			}
			if p.peekByte() == '/' {
				p.pos++
				mpos := p.pos
				m := p.name()
				switch m {
				case "task", "job", "host":
					ru.Method = m
				default:
					p.fail(mpos, "expected task, job or host after '/' (the reservation method), found %s", p.describe(mpos))
				}
			}
			u.Resources = append(u.Resources, ru)
		}
		p.skipWS()
		if p.peekByte() != ':' {
			break
		}
		p.pos++
	}
	if len(u.Resources) == 0 {
		at := durPos
		if at < 0 || decPos >= 0 && decPos < at {
			at = decPos
		}
		p.fail(at, "duration and decay need a resource to apply to, as in mem=100:duration=10")
	}
	// Multi-phase checks.
	phases := 1
	if multi >= 0 {
		if len(u.Resources) != 1 || u.Resources[0].Name != "mem" {
			p.fail(multi, "a multi-phase reservation (a list of amounts) is supported only for mem, alone in its usage string")
		}
		a := u.Resources[0].Amounts
		phases = len(a)
		for i := 1; i < len(a); i++ {
			if a[i].MB() > a[i-1].MB() {
				p.fail(multi, "the amounts of a multi-phase reservation must stay the same or decrease")
			}
		}
		if len(u.Durations) < phases-1 {
			p.fail(multi, "a multi-phase reservation needs a duration for every phase but the last: duration=(10 20)")
		}
	}
	if len(u.Durations) > phases {
		p.fail(durPos, "%d durations given for %d phase(s)", len(u.Durations), phases)
	}
	if len(u.Decays) > phases {
		p.fail(decPos, "%d decay values given for %d phase(s)", len(u.Decays), phases)
	}
	return u
}

// amount reads a reservation amount for resource r.
func (p *parser) amount(r Resource) Num {
	p.skipWS()
	start := p.pos
	if p.peekByte() == '-' {
		p.fail(start, "negative amount for %s: a reservation must be 0 or more", r.Name)
	}
	n, ok := p.number()
	if !ok {
		p.fail(start, "expected a number for the amount of %s, found %s", r.Name, p.describe(start))
	}
	if n.Unit != NoUnit && r.Kind == Numeric && !r.Units {
		p.fail(start, "%s takes no unit; units (KB, MB, GB, ...) apply to memory resources such as mem, swp and tmp", r.Name)
	}
	if n.Unit == NoUnit && r.Units {
		n.Unit = p.memUnit
	}
	return n
}

// number reads a number with an optional unit. It does not move when no
// number is at pos.
func (p *parser) number() (Num, bool) {
	i := p.pos
	for i < len(p.src) && isDigit(p.src[i]) {
		i++
	}
	if i < len(p.src) && p.src[i] == '.' && i+1 < len(p.src) && isDigit(p.src[i+1]) {
		i++
		for i < len(p.src) && isDigit(p.src[i]) {
			i++
		}
	}
	if i == p.pos {
		return Num{}, false
	}
	text := p.src[p.pos:i]
	j := i
	for j < len(p.src) && isWordChar(p.src[j]) {
		j++
	}
	unit := NoUnit
	if j > i {
		u, ok := parseUnit(p.src[i:j])
		if !ok {
			return Num{}, false
		}
		unit = u
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.fail(p.pos, "number %s is out of range", text)
	}
	p.pos = j
	return Num{Value: v, Unit: unit}, true
}

func parseUnit(s string) (Unit, bool) {
	if len(s) == 0 || len(s) > 2 {
		return NoUnit, false
	}
	if len(s) == 2 && s[1] != 'B' && s[1] != 'b' {
		return NoUnit, false
	}
	switch s[0] {
	case 'K', 'k':
		return KB, true
	case 'M', 'm':
		return MB, true
	case 'G', 'g':
		return GB, true
	case 'T', 't':
		return TB, true
	case 'P', 'p':
		return PB, true
	case 'E', 'e':
		return EB, true
	case 'Z', 'z':
		return ZB, true
	}
	return NoUnit, false
}

func (p *parser) durations() []Duration {
	if p.peekByte() != '(' {
		return []Duration{p.duration()}
	}
	p.pos++
	var out []Duration
	for {
		p.skipWS()
		if p.peekByte() == ')' {
			break
		}
		out = append(out, p.duration())
		p.skipWS()
		if p.peekByte() == ',' {
			p.pos++
		}
	}
	if len(out) == 0 {
		p.fail(p.pos, "empty duration list")
	}
	p.pos++
	return out
}

func (p *parser) duration() Duration {
	p.skipWS()
	start := p.pos
	if p.peekByte() == '-' {
		p.fail(start, "bad duration: it must not be negative")
	}
	i := p.pos
	for i < len(p.src) && isDigit(p.src[i]) {
		i++
	}
	if i == start {
		p.fail(start, "bad duration: expected minutes or a number followed by s, m or h, found %s", p.describe(start))
	}
	n, err := strconv.ParseInt(p.src[start:i], 10, 64)
	if err != nil || n > 1<<31 {
		p.fail(start, "bad duration: %s is too large", p.src[start:i])
	}
	d := Duration{N: n}
	if i < len(p.src) {
		switch p.src[i] {
		case 's', 'm', 'h':
			d.Unit = p.src[i]
			i++
		}
	}
	if i < len(p.src) && isWordChar(p.src[i]) {
		p.fail(start, "bad duration: expected minutes or a number followed by s, m or h, found %s", p.describe(start))
	}
	p.pos = i
	return d
}

func (p *parser) decays() []int {
	one := func() int {
		p.skipWS()
		start := p.pos
		if p.pos < len(p.src) && (p.src[p.pos] == '0' || p.src[p.pos] == '1') &&
			(p.pos+1 >= len(p.src) || !isWordChar(p.src[p.pos+1])) {
			p.pos++
			return int(p.src[start] - '0')
		}
		p.fail(start, "decay must be 0 or 1, found %s", p.describe(start))
		return 0
	}
	if p.peekByte() != '(' {
		return []int{one()}
	}
	p.pos++
	var out []int
	for {
		p.skipWS()
		if p.peekByte() == ')' {
			break
		}
		out = append(out, one())
		p.skipWS()
		if p.peekByte() == ',' {
			p.pos++
		}
	}
	if len(out) == 0 {
		p.fail(p.pos, "empty decay list")
	}
	p.pos++
	return out
}
