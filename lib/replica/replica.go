package replica

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"xce/lib/api"
	"xce/lib/api/grpcapi"
	"xce/lib/logging"
	"xce/lib/store"
)

// Config describes one candidate.
type Config struct {
	// ID is this candidate's address (HOST:PORT), as the candidate list
	// names it: it is both its raft server id and its raft address.
	ID string
	// Candidates are every candidate's address, this one's included.
	Candidates []string
	// Dir holds raft's log, its stable state and its snapshots.
	Dir string
	// Store is this candidate's store; raft applies the log to it.
	Store *store.Store
	// Stream is the connections raft talks through.
	Stream raft.StreamLayer
	// Fatal is called when the store cannot apply a committed entry: the
	// candidate must stop, since its store no longer follows the log.
	Fatal func(error)
	// Established, for a candidate without raft state, asks the other
	// candidates whether they have a leader already: then this one joins
	// them (it is sent the log once the leader's configuration names it)
	// rather than bootstrap a cluster of its own. Nil: bootstrap.
	Established func() bool

	// Timing, for tests; zero values take raft's defaults.
	HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout time.Duration
	SnapshotThreshold                                     uint64
}

// Node is a running candidate.
type Node struct {
	cfg       Config
	raft      *raft.Raft
	transport *raft.NetworkTransport
	logs      *walLog
	fsm       *fsm

	mu       sync.Mutex
	leading  bool
	watchers []chan bool
	lost     map[raft.ServerID]time.Time // followers missing the leader's heartbeats, since

	observer     *raft.Observer
	observations chan raft.Observation
}

// identityKey (m/raft/cluster in the store) records which cluster a
// store belongs to: a random id chosen by the cluster's first leader and
// the fingerprint of the store the cluster began with (empty, or the data
// of a controller made highly available), so that a candidate whose store
// began otherwise refuses to follow.
const identityKey = "raft/cluster"

