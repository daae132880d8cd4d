package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"xce/lib/agent"
	"xce/lib/api/grpcapi"
	"xce/lib/api/rpc"
	"xce/lib/clusterauth"
	"xce/lib/config"
	"xce/lib/logging"
	"xce/lib/metrics"
	"xce/lib/provider"
	"xce/lib/provision"
)

type provisionerOptions struct {
	controller      string
	tokenFile       string
	workerTokenFile string
	dir             string
	interval        time.Duration
	log             logging.Options
	metrics         string
}

// provisionerCommand is `xced provisioner`: the provisioner as a daemon
// of its own (lib/provision's Agent over gRPC), for a site that runs its
// providers' plugins away from the controller, or several provisioners
// for one to take over from another.
func provisionerCommand() *cobra.Command {
	var o provisionerOptions
	cmd := &cobra.Command{
		Use:   "provisioner --controller HOST:PORT[,HOST:PORT...] --token-file FILE --dir DIR",
		Short: "Ask the providers for hosts on demand and give them back (the provisioner daemon)",
		Long: `Ask the providers for hosts on demand and give them back (the provisioner daemon).

The provisioner reads the demand for each template from the controller,
asks the template's provider for hosts, follows them until their workers
join, and returns those that stay idle, outlive their max_ttl or are
drained. The providers and templates are the controller's configuration
([providers.NAME], [templates.NAME] in xce.toml). Every request and every
instance is recorded in the controller's store (replicated under high
availability) before a provider is called.

--controller names the controller's --listen address, or every controller
candidate's, comma-separated; the provisioner follows the leader as a
worker does. --token-file is the controller's DIR/provisioner.token: the
provisioner proves it holds that token (a worker's cluster.token does not
make a provisioner). The workers of a "local" provider get
--worker-token-file (default: cluster.token beside --token-file).

Each provider is owned by one provisioner at a time, through a lease the
controller grants and the provisioner renews every --interval (a lease
lasts three). Several provisioners may run: the others wait, and one takes
a provider over once its owner stops renewing. Without a provisioner
daemon the controller runs one itself; it leaves a provider to a daemon
that asks for it.

A "local" provider's instances live under DIR/rc; provisioners that may
take over from each other on one host share DIR.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runProvisioner(o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.controller, "controller", "", "the controller's HOST:PORT (xced --listen), or the candidates' HOST:PORT list, comma-separated")
	f.StringVar(&o.tokenFile, "token-file", "", "the provisioner token (the controller's DIR/provisioner.token)")
	f.StringVar(&o.workerTokenFile, "worker-token-file", "", "the cluster token a local provider's workers use (default: cluster.token beside --token-file)")
	f.StringVar(&o.dir, "dir", "", "the provisioner's directory: a local provider's instances are under DIR/rc")
	f.DurationVar(&o.interval, "interval", time.Second, "the heartbeat: leases are renewed this often and last three")
	logFlags(f, &o.log)
	f.StringVar(&o.metrics, "metrics", "", "serve the provisioner's Prometheus metrics at http://HOST:PORT/metrics, and /healthz and /readyz")
	for _, name := range []string{"controller", "token-file", "dir"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

// runProvisioner runs until SIGINT or SIGTERM; then it stops calling the
// providers and gives its leases back. The hosts it asked for stay: the
// next provisioner finds them in the records.
func runProvisioner(o provisionerOptions) error {
	tok, dir, err := startAgent(o.log, o.tokenFile, o.dir)
	if err != nil {
		return err
	}
	workerTok := o.workerTokenFile
	if workerTok == "" {
		workerTok = filepath.Join(filepath.Dir(o.tokenFile), clusterauth.TokenFile)
	}
	if workerTok, err = filepath.Abs(workerTok); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cands := agent.Candidates(o.controller)
	if len(cands) == 0 {
		return errors.New("--controller names no controller")
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	owner := fmt.Sprintf("provisioner@%s:%d:%s", shortHostname(), os.Getpid(), hex.EncodeToString(rnd[:]))
	link := &grpcLink{cands: cands, opts: []grpc.DialOption{grpc.WithTransportCredentials(
		clusterauth.ProvisionerCredentials(tok, clusterauth.WithLogger(slog.Default())))}}
	defer link.close()
	sd := newNotifier()
	ag := provision.NewAgent(provision.AgentConfig{
		Owner:    owner,
		Link:     link,
		Interval: o.interval,
		Provider: func(pc *config.Provider) (provider.Provider, error) {
			return newProvider(pc, self, filepath.Join(dir, "rc"), o.controller, workerTok)
		},
		Fatal: clusterauth.IsRefused,
		Beat: func(ok bool) {
			sd.Alive()
			if ok {
				sd.Ready()
			}
		},
	})
	stopMetrics, err := startProvisionerMetrics(o.metrics, ag)
	if err != nil {
		return err
	}
	defer stopMetrics()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		slog.Info("stopping; the providers' leases are given back, their hosts stay")
		sd.Stopping()
	}()
	slog.Info("provisioner starting", "owner", owner, "controller", o.controller, "dir", dir)
	fmt.Fprintf(os.Stderr, "xced provisioner: controller %s, local instances under %s\n", o.controller, filepath.Join(dir, "rc"))
	if err := ag.Run(ctx); err != nil {
		return fmt.Errorf("the controller refused this provisioner (is --token-file the controller's %s?): %w", clusterauth.ProvisionerTokenFile, err)
	}
	return nil
}

// startProvisionerMetrics serves the provisioner's metrics on addr ("":
// none); /readyz is 200 while the controller answers.
func startProvisionerMetrics(addr string, ag *provision.Agent) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	reg := metrics.New()
	metrics.NewProvisioner(reg, ag.Probe)
	reg.SetReady(func() (bool, string) {
		if up, _ := ag.Probe(); up {
			return true, ""
		}
		return false, "not connected to the controller"
	})
	stop, bound, err := reg.Serve(addr)
	if err != nil {
		return nil, err
	}
	slog.Info("serving metrics", "addr", bound.String(), "paths", "/metrics /healthz /readyz")
	return stop, nil
}

// grpcLink is a provisioner daemon's link to the controller: the leader
// among the candidates, found as a worker finds it (a standby's answer
// names the leader; an unreachable candidate sends it to the next).
type grpcLink struct {
	cands []string
	opts  []grpc.DialOption

	mu      sync.Mutex
	target  string
	next    int
	clients map[string]*grpc.ClientConn
}

func (l *grpcLink) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, cc := range l.clients {
		cc.Close()
	}
}

func (l *grpcLink) client(addr string) (grpcapi.ClusterClient, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients == nil {
		l.clients = map[string]*grpc.ClientConn{}
	}
	cc := l.clients[addr]
	if cc == nil {
		var err error
		if cc, err = grpc.NewClient(addr, l.opts...); err != nil {
			return nil, fmt.Errorf("controller %s: %w", addr, err)
		}
		l.clients[addr] = cc
	}
	return grpcapi.NewClusterClient(cc), nil
}

// do calls f on the leader: a standby's redirect is followed, and a
// candidate that does not answer gives way to the next, each at most
// once a call.
func do[T any](ctx context.Context, l *grpcLink, f func(grpcapi.ClusterClient) (T, error)) (T, error) {
	var zero T
	var err error
	for range 2*len(l.cands) + 1 {
		l.mu.Lock()
		if l.target == "" {
			l.target = l.cands[l.next%len(l.cands)]
			l.next++
		}
		target := l.target
		l.mu.Unlock()
		cl, cerr := l.client(target)
		if cerr != nil {
			return zero, cerr
		}
		var r T
		r, err = f(cl)
		if err == nil {
			return r, nil
		}
		if ctx.Err() != nil || clusterauth.IsRefused(err) {
			return zero, err
		}
		leader, standby := grpcapi.LeaderOf(err)
		if !standby && status.Code(err) != codes.Unavailable && status.Code(err) != codes.DeadlineExceeded {
			return zero, err // the leader's answer
		}
		l.mu.Lock()
		switch {
		case standby && leader != "" && leader != target:
			l.target = leader
		default:
			l.target = ""
		}
		l.mu.Unlock()
		if !standby {
			return zero, err // unreachable: the next call tries the next candidate
		}
	}
	return zero, err
}

func (l *grpcLink) Sync(ctx context.Context, req *rpc.ProvisionerSyncRequest) (*rpc.ProvisionerSyncReply, error) {
	return do(ctx, l, func(c grpcapi.ClusterClient) (*rpc.ProvisionerSyncReply, error) { return c.ProvisionerSync(ctx, req) })
}

func (l *grpcLink) Records(ctx context.Context, req *rpc.ProvisionerRecordsRequest) (*rpc.ProvisionerRecordsReply, error) {
	return do(ctx, l, func(c grpcapi.ClusterClient) (*rpc.ProvisionerRecordsReply, error) {
		return c.ProvisionerRecords(ctx, req)
	})
}

func (l *grpcLink) Put(ctx context.Context, req *rpc.ProvisionerPutRequest) (*rpc.ProvisionerPutReply, error) {
	return do(ctx, l, func(c grpcapi.ClusterClient) (*rpc.ProvisionerPutReply, error) { return c.ProvisionerPut(ctx, req) })
}

func (l *grpcLink) Host(ctx context.Context, req *rpc.ProvisionerHostRequest) (*rpc.ProvisionerHostReply, error) {
	return do(ctx, l, func(c grpcapi.ClusterClient) (*rpc.ProvisionerHostReply, error) { return c.ProvisionerHost(ctx, req) })
}
