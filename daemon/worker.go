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
	"xce/lib/controller"
)

type workerOptions struct {
	controller   string
	tokenFile    string
	dir          string
	name         string
	slots        int
	loadInterval time.Duration
	logLevel     string
}

// workerCommand is `xced worker`: the worker agent of this execution host
// (lib/agent), connected to the controller at --controller.
func workerCommand() *cobra.Command {
	var o workerOptions
	cmd := &cobra.Command{
		Use:   "worker --controller HOST:PORT --token-file FILE --dir WDIR [--name HOSTNAME] [--slots N]",
		Short: "Run the jobs the controller sends to this host (an execution host's worker)",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return runWorker(o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.controller, "controller", "", "the controller's HOST:PORT (xced --listen)")
	f.StringVar(&o.tokenFile, "token-file", "", "the cluster token (the controller's DIR/cluster.token)")
	f.StringVar(&o.dir, "dir", "", "the worker's directory: its jobs' files are under DIR/jobs")
	f.StringVar(&o.name, "name", "", "the host's name in the cluster (default: this host's name)")
	f.IntVar(&o.slots, "slots", 0, "job slots of this host (default: its CPUs)")
	f.DurationVar(&o.loadInterval, "load-interval", 5*time.Second, "how often the host's load and its jobs' usage are sent")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	for _, name := range []string{"controller", "token-file", "dir"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

// runWorker runs the agent until SIGINT or SIGTERM; the jobs keep
// running, and a worker started again finds them through the controller.
func runWorker(o workerOptions) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	creds, err := workerCredentials(o.tokenFile)
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	// 0711: the jobs' users reach their job directories through it.
	if err := prepareDir(dir, 0o711); err != nil {
		return err
	}
	lock, err := lockStateDir(dir)
	if err != nil {
		return err
	}
	defer lock.Close()
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
	go func() {
		<-ctx.Done()
		slog.Info("stopping; running jobs keep running and are picked up when the worker is back")
	}()
	fmt.Fprintf(os.Stderr, "xced worker: host %s, controller %s, jobs under %s\n", name, o.controller, filepath.Join(dir, "jobs"))
	return agent.Run(ctx, agent.Config{
		Controller:   o.controller,
		DialOptions:  []grpc.DialOption{creds},
		Host:         name,
		Slots:        o.slots,
		RunDir:       filepath.Join(dir, "jobs"),
		Shepherd:     shepherdCommand(self),
		Version:      controller.Version,
		LoadInterval: o.loadInterval,
		Fatal:        workerRefused,
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
