// Command xced is the XCE controller. With no arguments it is the
// single-host default: a controller with an embedded worker for this host,
// its state in a per-user directory (the system one for root), and a
// default queue `normal`. `xced --dir DIR` keeps everything under DIR.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"xce/lib/client"
	"xce/lib/config"
	"xce/lib/controller"
	"xce/lib/exec"
	"xce/lib/gpu"
	"xce/lib/logging"
	"xce/lib/lsfenv"
	"xce/lib/store"
	"xce/lib/version"
	"xce/lib/worker"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == exec.TaskArg {
		os.Exit(exec.TaskMain()) // a blaunch task, as its user (lib/worker/task.go)
	}
	if len(os.Args) > 1 && os.Args[1] == exec.RlimitArg {
		// xced standing in for xce-shepherd: a job's limits, then the job.
		os.Exit(exec.RlimitMain(os.Args[2:]))
	}
	code := run()
	if code == 0 && restartWritable.Load() {
		if err := reexec(); err != nil {
			fmt.Fprintln(os.Stderr, "xced: start again writable:", err)
			code = 1
		}
	}
	os.Exit(code)
}

type options struct {
	dir               string
	runDir            string
	configFile        string
	slots             int
	cluster           string
	cleanPeriod       time.Duration
	runlimitGrace     time.Duration
	terminateInterval time.Duration
	log               logging.Options
	minFreeMB         uint64
	diskCheck         time.Duration
	listen            string
	metrics           string
}

func run() int {
	var o options
	root := &cobra.Command{
		Use:           "xced",
		Short:         "The XCE controller: keeps the cluster's state, schedules jobs and runs them",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(*cobra.Command, []string) error { return serve(o) },
		Version:       version.Banner(),
	}
	root.SetVersionTemplate("{{.Version}}")
	f := root.Flags()
	f.BoolP("version", "V", false, "print the version and exit")
	f.StringVar(&o.dir, "dir", "", "keep all state and the socket under this directory (default: "+client.DefaultDir()+")")
	f.IntVar(&o.slots, "slots", 0, "job slots of this host (default: its CPUs)")
	f.StringVar(&o.runDir, "run-dir", "", runDirHelp)
	f.StringVar(&o.configFile, "config", "", "the cluster's configuration (xce.toml); without it, the single-host default")
	f.StringVar(&o.cluster, "cluster", "", "cluster name (overrides the configuration's)")
	f.DurationVar(&o.cleanPeriod, "clean-period", 0, "how long finished jobs stay visible (CLEAN_PERIOD; overrides the configuration's)")
	f.DurationVar(&o.runlimitGrace, "runlimit-grace", 10*time.Minute, "after a run limit's SIGUSR2, how long before SIGKILL")
	f.DurationVar(&o.terminateInterval, "terminate-interval", 10*time.Second, "time between bkill's SIGINT, SIGTERM and SIGKILL (JOB_TERMINATE_INTERVAL)")
	logFlags(f, &o.log)
	f.StringVar(&o.metrics, "metrics", "", "serve Prometheus metrics at http://HOST:PORT/metrics, and /healthz and /readyz (overrides [cluster] metrics_listen)")
	f.StringVar(&o.listen, "listen", "", "serve the workers of other hosts on this TCP address (HOST:PORT); writes DIR/cluster.token on first start")
	f.Uint64Var(&o.minFreeMB, "min-free", store.DefaultMinFree>>20, "MB the disk holding the store keeps free: below it submissions are refused and xced starts read-only")
	f.DurationVar(&o.diskCheck, "disk-check-interval", 30*time.Second, "read-only below the free-space floor: how often xced looks whether space is back")
	f.MarkHidden("disk-check-interval")
	configCmd := &cobra.Command{Use: "config", Short: "Work with xce.toml"}
	configCmd.AddCommand(&cobra.Command{
		Use:   "check FILE",
		Short: "Validate a configuration file and print the effective configuration",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errors.New("name the configuration file to check: xced config check FILE (the file xced is started with, --config FILE)")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := config.Load(args[0])
			if err != nil {
				return err
			}
			for _, w := range cfg.ContainerWarnings() {
				fmt.Fprintln(os.Stderr, "warning: "+w)
			}
			fmt.Print(cfg.Effective())
			return nil
		},
	})
	configCmd.AddCommand(importLSFCommand())
	root.AddCommand(configCmd)
	root.AddCommand(storeCommand())
	root.AddCommand(simulateCommand())
	root.AddCommand(workerCommand())
	root.AddCommand(provisionerCommand())
	root.AddCommand(&cobra.Command{
		Use:    "shepherd LAUNCHFILE",
		Short:  "Run one job to its end (started by xced, not by hand)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		Run: func(_ *cobra.Command, args []string) {
			os.Exit(exec.ShepherdMain(args[0]))
		},
	})
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "xced:", err)
		return 1
	}
	return 0
}

