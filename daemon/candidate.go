package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"xce/lib/api/grpcapi"
	"xce/lib/client"
	"xce/lib/clusterauth"
	"xce/lib/config"
	"xce/lib/controller"
	"xce/lib/replica"
	"xce/lib/store"
)

// candidate is xced as one of several controller candidates ([cluster]
// controllers): a raft node replicating the store, and, while it leads, a
// controller over its copy of the store. A standby answers every call
// with the leader's address (grpcapi.NotLeader), except the credential users'
// commands need to reach the leader over TCP.
type candidate struct {
	o     options
	cfg   *config.Config
	dir   string
	host  string
	slots int
	ncpu  int
	st    *store.Store
	tok   clusterauth.Token

	node  *replica.Node
	tcp   *replica.Mux // the --listen port: raft, workers, users' commands
	local *replica.Mux // the Unix socket: this host's commands

	term *term // what serves now: a leader's controller or a standby
	sd   *notifier

	mx *ctlMetrics

	procs *standbyProcs
}

// term is one stretch of leading or standing by.
type term struct {
	ctl     *controller.Controller // nil on a standby
	servers []rpcServer
	supply  func() // stops the leader's own provisioner
	cancel  context.CancelFunc
	ran     chan struct{}
}

// serveCandidate runs until SIGINT or SIGTERM, or until the store can no
// longer follow the log.
func serveCandidate(o options, cfg *config.Config, dir, host string, slots, ncpu int, st *store.Store, sd *notifier, mx *ctlMetrics) error {
	if o.listen == "" || !slices.Contains(cfg.Cluster.Controllers, o.listen) {
		return fmt.Errorf("this xced is not one of the controller candidates %v: start each candidate with --listen set to its entry in [cluster] controllers", cfg.Cluster.Controllers)
	}
	if hc := cfg.Hosts[host]; hc == nil || hc.IsServer() {
		slog.Info("controller candidates run no jobs themselves; run `xced worker` on this host to run jobs here", "host", host)
	}
	c := &candidate{o: o, cfg: cfg, dir: dir, host: host, slots: slots, ncpu: ncpu, st: st, sd: sd, mx: mx, procs: newStandbyProcs()}
	tok, creds, err := clusterServerCredentials(dir, o.listen, host, &cfg.Cluster)
	if err != nil {
		return err
	}
	c.tok = tok
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.listen, err)
	}
	c.tcp = replica.NewMux(ln, creds, isReplicaPeer, replicaDialer(tok))
	defer c.tcp.Close()
	fatal := make(chan error, 1)
	c.node, err = replica.Start(replica.Config{
		ID: o.listen, Candidates: cfg.Cluster.Controllers, Dir: filepath.Join(dir, "raft"), Store: st, Stream: c.tcp.Raft(),
		Established: establishedProbe(o.listen, cfg.Cluster.Controllers, tok),
		Fatal: func(err error) {
			select {
			case fatal <- err:
			default:
			}
		},
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := c.node.Shutdown(); err != nil {
			slog.Warn("raft shutdown", "err", err)
		}
	}()
	st.SetReplicator(c.node.Replicate)
	if mx.m != nil {
		mx.m.SetNode(c.node)
	}

	sock := filepath.Join(dir, client.SocketName)
	uln, err := listenSocket(sock)
	if err != nil {
		return err
	}
	c.local = replica.NewMux(uln, nil, nil, nil)
	defer func() { c.local.Close(); os.Remove(sock) }()
	stopAdmin, err := serveAdmin(dir, st)
	if err != nil {
		return err
	}
	defer stopAdmin()

	c.standBy()
	defer func() { c.end() }()
	slog.Info("controller candidate ready", "address", o.listen, "candidates", cfg.Cluster.Controllers, "socket", sock)
	fmt.Fprintf(os.Stderr, "xced: controller candidate %s of %v; point the commands at it with XCE_DIR=%s or XCE_CONTROLLERS\n", o.listen, cfg.Cluster.Controllers, dir)

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	sd.Ready() // serving: as a standby until elected
	// A standby's watchdog is this loop; a leader's, its scheduling loop.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	leading := c.node.Watch()
	for {
		select {
		case <-tick.C:
			if c.term.ctl == nil {
				sd.Alive()
			}
		case l := <-leading:
			switch {
			case l && c.term.ctl == nil:
				if err := c.lead(); err != nil {
					slog.Error("this candidate was elected but cannot lead; it hands the leadership on", "err", err)
					c.node.Transfer()
				}
			case !l && c.term.ctl != nil:
				slog.Info("this candidate no longer leads; standing by", "leader", c.node.Leader())
				c.standBy()
			}
		case err := <-fatal:
			return err
		case <-hup:
			if ctl := c.term.ctl; ctl != nil {
				if notes, err := ctl.Reconfig(controller.Caller{UID: 0}, false); err != nil {
					slog.Error("reconfiguration refused; the old configuration stays", "err", err)
				} else {
					slog.Info("reconfigured on SIGHUP", "changes", notes)
				}
			}
		case s := <-sigs:
			slog.Info("stopping; running jobs keep running", "signal", s)
			sd.Stopping()
			if c.term.ctl != nil && len(cfg.Cluster.Controllers) > 1 {
				c.handOver()
			}
			return nil
		}
	}
}