// Start opens (or creates) a candidate's raft state and joins the
// candidates. A fresh candidate bootstraps the cluster from the candidate
// list, as every fresh candidate does with the same list; one with state
// resumes it. It refuses a store that has applied more of the log than
// this candidate's raft state holds: a store from another cluster, or a
// raft directory that was lost.
func Start(cfg Config) (*Node, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", cfg.Dir, err)
	}
	// raft's lines go through the daemon's handler (lib/logging), in its
	// format; warnings and up unless the daemon logs at debug.
	logger := logging.HCLog(slog.Default(), "raft", hclog.Warn)
	logs, err := openLog(cfg.Dir, logger)
	if err != nil {
		return nil, fmt.Errorf("open the raft log in %s: %w", cfg.Dir, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, logger)
	if err != nil {
		logs.Close()
		return nil, fmt.Errorf("open the raft snapshots in %s: %w", cfg.Dir, err)
	}
	if err := checkStore(cfg.Store, logs, snaps, cfg.Dir); err != nil {
		logs.Close()
		return nil, err
	}
	crash, err := crashFromEnv()
	if err != nil {
		logs.Close()
		return nil, err
	}
	f := &fsm{st: cfg.Store, fatal: cfg.Fatal, crash: crash}
	if cfg.Store.Applied() == 0 {
		if f.startPrint, err = fingerprint(cfg.Store); err != nil {
			logs.Close()
			return nil, err
		}
	}
	n := &Node{cfg: cfg, logs: logs, fsm: f}
	f.node = n
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = logger
	// The store records the index of the last entry it applied, and is
	// on disk at least up to the latest snapshot's (fsm.Snapshot syncs
	// it; its later commits are not synced: lib/store's replica.go):
	// there is nothing to restore at start, and raft applies the log
	// from the snapshot's index on, the entries the store has skipped.
	rc.NoSnapshotRestoreOnStart = true
	if behind, err := behindSnapshot(cfg.Store, snaps); err != nil {
		logs.Close()
		return nil, err
	} else if behind {
		// A store that lost writes from before the latest snapshot
		// (a log whose synced part was damaged, which Badger cuts):
		// raft would not apply the log before the snapshot again, so
		// the store is restored from the snapshot first.
		slog.Warn("the store is behind this candidate's latest raft snapshot: restoring it from the snapshot, then applying the log", "applied", cfg.Store.Applied())
		rc.NoSnapshotRestoreOnStart = false
	}
	// Writes that arrive while the leader appends wait in a buffer and
	// go in its next append together (up to MaxAppendEntries): one
	// synced write of the log, and one round to the followers, for all
	// of them.
	rc.BatchApplyCh = true
	notify := make(chan bool, 16)
	rc.NotifyCh = notify
	if cfg.HeartbeatTimeout > 0 {
		rc.HeartbeatTimeout = cfg.HeartbeatTimeout
	}
	if cfg.ElectionTimeout > 0 {
		rc.ElectionTimeout = cfg.ElectionTimeout
	}
	if cfg.LeaderLeaseTimeout > 0 {
		rc.LeaderLeaseTimeout = cfg.LeaderLeaseTimeout
	}
	if cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = cfg.SnapshotThreshold
	}
	n.transport = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: cfg.Stream, MaxPool: 4, Timeout: 10 * time.Second, Logger: logger,
	})
	var logStore raft.LogStore = logs
	if crash != nil {
		logStore = &crashLogs{LogStore: logs, crash: crash}
	}
	cache, err := raft.NewLogCache(1024, logStore)
	if err != nil {
		logs.Close()
		return nil, err
	}
	has, err := raft.HasExistingState(cache, logs, snaps)
	if err != nil {
		logs.Close()
		return nil, fmt.Errorf("read the raft state in %s: %w", cfg.Dir, err)
	}
	if !has && cfg.Established != nil && cfg.Established() {
		slog.Info("joining the running controller candidates: this one follows once the leader's configuration names it (their [cluster] controllers, then badmin reconfig)", "address", cfg.ID)
		has = true
	}
	if !has {
		var servers []raft.Server
		for _, c := range cfg.Candidates {
			servers = append(servers, raft.Server{ID: raft.ServerID(c), Address: raft.ServerAddress(c), Suffrage: raft.Voter})
		}
		if err := raft.BootstrapCluster(rc, cache, logs, snaps, n.transport, raft.Configuration{Servers: servers}); err != nil {
			logs.Close()
			return nil, fmt.Errorf("bootstrap the controller candidates: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, f, cache, logs, snaps, n.transport)
	if err != nil {
		logs.Close()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	n.raft = r
	n.lost = map[raft.ServerID]time.Time{}
	obs := make(chan raft.Observation, 64)
	n.observer = raft.NewObserver(obs, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation, raft.LeaderObservation:
			return true
		}
		return false
	})
	r.RegisterObserver(n.observer)
	n.observations = obs
	go n.observe(obs)
	go n.watch(notify)
	return n, nil
}

// checkStore refuses a store ahead of this candidate's log.
func checkStore(st *store.Store, logs raft.LogStore, snaps *raft.FileSnapshotStore, dir string) error {
	last, err := logs.LastIndex()
	if err != nil {
		return fmt.Errorf("read the raft log in %s: %w", dir, err)
	}
	if list, err := snaps.List(); err == nil && len(list) > 0 && list[0].Index > last {
		last = list[0].Index
	}
	if applied := st.Applied(); applied > last {
		return fmt.Errorf("the store has applied entry %d of the controllers' log, but this candidate's log (%s) ends at %d: the store is from another cluster, or this candidate's raft directory was lost; move the store (DIR/db) and %s aside and start again to receive the leader's copy", applied, dir, last, dir)
	}
	return nil
}

// behindSnapshot says whether the store has applied less of the log than
// the latest snapshot holds.
func behindSnapshot(st *store.Store, snaps *raft.FileSnapshotStore) (bool, error) {
	list, err := snaps.List()
	if err != nil {
		return false, fmt.Errorf("list the raft snapshots: %w", err)
	}
	return len(list) > 0 && st.Applied() < list[0].Index, nil
}

// fingerprint is a digest of a store's data (not its raft bookkeeping).
func fingerprint(st *store.Store) ([]byte, error) {
	h := sha256.New()
	if err := st.Digest(h, []byte("m/raft/")); err != nil {
		return nil, fmt.Errorf("fingerprint the store: %w", err)
	}
	return h.Sum(nil), nil
}

// watch follows raft's leadership notifications (which block raft until
// read) and passes the latest to the watchers.
func (n *Node) watch(notify <-chan bool) {
	for leading := range notify {
		n.mu.Lock()
		n.leading = leading
		for _, w := range n.watchers {
			select {
			case w <- leading:
			default:
				// The watcher has a change pending: replace it by this one.
				select {
				case <-w:
				default:
				}
				w <- leading
			}
		}
		n.mu.Unlock()
	}
}

// Watch returns a channel that receives this candidate's leadership
// (true: it leads) on every change, the latest change only when the
// reader is behind; the current state is sent first.
func (n *Node) Watch() <-chan bool {
	w := make(chan bool, 1)
	n.mu.Lock()
	w <- n.leading
	n.watchers = append(n.watchers, w)
	n.mu.Unlock()
	return w
}

// Address is this candidate's address.
func (n *Node) Address() string { return n.cfg.ID }

// Leader is the leader's address, "" while none is known.
func (n *Node) Leader() string {
	addr, _ := n.raft.LeaderWithID()
	return string(addr)
}

// IsLeader says whether this candidate leads now.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// applyTimeout bounds how long a write waits for the log.
const applyTimeout = 15 * time.Second

// Replicate is the store's Replicator: it appends a batch to the log and
// waits until this candidate has applied it. A candidate that does not
// lead answers grpcapi.NotLeader (nothing was written); one that lost its
// office while the batch was in flight cannot know whether it was
// committed, and says so.
func (n *Node) Replicate(data []byte) error {
	f := n.raft.Apply(data, applyTimeout)
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return grpcapi.NotLeader(n.Leader())
		}
		if errors.Is(err, raft.ErrLeadershipLost) {
			return fmt.Errorf("this controller lost its leadership while writing; the change may or may not have been stored: %w", err)
		}
		return fmt.Errorf("replicate: %w", err)
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

// Establish prepares a new leader's store: it waits until every entry of
// earlier terms is applied here, then records the cluster's identity if
// no leader did before. Only then may the controller restore from it.
func (n *Node) Establish(timeout time.Duration) error {
	if err := n.raft.Barrier(timeout).Error(); err != nil {
		return fmt.Errorf("apply the log before leading: %w", err)
	}
	ids, err := n.cfg.Store.Meta(identityKey)
	if err != nil {
		return err
	}
	if len(ids[identityKey]) > 0 {
		return nil
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return err
	}
	print := n.fsm.startPrint
	if print == nil {
		return errors.New("this store has applied log entries but records no cluster identity: it is damaged")
	}
	return n.cfg.Store.SetMeta(identityKey, append(id, print...))
}

// SetCandidates changes the candidates to those listed, one change at a
// time through the log (raft's membership changes): a new candidate
// joins as a voter and catches up from the log or a snapshot; a removed
// one stops being asked. The leader does not remove itself: hand the
// leadership on first (badmin mbdrestart).
func (n *Node) SetCandidates(addrs []string) error {
	if !n.IsLeader() {
		return grpcapi.NotLeader(n.Leader())
	}
	if !slices.Contains(addrs, n.cfg.ID) {
		return fmt.Errorf("the list leaves out the leader %s: run badmin mbdrestart first, then badmin reconfig on the new leader", n.cfg.ID)
	}
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	have := map[string]bool{}
	for _, s := range f.Configuration().Servers {
		have[string(s.ID)] = true
		if !slices.Contains(addrs, string(s.ID)) {
			if err := n.raft.RemoveServer(s.ID, 0, 10*time.Second).Error(); err != nil {
				return fmt.Errorf("remove candidate %s: %w", s.ID, err)
			}
			slog.Info("controller candidate removed", "address", s.ID)
		}
	}
	for _, a := range addrs {
		if !have[a] {
			if err := n.compact(); err != nil {
				return err
			}
			if err := n.raft.AddVoter(raft.ServerID(a), raft.ServerAddress(a), 0, 10*time.Second).Error(); err != nil {
				return fmt.Errorf("add candidate %s: %w", a, err)
			}
			slog.Info("controller candidate added", "address", a)
		}
	}
	return nil
}

// compact takes a snapshot and drops the whole log before it, so that a
// candidate that joins is sent the store as it is now rather than the log
// from its start (which does not hold what a store converted to a
// replicated one began with).
func (n *Node) compact() error {
	orig := n.raft.ReloadableConfig()
	rc := orig
	rc.TrailingLogs = 0
	if err := n.raft.ReloadConfig(rc); err != nil {
		return err
	}
	defer n.raft.ReloadConfig(orig)
	if err := n.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return fmt.Errorf("snapshot the store for the new candidate: %w", err)
	}
	return nil
}

