package unixrpc

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// fill opens streams calls of method on r, each declaring a message of
// size bytes, and sends their bodies as far as the server's windows let
// it, keeping to them; it returns what it sent once the server has
// granted nothing more for a while (the windows are spent) or the whole
// was sent.
func (r *rawConn) fill(t *testing.T, method string, streams int, size uint32) int64 {
	t.Helper()
	connWin := int64(65535)
	streamWin := map[uint32]int64{}
	left := map[uint32]int64{}
	var ids []uint32
	for i := 0; i < streams; i++ {
		id := uint32(1 + 2*i)
		r.open(t, id, method)
		ids = append(ids, id)
		streamWin[id] = 65535 // until the server's SETTINGS say more
		left[id] = 5 + int64(size)
	}
	first := map[uint32]bool{}
	var sent int64
	chunk := make([]byte, 16<<10)
	for {
		progress := false
		for _, id := range ids {
			n := min(connWin, streamWin[id], left[id], int64(len(chunk)))
			if n <= 0 {
				continue
			}
			data := chunk[:n]
			if !first[id] {
				if n < 5 {
					continue
				}
				first[id] = true
				data = message(size, chunk[:n-5])
			}
			if err := r.fr.WriteData(id, false, data); err != nil {
				return sent
			}
			connWin -= n
			streamWin[id] -= n
			left[id] -= n
			sent += n
			progress = true
		}
		if progress {
			continue
		}
		select {
		case f, open := <-r.frames:
			if !open {
				return sent
			}
			switch f := f.(type) {
			case *http2.WindowUpdateFrame:
				if f.StreamID == 0 {
					connWin += int64(f.Increment)
				} else {
					streamWin[f.StreamID] += int64(f.Increment)
				}
			case *http2.FrameHeader:
				if f.Type == http2.FrameSettings && f.Flags&http2.FlagSettingsAck == 0 {
					for id := range streamWin {
						streamWin[id] += streamWindow - 65535
					}
				}
			}
		case <-time.After(300 * time.Millisecond):
			return sent
		}
	}
}

// One uid's connections, each with calls whose requests it never ends,
// hold at most the uid's budget between them: the server grants the
// rest no credit, so their peer waits. A small call of the same uid is
// served meanwhile; a large one waits for credit, and is served once the
// others' connections close.
func TestBudgetPerUID(t *testing.T) {
	countAll := Option(func(s *Server) { s.exempt = func(uint32) bool { return false } })
	const maxRecv = 1 << 20
	const limit = 8 << 20
	f := serve(t, countAll, MaxRecvMsgSize(maxRecv), MaxBufferedPerUID(limit), MaxConnsPerUID(16))
	stop := make(chan struct{})
	peak := watchBuffered(f.srv, stop)
	var attackers []*rawConn
	var mu sync.Mutex
	var sent int64
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		r := dialRaw(t, f.sock)
		attackers = append(attackers, r)
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := r.fill(t, "/test.T/Echo", 4, maxRecv-16)
			mu.Lock()
			sent += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("12 connections × 4 calls sent %d KB in all, within a budget of %d KB", sent>>10, limit>>10)
	if sent > limit {
		t.Errorf("the server took %d bytes from one uid, beyond its budget of %d", sent, limit)
	}
	if _, err := echo(ctxT(t), f.cc, []byte("small")); err != nil {
		t.Fatalf("a small call of the same uid: %v", err)
	}
	// A large call waits for credit, then goes through once the attack's
	// connections close.
	done := make(chan error, 1)
	big := bytes.Repeat([]byte("y"), maxRecv/2)
	go func() {
		got, err := echo(ctxT(t), f.dial(t), big)
		if err == nil && !bytes.Equal(got, big) {
			err = errEchoMismatch
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Logf("the large call did not wait (%v): the budget had room", err)
	case <-time.After(500 * time.Millisecond):
		for _, r := range attackers {
			r.nc.Close()
		}
		if err := <-done; err != nil {
			t.Fatalf("the large call once the budget was free: %v", err)
		}
	}
	close(stop)
	if p := <-peak; p > limit {
		t.Errorf("the server held %d bytes of one uid's requests, beyond its budget of %d", p, limit)
	}
	f.srv.mu.Lock()
	defer f.srv.mu.Unlock()
	for uid, b := range f.srv.budgets {
		b.mu.Lock()
		if len(b.waiting) != 0 {
			t.Errorf("uid %d: %d connections still waiting", uid, len(b.waiting))
		}
		b.mu.Unlock()
	}
}

var errEchoMismatch = errors.New("the echo differs from the request")
