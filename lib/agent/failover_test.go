package agent

import (
	"net"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"xce/lib/api/grpcapi"
)

func TestCandidates(t *testing.T) {
	for in, want := range map[string][]string{
		"a:1":          {"a:1"},
		"a:1,b:2":      {"a:1", "b:2"},
		" a:1 , b:2 ,": {"a:1", "b:2"},
		"":             nil,
	} {
		if got := Candidates(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Candidates(%q) = %q, want %q", in, got, want)
		}
	}
}

func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

// A standby's NotLeader on the register sends the worker to the leader it
// names, even one not in the list.
func TestStandbySendsTheWorkerToTheLeader(t *testing.T) {
	leader := newFakeController(t)
	standby := newFakeController(t)
	standby.refuse = grpcapi.NotLeader(leader.addr)
	res := runAgentAt(t, standby.addr, filepath.Join(t.TempDir(), "jobs"))
	c := leader.next(t)
	if c.reg.GetHost().GetName() != "hostA" {
		t.Errorf("register %v", c.reg)
	}
	select {
	case <-res.done:
		t.Fatalf("Run returned: %v", res.err)
	default:
	}
}

// While none is elected, and past a candidate that does not answer, the
// worker tries the next candidates until one is the leader.
func TestWorkerTriesTheCandidates(t *testing.T) {
	leader := newFakeController(t)
	undecided := newFakeController(t)
	undecided.refuse = grpcapi.NotLeader("")
	runAgentAt(t, closedAddr(t)+","+undecided.addr+","+leader.addr, filepath.Join(t.TempDir(), "jobs"))
	leader.next(t)
}

// A worker whose leader goes away finds the next one among the candidates.
func TestWorkerFollowsANewLeader(t *testing.T) {
	first, second := newFakeController(t), newFakeController(t)
	runAgentAt(t, first.addr+","+second.addr, filepath.Join(t.TempDir(), "jobs"))
	c := first.next(t)
	// The first steps down: it drops the worker and names the second.
	first.mu.Lock()
	first.refuse = grpcapi.NotLeader(second.addr)
	first.mu.Unlock()
	close(c.drop)
	c = second.next(t)
	if c.reg == nil {
		t.Fatal("no register at the new leader")
	}
	select {
	case <-first.conns:
		t.Error("the worker registered again with the old leader")
	case <-time.After(100 * time.Millisecond):
	}
}