func serve(o options) error {
	if err := logging.Setup(os.Stderr, o.log); err != nil {
		return err
	}
	// The controller's heap is mostly long-lived job records: collecting
	// at +50% rather than +100% keeps its size close to what it holds, for
	// little extra CPU. GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	defer startReleaser()()
	dir := o.dir
	if dir == "" {
		dir = client.DefaultDir()
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := prepareStateDir(dir); err != nil {
		return err
	}
	stopProfile, err := startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	lock, err := lockStateDir(dir)
	if err != nil {
		return err
	}
	defer lock.Close()

	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	ncpu := runtime.NumCPU()
	slots := o.slots
	if slots <= 0 {
		slots = ncpu
	}
	cfg := config.Default(host, slots)
	if o.configFile != "" {
		if cfg, err = config.Load(o.configFile); err != nil {
			return err
		}
		for _, w := range cfg.ContainerWarnings() {
			slog.Warn(w)
		}
		// The host this controller runs jobs on: its slots come from the
		// configuration when it names this host.
		if h := cfg.Hosts[host]; h != nil && h.Slots > 0 && o.slots <= 0 {
			slots = h.Slots
		}
	}
	o.override(cfg)
	// Served from before the state is restored: /healthz answers while
	// a large store loads, /readyz only once the controller is whole.
	mx, err := startMetrics(cmp.Or(o.metrics, cfg.Cluster.MetricsListen))
	if err != nil {
		return err
	}
	defer mx.close()
	self, err := os.Executable()
	if err != nil {
		return err
	}

	// An LSF environment directory for tools and workflow managers that
	// read $LSF_ENVDIR/lsf.conf (LSF_UNIT_FOR_LIMITS and friends). With
	// controller candidates, LSF_MASTER_LIST names them, so that commands
	// find the leader.
	if err := lsfenv.WriteDefaultUnit(filepath.Join(dir, "conf"), cfg.Cluster.Name, host, cfg.Cluster.Controllers, cmp.Or(cfg.Cluster.UnitForLimits, "MB")); err != nil {
		slog.Warn("LSF environment directory not written", "err", err)
	}

	// A full disk is said, not crashed on (Badger maps its logs).
	dbDir := filepath.Join(dir, "db")
	minFree := o.minFreeMB << 20
	// Below the floor it starts read-only: queries answer and the ends of
	// the jobs that run are recorded, nothing new is taken (lowering
	// --min-free instead would let Badger's compactions fill the disk).
	open := store.Open
	var full *store.SpaceError
	if err := store.OpenCheckSpace(dbDir, minFree); errors.As(err, &full) {
		slog.Warn("the disk holding the store is below its free-space floor: xced runs read-only (no submissions, no dispatch) until space is freed on that disk; it then restarts by itself",
			"dir", dir, "free_mb", full.Free>>20, "need_mb", full.Need>>20)
		open = store.OpenLowSpace
	} else if err != nil {
		return err
	}
	if len(cfg.Cluster.Controllers) > 0 {
		// A candidate's store follows the replicated log, which is
		// the durable record: its commits are not synced.
		lowSpace := full != nil
		open = func(dir string) (*store.Store, error) { return store.OpenReplica(dir, lowSpace) }
	}
	st, err := open(dbDir)
	if err != nil {
		if errors.As(err, &full) {
			return fmt.Errorf("%w: even read-only, xced needs that much to replay the store's log; free space on that disk and start xced again", err)
		}
		return err
	}
	defer st.Close()
	st.SetMinFree(minFree)
	sd := newNotifier()
	if mx.m != nil {
		mx.m.SetStore(st)
	}
	if len(cfg.Cluster.Controllers) > 0 {
		return serveCandidate(o, cfg, dir, host, slots, ncpu, st, sd, mx)
	}

	// The worker starts before the controller exists (the controller
	// reattaches running jobs through it), and a job that ended while
	// xced was down reports at once: its reports wait at the gate until
	// the controller is whole.
	gate := &reportGate{}
	// This host runs jobs unless its host entry says it is not a server
	// (a controller that only schedules for remote workers).
	var local controller.Executor
	if hc := cfg.Hosts[host]; hc == nil || hc.IsServer() {
		w, err := worker.New(worker.Config{
			Host:              host,
			ClusterName:       cfg.Cluster.Name,
			ClusterAdmin:      controller.PrimaryAdmin(cfg),
			RunDir:            jobsDir(o.runDir, dir),
			Shepherd:          shepherdCommand(self),
			KillGrace:         o.runlimitGrace,
			TerminateInterval: o.terminateInterval,
			MemlimitEnforce:   cfg.Cluster.MemlimitEnforce,
			JobMemlimit:       cfg.Cluster.JobMemlimit,
			StdoutDirect:      cfg.Cluster.StdoutDirect,
			// Spooled output keeps twice the store's floor free.
			SpoolReserve: 2 * max(minFree, store.DefaultMinFree),
			Report:       gate.Report,
		})
		if err != nil {
			return err
		}
		defer w.Close() // its empty cgroup directories
		local = w
	}
	start := time.Now()
	gpuCtx, stopGPUs := context.WithCancel(context.Background())
	defer stopGPUs()
	var gpus *gpu.Tracker
	if local != nil {
		gpus = gpu.NewTracker(gpuCtx, gpu.Options{}, 0)
	}
	ccfg := controller.Config{
		Host:        host,
		Slots:       slots,
		NCPUs:       ncpu,
		MaxMemKB:    totalMemKB(),
		Cluster:     cfg,
		ClusterFile: o.configFile,
		AdminUIDs:   []uint32{uint32(os.Geteuid())},
		StateDir:    dir,

		TerminateInterval: o.terminateInterval, // for bparams and the workers
		KillGrace:         o.runlimitGrace,
		Workers:           o.listen != "",
		GPUs:              gpus,
		Alive:             sd.Alive,
	}
	mx.hook(&ccfg)
	ctl, err := controller.New(ccfg, st, local)
	if err != nil {
		return err
	}
	mx.setController(ctl)
	defer mx.setController(nil)
	gate.open(ctl)
	if w, ok := local.(*worker.Worker); ok {
		w.SetTaskRelay(ctl.LocalTaskRelay()) // blaunch's tasks on the other hosts
		w.SetTermLink(ctl.LocalTermLink())   // interactive jobs of bsubs it cannot dial
		go w.SweepContainers()               // containers no job runs any more (lib/worker's sweep.go)
	}
	slog.Info("state restored", "dir", dir, "took", time.Since(start).Round(time.Millisecond))
	stopAdmin, err := serveAdmin(dir, st)
	if err != nil {
		return err
	}
	defer stopAdmin()

	sock := filepath.Join(dir, client.SocketName)
	ln, err := listenSocket(sock)
	if err != nil {
		return err
	}
	srv := controller.NewServer(ctl)
	if o.listen != "" {
		stop, err := serveWorkers(o.listen, dir, host, &cfg.Cluster, ctl)
		if err != nil {
			return err
		}
		defer stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The loop ends before the store closes, whatever way serve returns.
	ran := make(chan struct{})
	go func() { ctl.Run(ctx); close(ran) }()
	defer func() { cancel(); <-ran }()
	stopSupply, err := startProvisioner(cfg, ctl, st, dir, self, workerAddrs(cfg, o.listen), "xced@"+host)
	if err != nil {
		return err
	}
	defer stopSupply()

	// SIGHUP reloads the configuration, as badmin reconfig does.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			if notes, err := ctl.Reconfig(controller.Caller{UID: 0}, false); err != nil {
				slog.Error("reconfiguration refused; the old configuration stays", "err", err)
			} else {
				slog.Info("reconfigured on SIGHUP", "changes", notes)
			}
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sigs
		slog.Info("stopping; running jobs keep running and are picked up at the next start", "signal", s)
		sd.Stopping()
		cancel()
		done := make(chan struct{})
		go func() { srv.GracefulStop(); close(done) }()
		ctl.EndStreams() // bwait and xcetop reconnect to the next xced
		select {
		case <-done:
		case <-time.After(callGrace):
			srv.Stop()
		}
	}()
	if st.LowSpace() {
		stopWatch := make(chan struct{})
		defer close(stopWatch)
		go watchSpace(dbDir, minFree, o.diskCheck, stopWatch)
	}
	slog.Info("xced ready", "socket", sock, "host", host, "slots", slots, "cluster", cfg.Cluster.Name, "config", o.configFile)
	if o.dir != "" {
		fmt.Fprintf(os.Stderr, "xced: listening on %s; point the commands at it with XCE_DIR=%s\n", sock, dir)
	} else {
		fmt.Fprintf(os.Stderr, "xced: listening on %s\n", sock)
	}
	// The store is open, the state restored and the socket listening
	// (connections queue until Serve takes them).
	sd.Ready()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	os.Remove(sock)
	return ctl.Close()
}

