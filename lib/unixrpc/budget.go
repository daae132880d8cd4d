package unixrpc

import "sync"

// budget is what one uid's connections may make the server hold of
// request bytes: the sum of their connection windows, each made of what
// the peer may still send and what it sent that is not yet read.
//
// A connection starts with a small window (base; as many of them as a uid
// may hold connections make half the budget), grows it when a call's request needs more (the message's length
// is known from its prefix), and gives the growth back as the request is
// read. A growth the budget cannot cover now waits, in order, until
// another of the uid's connections gives some back or closes: the peer
// is not granted the credit meanwhile, so it waits too (flow control)
// rather than the server's memory growing. What one uid does so touches
// only its own calls.
type budget struct {
	mu      sync.Mutex
	limit   int64   // the growth the connections may have together
	used    int64   // their growth beyond their first windows, summed
	waiting []*conn // connections waiting for growth, first come first served
	conns   int     // connections of the uid (under the server's mu)
}

// grant is window taken from a budget for a connection, not yet given to
// it.
type grant struct {
	c *conn
	n int64
}

// ask sets what c waits for beyond its window now (what its calls'
// requests need that it cannot yet receive) and grants it when the
// budget can.
func (b *budget) ask(c *conn, n int64) {
	b.mu.Lock()
	c.want = n
	if !c.queued {
		c.queued = true
		b.waiting = append(b.waiting, c)
	}
	grants := b.serveLocked()
	b.mu.Unlock()
	b.apply(grants)
}

// release gives n bytes of window back, and grants what waited on them.
func (b *budget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	grants := b.serveLocked()
	b.mu.Unlock()
	b.apply(grants)
}

// leave gives back the growth of a connection that ended.
func (b *budget) leave(c *conn, grown int64) {
	b.mu.Lock()
	if c.queued {
		for i, w := range b.waiting {
			if w == c {
				b.waiting = append(b.waiting[:i], b.waiting[i+1:]...)
				break
			}
		}
		c.queued, c.want = false, 0
	}
	b.used -= grown
	grants := b.serveLocked()
	b.mu.Unlock()
	b.apply(grants)
}

// serveLocked takes the growth of the connections waiting, in order, as
// far as the budget covers it: one that does not fit holds those behind
// it back, so that a large request is not starved by small ones.
func (b *budget) serveLocked() []grant {
	var grants []grant
	for len(b.waiting) > 0 {
		c := b.waiting[0]
		if c.want > b.limit-b.used {
			break
		}
		b.used += c.want
		if c.want > 0 {
			grants = append(grants, grant{c, c.want})
		}
		c.want, c.queued = 0, false
		b.waiting = b.waiting[1:]
	}
	return grants
}

// apply gives the connections their growth: their windows grow, and
// their peers are told. The WINDOW_UPDATE is written on a goroutine of
// its own, so that a peer that stopped reading holds up no one else's
// call (the idle check closes that connection). Growth for a connection
// that ended meanwhile goes back.
func (b *budget) apply(grants []grant) {
	var lost int64
	for _, g := range grants {
		c := g.c
		c.mu.Lock()
		if c.err != nil {
			c.mu.Unlock()
			lost += g.n
			continue
		}
		c.allot += g.n
		c.recvWin += g.n
		c.mu.Unlock()
		n := uint32(g.n)
		go c.write(func() error { return c.fr.WriteWindowUpdate(0, n) })
	}
	b.release(lost)
}
