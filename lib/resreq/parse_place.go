package resreq

// The parsers of the placement sections: span[], cu[] and affinity[].

import (
	"strconv"
	"strings"
)

func (p *parser) parseSpan() *Span {
	sp := &Span{}
	p.skipWS()
	start := p.pos
	key := p.name()
	p.skipWS()
	switch key {
	case "hosts":
		p.expect('=', "after hosts in span[]")
		p.skipWS()
		vpos := p.pos
		neg := false
		if p.peekByte() == '-' {
			neg = true
			p.pos++
		}
		n := p.integer("span[hosts=...]")
		if neg {
			n = -n
		}
		if n != 1 && n != -1 {
			p.fail(vpos, "span[hosts=...] accepts only 1 (all slots on one host) or -1 (ignore the queue's span)")
		}
		sp.Hosts = n
	case "ptile":
		p.expect('=', "after ptile in span[]")
		p.parsePtile(sp)
	case "block":
		p.expect('=', "after block in span[]")
		sp.Block = p.atLeastOne("span[block=...]")
	case "stripe":
		sp.Stripe = true
		if p.peekByte() == '=' {
			p.pos++
			sp.StripeMax = p.atLeastOne("span[stripe=...]")
		}
	case "":
		if p.peekByte() == ']' {
			p.fail(p.pos, "empty span[]: expected hosts=1, ptile=N, block=N or stripe")
		}
		p.fail(start, "expected hosts=, ptile=, block= or stripe in span[], found %s", p.describe(start))
	default:
		p.fail(start, "unknown span[] keyword '%s': expected hosts, ptile, block or stripe", key)
	}
	p.skipWS()
	if p.peekByte() == ':' || p.peekByte() == ',' {
		p.fail(p.pos, "span[] takes one of hosts=, ptile=, block= or stripe; they cannot be combined")
	}
	return sp
}

func (p *parser) parsePtile(sp *Span) {
	for n := 0; ; n++ {
		p.skipWS()
		start := p.pos
		switch {
		case strings.HasPrefix(p.src[p.pos:], "'!'"), strings.HasPrefix(p.src[p.pos:], "\"!\""):
			if sp.PtileMXJ || sp.Ptile > 0 {
				p.fail(start, "ptile has two default values")
			}
			sp.PtileMXJ = true
			p.pos += 3
		case p.peekByte() == '!':
			if sp.PtileMXJ || sp.Ptile > 0 {
				p.fail(start, "ptile has two default values")
			}
			sp.PtileMXJ = true
			p.pos++
		case isDigit(p.peekByte()) || p.peekByte() == '-':
			if sp.PtileMXJ || sp.Ptile > 0 {
				p.fail(start, "ptile has two default values")
			}
			if p.peekByte() == '-' {
				p.fail(start, "ptile must be a positive number of slots per host")
			}
			v := p.integer("ptile")
			if v <= 0 {
				p.fail(start, "ptile must be a positive number of slots per host")
			}
			sp.Ptile = v
		case isLetter(p.peekByte()):
			t := p.value()
			p.skipWS()
			if p.peekByte() != ':' {
				p.fail(p.pos, "expected ':' and a slot count after host type '%s' in ptile, as in ptile='!',LINUX:2", t)
			}
			p.pos++
			vpos := p.pos
			v := p.integer("the ptile of host type " + t)
			if v <= 0 {
				p.fail(vpos, "ptile must be a positive number of slots per host")
			}
			for _, prev := range sp.PtileBy {
				if prev.Type == t {
					p.fail(start, "host type %s appears twice in ptile", t)
				}
			}
			sp.PtileBy = append(sp.PtileBy, TypeSlots{Type: t, Slots: v})
		default:
			p.fail(start, "expected a number of slots per host after 'ptile=', found %s", p.describe(start))
		}
		p.skipWS()
		if p.peekByte() != ',' {
			return
		}
		p.pos++
	}
}

func (p *parser) parseCU() *CU {
	cu := &CU{}
	seen := map[string]bool{}
	for {
		p.skipWS()
		start := p.pos
		key := p.name()
		if key == "" {
			if p.peekByte() == ']' && len(seen) == 0 {
				p.fail(p.pos, "empty cu[]: expected type=, pref=, maxcus=, usablecuslots=, balance or excl")
			}
			p.fail(start, "expected a cu[] keyword, found %s", p.describe(start))
		}
		if seen[key] {
			p.fail(start, "%s given twice in cu[]", key)
		}
		seen[key] = true
		p.skipWS()
		switch key {
		case "type":
			p.expect('=', "after type in cu[]")
			p.skipWS()
			vpos := p.pos
			cu.Type = p.name()
			if cu.Type == "" {
				p.fail(vpos, "expected a compute unit type after 'type=', found %s", p.describe(vpos))
			}
		case "pref":
			p.expect('=', "after pref in cu[]")
			p.skipWS()
			vpos := p.pos
			cu.Pref = p.name()
			switch cu.Pref {
			case "config", "maxavail", "minavail", "bestfit":
			default:
				p.fail(vpos, "cu[pref=...] must be config, maxavail, minavail or bestfit")
			}
		case "maxcus":
			p.expect('=', "after maxcus in cu[]")
			cu.MaxCUs = p.atLeastOne("maxcus")
		case "usablecuslots":
			p.expect('=', "after usablecuslots in cu[]")
			cu.UsableCUSlots = p.atLeastOne("usablecuslots")
		case "balance":
			cu.Balance = true
		case "excl":
			cu.Excl = true
		default:
			p.fail(start, "unknown cu[] keyword '%s': expected type, pref, maxcus, usablecuslots, balance or excl", key)
		}
		p.skipWS()
		if p.peekByte() != ':' {
			return cu
		}
		p.pos++
	}
}

