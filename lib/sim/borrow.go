package sim

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"xce/lib/sched"
)

// BorrowResult is what one shared resource's provider lent in a run.
type BorrowResult struct {
	Name      string
	BorrowMax int
	// Loans counts the loans asked for; Units their units.
	Loans, Units int
	// UnitTime is the units lent times how long each was on loan, from
	// its grant to its return or the end of the run.
	UnitTime time.Duration
}

// UnitHours is the units' time on loan in unit-hours.
func (b *BorrowResult) UnitHours() float64 { return b.UnitTime.Hours() }

// lending is the simulated provisioner of the shared resources a
// provider lends more of ([resources.NAME] provider): after each cycle
// the units that the live controller computes to borrow
// (sched.ComputeBorrow) are asked for, lent after the resource's
// sim_lend_delay, raise the total the next cycles see, and go back once
// unused for idle_time, judged as the live provisioner judges them (the
// newest loans first) but after the cycle of the same instant, which sees
// the jobs that start then.
type lending struct {
	pools []*simPool
}

type simPool struct {
	name         string
	total        float64 // the configured total
	max          int
	delay, idle  int64
	loans        []*simLoan
	seq          int
	res          *BorrowResult
	granted, req int // units lent, and asked for and not lent yet
}

type simLoan struct {
	id        int
	amount    int
	grantAt   int64
	granted   bool
	idle      bool // its units are unused since idleSince
	idleSince int64
}

// borrowInit sets up the resources that borrow; none: e.lend stays nil.
func (e *eng) borrowInit() {
	for _, name := range slices.Sorted(maps.Keys(e.conf.Resources)) {
		r := e.conf.Resources[name]
		if !r.Borrows() {
			continue
		}
		if e.lend == nil {
			e.lend = &lending{}
		}
		p := &simPool{name: name, total: float64(r.Total), max: int(r.BorrowMax),
			delay: int64(time.Duration(r.SimLendDelay) * time.Second), idle: int64(time.Duration(r.IdleTime) * time.Second),
			res: &BorrowResult{Name: name, BorrowMax: int(r.BorrowMax)}}
		e.lend.pools = append(e.lend.pools, p)
		e.res.Borrows = append(e.res.Borrows, p.res)
	}
}

// borrow asks for the units the cycle's pending jobs need beyond the
// totals, as the live controller's supplyBorrow does with the same
// computation.
func (e *eng) borrow(d *sched.Decision, now int64) {
	pools := make([]sched.Pool, len(e.lend.pools))
	for i, p := range e.lend.pools {
		pools[i] = sched.Pool{Name: p.name, Pending: p.req, Free: p.max - p.granted - p.req}
	}
	want := sched.ComputeBorrow(&e.snap, d, pools).Units
	for _, p := range e.lend.pools {
		n := want[p.name]
		if n <= 0 {
			continue
		}
		p.seq++
		p.loans = append(p.loans, &simLoan{id: p.seq, amount: n, grantAt: now + p.delay})
		p.req += n
		p.res.Loans++
		p.res.Units += n
	}
}

// borrowNext is the time of the next loan event after now: a grant, or
// an idle loan's return.
func (e *eng) borrowNext() int64 {
	next := int64(1<<63 - 1)
	for _, p := range e.lend.pools {
		for _, l := range p.loans {
			switch {
			case !l.granted:
				next = min(next, l.grantAt)
			case l.idle:
				next = min(next, l.idleSince+p.idle)
			}
		}
	}
	return next
}

// borrowGrant lends the loans due at now, raising the totals the cycle
// sees; it reports whether any was lent.
func (e *eng) borrowGrant(now int64) bool {
	lent := false
	for _, p := range e.lend.pools {
		for _, l := range p.loans {
			if !l.granted && l.grantAt <= now {
				l.granted = true
				p.req -= l.amount
				p.granted += l.amount
				lent = true
			}
		}
		e.snap.Shared[p.name] = p.total + float64(p.granted)
	}
	return lent
}

// borrowReturn judges the loans after the instant's cycle: a loan whose
// units fit in what the total and the older loans leave unused is idle
// from now (if it was not), and goes back after idle_time idle; the
// newest loans are judged first, as the live provisioner does.
func (e *eng) borrowReturn(now int64) {
	var used map[string]float64
	for _, p := range e.lend.pools {
		if p.granted == 0 {
			continue
		}
		if used == nil {
			e.snap.Now = at(now)
			used = sched.SharedHeld(&e.snap)
		}
		unused := p.total + float64(p.granted) - used[p.name]
		byAge := make([]*simLoan, 0, len(p.loans))
		for _, l := range p.loans {
			if l.granted {
				byAge = append(byAge, l)
			}
		}
		slices.SortFunc(byAge, func(a, b *simLoan) int { return cmp.Or(cmp.Compare(b.grantAt, a.grantAt), cmp.Compare(b.id, a.id)) })
		back := map[*simLoan]bool{}
		for _, l := range byAge {
			if float64(l.amount) > unused+1e-9 {
				l.idle = false
				continue
			}
			unused -= float64(l.amount)
			if !l.idle {
				l.idle, l.idleSince = true, now
			}
			if now-l.idleSince >= p.idle {
				back[l] = true
				p.granted -= l.amount
				p.res.UnitTime += time.Duration(int64(l.amount) * (now - l.grantAt))
			}
		}
		if len(back) > 0 {
			p.loans = slices.DeleteFunc(p.loans, func(l *simLoan) bool { return back[l] })
			e.snap.Shared[p.name] = p.total + float64(p.granted)
		}
	}
}

// borrowEnd counts the loans still lent at the end of the run up to its
// clock.
func (e *eng) borrowEnd(now int64) {
	for _, p := range e.lend.pools {
		for _, l := range p.loans {
			if l.granted {
				p.res.UnitTime += time.Duration(int64(l.amount) * (now - l.grantAt))
			}
		}
	}
}
