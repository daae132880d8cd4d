package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"xce/lib/agent"
	"xce/lib/clusterauth"
	"xce/lib/controller"
	"xce/lib/logging"
)

type workerOptions struct {
	controller   string
	tokenFile    string
	dir          string
	runDir       string
	name         string
	slots        int
	instance     string
	loadInterval time.Duration
	log          logging.Options
	metrics      string
}

// workerCommand is `xced worker`: the worker agent of this execution host
// (lib/agent), connected to the controller at --controller, and the
// credential socket WDIR/xced.sock of the host's commands.
func workerCommand() *cobra.Command {
	var o workerOptions
	cmd := &cobra.Command{
		Use:   "worker --controller HOST:PORT[,HOST:PORT...] --token-file FILE --dir WDIR [--name HOSTNAME] [--slots N]",
		Short: "Run the jobs the controller sends to this host (an execution host's worker)",
		Long: `Run the jobs the controller sends to this host (an execution host's worker).

--controller names the controller's --listen address, or the addresses of
all the controller candidates of a highly available cluster, comma-separated:
the worker registers with the leader, following a standby's redirect, and
finds the next leader when the one it has goes away.

The worker also serves WDIR/xced.sock, where the commands run on this host
(bsub, bjobs, ...) with XCE_DIR=WDIR get the proofs that let them reach the
controller over TCP as their own user: set XCE_CONTROLLERS (or
LSF_MASTER_LIST in lsf.conf) to the controllers' HOST:PORT list on this
host. The socket mints those proofs for the uid and gid of its caller only,
and serves nothing else; it is open to every user when the worker runs as
root, else to the worker's own user.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runWorker(o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.controller, "controller", "", "the controller's HOST:PORT (xced --listen), or the candidates' HOST:PORT list, comma-separated")
	f.StringVar(&o.tokenFile, "token-file", "", "the cluster token (the controller's DIR/cluster.token)")
	f.StringVar(&o.dir, "dir", "", "the worker's directory: its jobs' files are under DIR/jobs")
	f.StringVar(&o.runDir, "run-dir", "", runDirHelp)
	f.StringVar(&o.name, "name", "", "the host's name in the cluster (default: this host's name)")
	f.IntVar(&o.slots, "slots", 0, "job slots of this host (default: its CPUs)")
	f.StringVar(&o.instance, "instance", "", "the provider's instance this host is (set by the provisioner that started it)")
	f.DurationVar(&o.loadInterval, "load-interval", 5*time.Second, "how often the host's load and its jobs' usage are sent")
	logFlags(f, &o.log)
	f.StringVar(&o.metrics, "metrics", "", "serve the worker's Prometheus metrics at http://HOST:PORT/metrics, and /healthz and /readyz")
	for _, name := range []string{"controller", "token-file", "dir"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

// startAgent is the start of a daemon that joins a controller (a worker,
// a provisioner): its logging set up, its cluster token loaded, and its
// directory made absolute and prepared, 0711 (a worker's jobs' users
// reach their job directories through it, a local provider's workers
// theirs).
func startAgent(log logging.Options, tokenFile, dir string) (clusterauth.Token, string, error) {
	if err := logging.Setup(os.Stderr, log); err != nil {
		return clusterauth.Token{}, "", err
	}
	tok, err := clusterauth.LoadToken(tokenFile)
	if err != nil {
		return clusterauth.Token{}, "", err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return clusterauth.Token{}, "", err
	}
	if err := prepareDir(dir, 0o711); err != nil {
		return clusterauth.Token{}, "", err
	}
	return tok, dir, nil
}

// runWorker runs the agent until SIGINT or SIGTERM; the jobs keep
// running, and a worker started again finds them through the controller.
func runWorker(o workerOptions) error {
	tok, dir, err := startAgent(o.log, o.tokenFile, o.dir)
	if err != nil {
		return err
	}
	lock, err := lockStateDir(dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := checkWorkerFormat(dir); err != nil {
		return err
	}
	// The jobs do not need the socket: without it (a path too long for a
	// socket, say) the worker runs, and the host's commands cannot reach
	// the controller over TCP.
	sock, stopCreds, err := serveCredentials(dir, tok)
	if err != nil {
		slog.Warn("no credential socket for the host's commands", "err", err)
		sock = "(none)"
	} else {
		defer stopCreds()
	}
	name := o.name
	if name == "" {
		name = shortHostname()
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	sd := newNotifier()
	go func() {
		<-ctx.Done()
		slog.Info("stopping; running jobs keep running and are picked up when the worker is back")
		sd.Stopping()
	}()
	probe := &agent.Probe{}
	stopMetrics, err := startWorkerMetrics(o.metrics, probe)
	if err != nil {
		return err
	}
	defer stopMetrics()
	fmt.Fprintf(os.Stderr, "xced worker: host %s, controller %s, jobs under %s, commands' credentials at %s\n", name, o.controller, jobsDir(o.runDir, dir), sock)
	return agent.Run(ctx, agent.Config{
		Controller:   o.controller,
		DialOptions:  []grpc.DialOption{workerCredentials(tok)},
		Host:         name,
		Slots:        o.slots,
		RunDir:       jobsDir(o.runDir, dir),
		Shepherd:     shepherdCommand(self),
		Version:      controller.Version,
		Instance:     o.instance,
		LoadInterval: o.loadInterval,
		Fatal:        workerRefused,
		Registered:   sd.Ready, // systemd: ready once a controller has it
		Alive:        sd.Alive,
		Probe:        probe,
	})
}

// shortHostname is this host's name without its domain.
func shortHostname() string {
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	return host
}
