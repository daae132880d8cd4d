// Command gentrace writes a synthetic workload trace in the Standard
// Workload Format, drawn from the Lublin–Feitelson model (lib/trace/lublin),
// for `xced simulate --trace`:
//
//	go run ./tools/gentrace -jobs 10000 -procs 256 -seed 1 > examples/lublin-10k-256.swf
//
// The same flags give the same bytes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"xce/lib/trace"
	"xce/lib/trace/lublin"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("gentrace", flag.ContinueOnError)
	jobs := fs.Int("jobs", 10000, "jobs to generate")
	procs := fs.Int("procs", 256, "processors of the machine (the largest job)")
	seed := fs.Uint64("seed", 1, "random seed")
	model := fs.String("model", "whole", "the published fit to use: whole (all jobs), batch or interactive")
	estimate := fs.Float64("estimate", 0, "when > 0, give each job a requested time (-W) of this many times its run time, rounded up to a minute (not part of the model)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	params, ok := map[string]lublin.Params{"whole": lublin.WholeSample, "batch": lublin.Batch, "interactive": lublin.Interactive}[*model]
	if !ok || *jobs < 0 || *procs < 1 || *estimate < 0 {
		return fmt.Errorf("-model is whole, batch or interactive; -jobs >= 0; -procs >= 1; -estimate >= 0")
	}
	js := params.Generate(*jobs, *procs, *seed)
	if *estimate > 0 {
		for i := range js {
			w := time.Duration(float64(js[i].Run) * *estimate)
			js[i].Limit = (w + time.Minute - 1).Truncate(time.Minute)
		}
	}
	cmd := fmt.Sprintf("gentrace -jobs %d -procs %d -seed %d -model %s", *jobs, *procs, *seed, *model)
	if *estimate > 0 {
		cmd += " -estimate " + strconv.FormatFloat(*estimate, 'g', -1, 64)
	}
	header := map[string]string{
		"Version":    "2.2",
		"Computer":   "synthetic",
		"Conversion": cmd,
		"Note":       "Lublin-Feitelson workload model (JPDC 63(11), 2003); times in seconds from midnight of day 0",
		"MaxJobs":    strconv.Itoa(*jobs),
		"MaxRecords": strconv.Itoa(*jobs),
		"MaxNodes":   strconv.Itoa(*procs),
		"MaxProcs":   strconv.Itoa(*procs),
		"MaxQueues":  "1",
	}
	w := bufio.NewWriter(out)
	if err := trace.WriteSWF(w, header, js); err != nil {
		return err
	}
	return w.Flush()
}