// Transfer hands the leadership to another candidate (badmin mbdrestart).
func (n *Node) Transfer() error {
	if err := n.raft.LeadershipTransfer().Error(); err != nil {
		return fmt.Errorf("transfer the leadership: %w", err)
	}
	return nil
}

// Candidates lists the configured candidates with their states as this
// candidate sees them: a leader knows which followers miss its
// heartbeats (unreachable); a standby knows only itself and the leader.
func (n *Node) Candidates() []*api.Candidate {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	leader := n.Leader()
	self := n.raft.State()
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*api.Candidate
	for _, s := range f.Configuration().Servers {
		c := &api.Candidate{Address: string(s.Address), Voter: s.Suffrage == raft.Voter, State: "unknown"}
		switch {
		case string(s.ID) == n.cfg.ID:
			c.State = stateName(self)
		case string(s.Address) == leader:
			c.State = "leader"
		case self == raft.Leader:
			c.State = "follower"
			if t, lost := n.lost[s.ID]; lost {
				c.State, c.LastContact = "unreachable", t.UnixNano()
			}
		}
		out = append(out, c)
	}
	return out
}

// observe keeps the leader's view of which followers miss heartbeats.
func (n *Node) observe(obs <-chan raft.Observation) {
	for o := range obs {
		n.mu.Lock()
		switch d := o.Data.(type) {
		case raft.FailedHeartbeatObservation:
			n.lost[d.PeerID] = d.LastContact
		case raft.ResumedHeartbeatObservation:
			delete(n.lost, d.PeerID)
		case raft.LeaderObservation:
			clear(n.lost)
		}
		n.mu.Unlock()
	}
}