var puTypes = map[string]bool{"numa": true, "socket": true, "core": true, "thread": true, "mcm": true, "cpu": true}

func (p *parser) parseAffinity() *Affinity {
	a := &Affinity{}
	p.skipWS()
	start := p.pos
	a.PU = p.name()
	if !puTypes[a.PU] {
		if a.PU == "" && p.peekByte() == ']' {
			p.fail(start, "empty affinity[]: expected a processor unit such as core(1)")
		}
		p.fail(start, "expected a processor unit type (numa, socket, core or thread) in affinity[], found %s", p.describe(start))
	}
	p.skipWS()
	if p.peekByte() == '(' {
		p.pos++
		a.PUNum = p.atLeastOne("the number of processor units")
		for {
			p.skipWS()
			if p.peekByte() == ')' {
				p.pos++
				break
			}
			p.expect(',', "or ')' in the processor unit options")
			p.skipWS()
			opos := p.pos
			key := p.name()
			p.expect('=', "after '"+key+"'")
			p.skipWS()
			switch key {
			case "same":
				if a.Same != "" {
					p.fail(opos, "same given twice in affinity[]")
				}
				a.Same = p.puLevel()
			case "exclusive":
				if a.Exclusive != nil {
					p.fail(opos, "exclusive given twice in affinity[]")
				}
				if p.peekByte() == '(' {
					p.pos++
					p.skipWS()
					a.Exclusive = []string{p.puLevel()}
					p.skipWS()
					if p.peekByte() == ',' {
						p.pos++
						p.skipWS()
						spos := p.pos
						scope := p.name()
						switch scope {
						case "alljobs", "injob", "intask":
						default:
							p.fail(spos, "expected alljobs, injob or intask as the exclusive scope, found %s", p.describe(spos))
						}
						a.Exclusive = append(a.Exclusive, scope)
					}
					p.expect(')', "to close exclusive=(...)")
				} else {
					a.Exclusive = []string{p.puLevel()}
				}
			default:
				p.fail(opos, "unknown processor unit option '%s': expected same= or exclusive=", key)
			}
		}
	}
	p.skipWS()
	if p.peekByte() == '*' {
		p.pos++
		a.Count = p.atLeastOne("the processor unit count")
	}
	for {
		p.skipWS()
		if p.peekByte() != ':' {
			return a
		}
		p.pos++
		p.skipWS()
		kpos := p.pos
		key := p.name()
		p.expect('=', "after '"+key+"' in affinity[]")
		p.skipWS()
		vpos := p.pos
		switch key {
		case "cpubind":
			if a.CPUBind != "" {
				p.fail(kpos, "cpubind given twice")
			}
			a.CPUBind = p.puLevel()
		case "membind":
			if a.MemBind != "" {
				p.fail(kpos, "membind given twice")
			}
			a.MemBind = p.name()
			if a.MemBind != "localonly" && a.MemBind != "localprefer" {
				p.fail(vpos, "membind must be localonly or localprefer")
			}
		case "distribute":
			if a.Distribute != "" {
				p.fail(kpos, "distribute given twice")
			}
			d := p.name()
			switch d {
			case "anywhere", "pack", "balance":
			default:
				p.fail(vpos, "distribute must be anywhere, pack or balance")
			}
			if d == "pack" && p.peekByte() == '(' {
				p.pos++
				p.skipWS()
				lvl := p.puLevel()
				p.skipWS()
				if p.peekByte() != '=' {
					p.fail(p.pos, "expected '=' after '%s' in pack(...)", lvl)
				}
				p.pos++
				n := p.integer("the pack count")
				p.expect(')', "to close pack(...)")
				d = "pack(" + lvl + "=" + strconv.Itoa(n) + ")"
			}
			a.Distribute = d
		default:
			p.fail(kpos, "unknown affinity[] keyword '%s': expected cpubind, membind or distribute", key)
		}
	}
}

func (p *parser) puLevel() string {
	pos := p.pos
	s := p.name()
	if !puTypes[s] {
		p.fail(pos, "expected numa, socket, core or thread, found %s", p.describe(pos))
	}
	return s
}
