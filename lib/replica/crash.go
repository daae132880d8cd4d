package replica

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/hashicorp/raft"
)

// Crash points, for the fault-injection tests (tests/fault_ha_test.go):
// with XCE_REPLICA_CRASH=POINT:N in its environment, a candidate kills
// itself with SIGKILL the Nth time it reaches POINT with a batch of the
// store's writes, one of
//
//	before-append  raft is about to append entries to this candidate's log
//	after-append   the entries are in the log (synced), not yet answered
//	before-apply   committed entries are about to be applied to the store
//	after-apply    the store has applied them, raft not yet told
//
// Unset (as always outside those tests), nothing is wrapped or counted.
const crashEnv = "XCE_REPLICA_CRASH"

type crashPoint struct {
	point string
	left  atomic.Int64
}

// crashFromEnv reads XCE_REPLICA_CRASH; nil when unset.
func crashFromEnv() (*crashPoint, error) {
	v := os.Getenv(crashEnv)
	if v == "" {
		return nil, nil
	}
	point, n, ok := strings.Cut(v, ":")
	k, err := strconv.Atoi(n)
	switch point {
	case "before-append", "after-append", "before-apply", "after-apply":
	default:
		ok = false
	}
	if !ok || err != nil || k < 1 {
		return nil, fmt.Errorf("%s=%q: want POINT:N, POINT one of before-append, after-append, before-apply, after-apply", crashEnv, v)
	}
	c := &crashPoint{point: point}
	c.left.Store(int64(k))
	return c, nil
}

// at kills the process when point is this one's and its count is reached.
func (c *crashPoint) at(point string) {
	if c == nil || c.point != point || c.left.Add(-1) != 0 {
		return
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}

// crashLogs is a log store with the append's crash points.
type crashLogs struct {
	raft.LogStore
	crash *crashPoint
}

func (l *crashLogs) StoreLog(e *raft.Log) error { return l.StoreLogs([]*raft.Log{e}) }

func (l *crashLogs) StoreLogs(logs []*raft.Log) error {
	writes := false
	for _, e := range logs {
		writes = writes || e.Type == raft.LogCommand
	}
	if !writes {
		return l.LogStore.StoreLogs(logs)
	}
	l.crash.at("before-append")
	if err := l.LogStore.StoreLogs(logs); err != nil {
		return err
	}
	l.crash.at("after-append")
	return nil
}
