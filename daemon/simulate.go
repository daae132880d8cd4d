package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"xce/lib/config"
	"xce/lib/sim"
	"xce/lib/trace"
)

// simulateCommand is `xced simulate`: a workload trace replayed through
// the scheduler on a virtual clock (lib/sim).
func simulateCommand() *cobra.Command {
	var o struct {
		trace, format, config, hosts, out, compare string
		rsvs                                       string
		claims                                     string
		cycle, until                               time.Duration
	}
	cmd := &cobra.Command{
		Use:   "simulate --trace FILE",
		Short: "Replay a workload trace through the scheduler on a virtual clock",
		Long: "Replay a workload trace (SWF, XCE's accounting log, LSF's lsb.acct) through XCE's own scheduling code " +
			"on a virtual clock, and report waits, slowdown and utilisation per queue and per user.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if o.trace == "" {
				return errors.New("name the trace: --trace FILE")
			}
			tr, err := trace.Read(o.trace, trace.Format(o.format))
			if err != nil {
				return err
			}
			for _, p := range tr.Malformed {
				fmt.Fprintf(os.Stderr, "xced simulate: %s (skipped)\n", p)
			}
			opt := sim.Options{Cycle: o.cycle, Until: o.until,
				Warn: func(s string) { fmt.Fprintln(os.Stderr, "xced simulate: warning:", s) }}
			if o.hosts != "" {
				if opt.Hosts, opt.Slots, err = parseHosts(o.hosts); err != nil {
					return err
				}
			}
			if o.config != "" {
				if opt.Config, err = config.Load(o.config); err != nil {
					return err
				}
			}
			if o.rsvs != "" {
				if opt.RsvRequests, err = sim.ReadReservations(o.rsvs); err != nil {
					return err
				}
			}
			if o.claims != "" {
				if opt.ClaimRequests, err = sim.ReadClaims(o.claims); err != nil {
					return err
				}
			}
			if opt.Hosts == 0 && opt.Config == nil {
				n := tr.MaxProcs()
				if n == 0 {
					return fmt.Errorf("%s: the trace does not say how many processors its machine had (no MaxProcs in its header): give --hosts N[xSLOTS] or --config", o.trace)
				}
				opt.Hosts, opt.Slots = n, 1
			}
			start := time.Now()
			res, err := sim.Run(tr, opt)
			if err != nil {
				return err
			}
			sum := sim.Summarise(res)
			if o.compare == "" {
				sum.WriteText(os.Stdout)
				if o.out != "" {
					if err := sim.WriteFiles(o.out, res, sum); err != nil {
						return err
					}
				}
				speed(res.Clock, time.Since(start))
				return nil
			}
			other, err := config.Load(o.compare)
			if err != nil {
				return err
			}
			opt2 := opt
			opt2.Config = other
			opt2.Warn = nil // the same trace warns the same
			res2, err := sim.Run(tr, opt2)
			if err != nil {
				return fmt.Errorf("%s: %w", o.compare, err)
			}
			sum2 := sim.Summarise(res2)
			nameA := "default"
			if o.config != "" {
				nameA = filepath.Base(o.config)
			}
			sim.WriteCompare(os.Stdout, nameA, filepath.Base(o.compare), sum, sum2)
			if o.out != "" {
				if err := sim.WriteFiles(filepath.Join(o.out, "a"), res, sum); err != nil {
					return err
				}
				if err := sim.WriteFiles(filepath.Join(o.out, "b"), res2, sum2); err != nil {
					return err
				}
			}
			speed(res.Clock+res2.Clock, time.Since(start))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.trace, "trace", "", "the workload trace to replay")
	f.StringVar(&o.format, "trace-format", "", "the trace's format: swf, acct or lsbacct (default: from the file's content)")
	f.StringVar(&o.config, "config", "", "the cluster's configuration (xce.toml): queues, limits, fairshare, and its hosts unless --hosts")
	f.StringVar(&o.hosts, "hosts", "", "N[xSLOTS]: N identical hosts of SLOTS slots (default 1), with memory for any job")
	f.StringVar(&o.out, "out", "", "write DIR/jobs.csv and DIR/summary.json (with --compare: DIR/a and DIR/b)")
	f.DurationVar(&o.cycle, "cycle", 0, "run the scheduling cycle at this fixed interval (default: at each submission and job end)")
	f.DurationVar(&o.until, "until", 0, "stop the virtual clock this long after the trace's start")
	f.StringVar(&o.rsvs, "reservations", "", "advance reservations to hold during the replay (a TOML file of [[reservation]] tables; see xced-simulate(8))")
	f.StringVar(&o.claims, "claims", "", "standalone claims to hold during the replay (a TOML file of [[claim]] tables; see xced-simulate(8))")
	f.StringVar(&o.compare, "compare", "", "also run with this configuration and show both side by side with the difference")
	return cmd
}

// speed prints the one figure that differs between runs of the same
// input; it never goes into the files.
func speed(simulated, wall time.Duration) {
	fmt.Printf("\nSpeed:          %.0f simulated seconds per wall second\n", simulated.Seconds()/max(wall.Seconds(), 1e-9))
}

// parseHosts reads --hosts N[xSLOTS].
func parseHosts(s string) (hosts, slots int, err error) {
	n, sl, found := strings.Cut(s, "x")
	hosts, err = strconv.Atoi(n)
	if err != nil || hosts <= 0 {
		return 0, 0, fmt.Errorf("--hosts %s: want N[xSLOTS], such as 256 or 64x4", s)
	}
	slots = 1
	if found {
		if slots, err = strconv.Atoi(sl); err != nil || slots <= 0 {
			return 0, 0, fmt.Errorf("--hosts %s: want N[xSLOTS], such as 256 or 64x4", s)
		}
	}
	return hosts, slots, nil
}