// listenSocket listens on the commands' Unix socket. Anyone may connect
// where root runs xced: the controller knows each caller by its uid.
func listenSocket(sock string) (net.Listener, error) {
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", sock, err)
	}
	mode := os.FileMode(0o600)
	if os.Geteuid() == 0 {
		mode = 0o666
	}
	if err := os.Chmod(sock, mode); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// override applies the command line's settings over the configuration's.
func (o options) override(cfg *config.Config) {
	if o.cluster != "" {
		cfg.Cluster.Name = o.cluster
	}
	if o.cleanPeriod > 0 {
		cfg.Cluster.CleanPeriod = config.Duration(o.cleanPeriod / time.Second)
	}
}

// shepherdCommand is what runs one job: the small xce-shepherd next to
// xced when it is there (it starts several times faster), else xced itself.
// runDirHelp is the --run-dir flag's help, xced's and xced worker's.
const runDirHelp = "keep the jobs' directories here (default DIR/jobs): their records, sockets and spooled output; a tmpfs, on a path only root can change, takes the disk out of a short job's path"

// jobsDir is where the worker keeps its jobs' directories: runDir (made
// absolute) when set, else DIR/jobs.
func jobsDir(runDir, dir string) string {
	if runDir == "" {
		return filepath.Join(dir, "jobs")
	}
	if abs, err := filepath.Abs(runDir); err == nil {
		return abs
	}
	return runDir
}

func shepherdCommand(self string) []string {
	small := filepath.Join(filepath.Dir(self), "xce-shepherd")
	if fi, err := os.Stat(small); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return []string{small}
	}
	return []string{self, "shepherd"}
}

// logFlags are the daemons' logging flags.
func logFlags(f *pflag.FlagSet, o *logging.Options) {
	f.StringVar(&o.Level, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&o.Format, "log-format", "text", "text (key=value) or json, one record a line")
}

func totalMemKB() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit) / 1024
}