func stateName(s raft.RaftState) string {
	switch s {
	case raft.Leader:
		return "leader"
	case raft.Follower:
		return "follower"
	case raft.Candidate:
		return "candidate"
	}
	return "shutdown"
}

// Shutdown stops the candidate (its store stays open).
func (n *Node) Shutdown() error {
	err := n.raft.Shutdown().Error()
	n.raft.DeregisterObserver(n.observer)
	close(n.observations)
	if cerr := n.transport.Close(); err == nil {
		err = cerr
	}
	if cerr := n.logs.Close(); err == nil {
		err = cerr
	}
	return err
}

// fsm applies the log to the store.
type fsm struct {
	st         *store.Store
	node       *Node
	startPrint []byte // the store's fingerprint at start, before it followed any leader
	fatal      func(error)
	failed     error
	crash      *crashPoint // tests' crash points (crash.go); nil: none
}

func (f *fsm) Apply(l *raft.Log) any { return f.ApplyBatch([]*raft.Log{l})[0] }

func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	if f.failed != nil {
		for i := range out {
			out[i] = f.failed
		}
		return out
	}
	var entries []store.Entry
	var at []int
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		if err := f.checkIdentity(l.Data); err != nil {
			f.fail(err)
			for i := range out {
				out[i] = err
			}
			return out
		}
		entries = append(entries, store.Entry{Index: l.Index, Data: l.Data})
		at = append(at, i)
	}
	if len(entries) == 0 {
		return out
	}
	f.crash.at("before-apply")
	outcomes, err := f.st.ApplyReplicated(entries)
	f.crash.at("after-apply")
	if err != nil {
		err = fmt.Errorf("apply the controllers' log to the store: %w", err)
		f.fail(err)
		for i := range out {
			out[i] = err
		}
		return out
	}
	for k, i := range at {
		if outcomes[k] != nil {
			out[i] = outcomes[k]
		}
	}
	return out
}