// lead makes this candidate the controller: once every entry of earlier
// terms is applied, the controller restores the state from this store
// and takes the workers and the commands from the standby's servers.
func (c *candidate) lead() error {
	start := time.Now()
	c.procs.lead()
	if err := c.node.Establish(30 * time.Second); err != nil {
		return err
	}
	// The configuration as it is now: another candidate may have led
	// with a reconfigured one since this one started.
	if c.o.configFile != "" {
		if cfg, err := config.Load(c.o.configFile); err != nil {
			slog.Error("configuration not read again; the one read at start stays", "file", c.o.configFile, "err", err)
		} else {
			c.o.override(cfg)
			c.cfg = cfg
		}
	}
	ccfg := controller.Config{
		Host:        c.host,
		Slots:       c.slots,
		NCPUs:       c.ncpu,
		MaxMemKB:    totalMemKB(),
		Cluster:     c.cfg,
		ClusterFile: c.o.configFile,
		AdminUIDs:   []uint32{uint32(os.Geteuid())},
		StateDir:    c.dir,

		TerminateInterval: c.o.terminateInterval,
		KillGrace:         c.o.runlimitGrace,
		Workers:           true,
		Replication:       c.node,
		Alive:             c.sd.Alive,
	}
	c.mx.hook(&ccfg)
	ctl, err := controller.New(ccfg, c.st, nil)
	if err != nil {
		return fmt.Errorf("restore the state: %w", err)
	}
	t := &term{ctl: ctl, ran: make(chan struct{})}
	local := controllerServer(ctl, c.tok)
	remote := grpc.NewServer(append(workerServerOptions(replica.Credentials()), ctl.CallInterceptors()...)...)
	grpcapi.RegisterClusterServer(remote, ctl.ClusterService())
	registerUserService(remote, ctl)
	t.servers = []rpcServer{local, remote}
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	go func() { ctl.Run(ctx); close(t.ran) }()
	// The leader runs the provisioner when the configuration has
	// providers, taking their leases like a provisioner daemon would.
	self, err := os.Executable()
	if err == nil {
		t.supply, err = startProvisioner(c.cfg, ctl, c.st, c.dir, self, workerAddrs(c.cfg, c.o.listen), "xced@"+c.o.listen)
	}
	if err != nil {
		slog.Error("this leader runs no provisioner", "err", err)
	}
	c.switchTo(t, local, remote)
	c.mx.setController(ctl)
	slog.Info("leading the controller candidates", "address", c.o.listen, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// handOver ends this candidate's leadership for a clean stop (SIGTERM):
// the calls in flight are answered, new ones are sent on to the other
// candidates (they retry there until the next leader answers, so no
// command fails), the next job id is recorded exactly while this
// candidate can still write (the next leader goes on from it, without
// the gap a crash leaves), and another candidate takes over now rather
// than after an election timeout.
func (c *candidate) handOver() {
	ctl := c.term.ctl
	c.standBy()
	if err := ctl.Close(); err != nil {
		slog.Warn("the next job id was not recorded; the next leader skips the ids this one had reserved", "err", err)
	}
	if err := c.node.Transfer(); err != nil {
		slog.Warn("leadership not handed on", "err", err)
	}
}

// standBy serves the standby's answers.
func (c *candidate) standBy() {
	c.procs.standBy()
	c.mx.setController(nil)
	t := &term{}
	notLeader := func() error { return grpcapi.NotLeader(c.node.Leader()) }
	local := standbyServer(c.tok, notLeader)
	remote := grpc.NewServer(append(workerServerOptions(replica.Credentials()),
		grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error { return notLeader() }))...)
	t.servers = []rpcServer{local, remote}
	c.switchTo(t, local, remote)
}

// switchTo hands new connections to t's servers, then ends the previous
// term: its connections close (workers and commands reconnect and find
// the new leader) and its controller stops.
func (c *candidate) switchTo(t *term, local, remote rpcServer) {
	go serveQuietly(local, c.local.Listener())
	go serveQuietly(remote, c.tcp.Listener())
	old := c.term
	c.term = t
	if old != nil {
		old.stop()
	}
}

func (c *candidate) end() {
	if c.term != nil {
		c.term.stop()
	}
}

// stop ends a term. The unary calls in flight are answered (badmin
// mbdrestart's own, whose leader has just handed its office on, a
// submission waiting for its commit), within callGrace; the leader's
// streams (workers' links, bwait, xcetop) end at once, and their clients
// reconnect to the next leader. Then every connection closes.
func (t *term) stop() {
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, s := range t.servers {
			wg.Go(s.GracefulStop)
		}
		wg.Wait()
		close(done)
	}()
	if t.ctl != nil {
		t.ctl.EndStreams()
	}
	select {
	case <-done:
	case <-time.After(callGrace):
		for _, s := range t.servers {
			s.Stop()
		}
		<-done
	}
	if t.supply != nil {
		t.supply()
	}
	if t.cancel != nil {
		t.cancel()
		<-t.ran
	}
}

// callGrace bounds how long a term's end waits for its unary calls.
const callGrace = 5 * time.Second

// rpcServer is a grpc.Server or the Unix socket's unixrpc.Server.
type rpcServer interface {
	Serve(net.Listener) error
	GracefulStop()
	Stop()
}

func serveQuietly(s rpcServer, ln net.Listener) {
	if err := s.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) && !errors.Is(err, net.ErrClosed) {
		slog.Warn("serve", "err", err)
	}
}

// isReplicaPeer says whether a connection's handshake proved another
// candidate (raft's connections).
func isReplicaPeer(ai credentials.AuthInfo) bool {
	a, ok := ai.(clusterauth.AuthInfo)
	return ok && a.Role == clusterauth.RoleReplica
}
