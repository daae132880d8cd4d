package replica

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
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
// XCE_REPLICA_CRASH=@FILE reads POINT:N from FILE instead, at every
// point reached, and counts anew whenever its content changes (empty or
// missing: disarmed): a test arms running candidates without restarting
// them. Unset (as always outside those tests), nothing is wrapped or
// counted.
const crashEnv = "XCE_REPLICA_CRASH"

type crashPoint struct {
	file string // @FILE's; "" for a fixed POINT:N

	mu    sync.Mutex
	armed string // FILE's content the count began with
	point string
	left  int
}

// crashFromEnv reads XCE_REPLICA_CRASH; nil when unset.
func crashFromEnv() (*crashPoint, error) {
	v := os.Getenv(crashEnv)
	if v == "" {
		return nil, nil
	}
	if file, ok := strings.CutPrefix(v, "@"); ok {
		return &crashPoint{file: file}, nil
	}
	c := &crashPoint{}
	if err := c.arm(v); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *crashPoint) arm(v string) error {
	c.point, c.left = "", 0
	if v == "" {
		return nil
	}
	point, n, ok := strings.Cut(v, ":")
	k, err := strconv.Atoi(n)
	switch point {
	case "before-append", "after-append", "before-apply", "after-apply":
	default:
		ok = false
	}
	if !ok || err != nil || k < 1 {
		return fmt.Errorf("%s: %q: want POINT:N, POINT one of before-append, after-append, before-apply, after-apply", crashEnv, v)
	}
	c.point, c.left = point, k
	return nil
}

// at kills the process when point is this one's and its count is reached.
func (c *crashPoint) at(point string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file != "" {
		b, _ := os.ReadFile(c.file)
		if v := strings.TrimSpace(string(b)); v != c.armed {
			c.armed = v
			if err := c.arm(v); err != nil {
				slog.Error("crash point not armed", "err", err)
			}
		}
	}
	if c.point != point {
		return
	}
	if c.left--; c.left != 0 {
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