// checkIdentity refuses an entry that records a cluster identity this
// store cannot belong to: another cluster's, or one whose data began
// different from this store's.
func (f *fsm) checkIdentity(data []byte) error {
	v, ok := store.BatchValue(data, []byte("m/"+identityKey))
	if !ok {
		return nil
	}
	have, err := f.st.Meta(identityKey)
	if err != nil {
		return err
	}
	if old := have[identityKey]; len(old) > 0 {
		if !bytes.Equal(old, v) {
			return errors.New("this candidate's store belongs to another controller cluster (its recorded cluster identity differs from the leader's): move DIR/db aside and start again to receive the leader's copy")
		}
		return nil
	}
	if len(v) < 16 || f.startPrint == nil || !bytes.Equal(v[16:], f.startPrint) {
		return errors.New("this candidate's store began different from the leader's (its data does not match what the cluster started with): move DIR/db aside and start again to receive the leader's copy, or give every candidate the same store before their first start")
	}
	return nil
}

func (f *fsm) fail(err error) {
	if f.failed != nil {
		return
	}
	f.failed = err
	slog.Error("this candidate stops following the controllers' log", "err", err)
	if f.fatal != nil {
		go f.fatal(err)
	}
}

// Snapshot runs between applies, and raft records the last applied
// index as the snapshot's; once it is taken raft may drop the log up to
// it (less its trailing entries). The store, whose commits are not
// synced, is synced first, so that it never lacks what the log no longer
// holds.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	if err := f.st.Sync(); err != nil {
		return nil, err
	}
	return &snapshot{st: f.st}, nil
}

// Restore replaces the store by a leader's snapshot (a candidate too far
// behind for the log).
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	if err := f.st.ReplaceWith(rc); err != nil {
		err = fmt.Errorf("restore the store from the leader's snapshot: %w", err)
		f.fail(err)
		return err
	}
	f.startPrint = nil
	return nil
}

// snapshot streams the store's backup. It is read at one point in time
// at or after the snapshot's index: entries it already holds are skipped
// when applied again (the store records the index it applied).
type snapshot struct{ st *store.Store }

func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.st.Backup(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *snapshot) Release() {}

// Status is a candidate's raft state, for metrics.
type Status struct {
	Role                   string // Leader, Follower, Candidate or Shutdown
	Term                   uint64
	CommitIndex, LastIndex uint64
	AppliedIndex           uint64 // what raft handed the store
	LastContactSeconds     float64
}

// Status reads the candidate's raft state (cheap: raft's own counters).
func (n *Node) Status() Status {
	st := Status{
		Role:         n.raft.State().String(),
		Term:         n.raft.CurrentTerm(),
		CommitIndex:  n.raft.CommitIndex(),
		LastIndex:    n.raft.LastIndex(),
		AppliedIndex: n.raft.AppliedIndex(),
	}
	if lc := n.raft.LastContact(); !lc.IsZero() {
		st.LastContactSeconds = time.Since(lc).Seconds()
	}
	return st
}
